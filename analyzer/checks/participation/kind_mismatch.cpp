// kind-mismatch: ranks issued different collectives (or blocking against non-blocking) at the
// same position of a communicator.
#include "analyzer/checks/participation/field_mismatch.h"

namespace collcheck::analyzer {
namespace {

class KindMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "kind-mismatch"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    reportFieldMismatch(e, ctx, id(), kFieldKind,
                        "MPI and NCCL pair collectives by position, not by name: these calls were "
                        "matched with each other (blocking and non-blocking forms never match)");
  }
};

} // namespace

std::unique_ptr<TraceRule> makeKindMismatchRule() { return std::make_unique<KindMismatch>(); }

} // namespace collcheck::analyzer
