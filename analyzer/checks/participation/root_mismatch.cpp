// root-mismatch: a rooted collective (broadcast, reduce, gather, scatter) with different roots.
#include "analyzer/checks/participation/field_mismatch.h"
#include "analyzer/checks/participation/invalid_arguments.h"

namespace collcheck::analyzer {
namespace {

class RootMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "root-mismatch"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    const format::Record *invalid = nullptr;
    if (!e.allMatched &&
        !ranksWith(
             e, [&](const format::Record &r) { return hasInvalidRoot(r, e.comm); }, invalid)
             .empty())
      return; // invalid-root's: a root MPI rejects is no mismatch to weigh
    reportFieldMismatch(e, ctx, id(), kFieldRoot,
                        "the ranks disagree on who sends (or receives) the data: part of them "
                        "wait for a root that does not send to them");
  }
};

} // namespace

std::unique_ptr<TraceRule> makeRootMismatchRule() { return std::make_unique<RootMismatch>(); }

} // namespace collcheck::analyzer
