// root-mismatch: a rooted collective (broadcast, reduce, gather, scatter) with different roots.
#include "field_mismatch.h"

namespace collcheck::analyzer {
namespace {

class RootMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "root-mismatch"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    reportFieldMismatch(e, ctx, id(), kFieldRoot,
                        "the ranks disagree on who sends (or receives) the data: part of them "
                        "wait for a root that does not send to them");
  }
};

} // namespace

std::unique_ptr<TraceRule> makeRootMismatchRule() { return std::make_unique<RootMismatch>(); }

} // namespace collcheck::analyzer
