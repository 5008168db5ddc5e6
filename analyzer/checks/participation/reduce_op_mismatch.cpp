// reduce-op-mismatch: the same reduction with different reduction operators across ranks.
#include "analyzer/checks/participation/field_mismatch.h"

namespace collcheck::analyzer {
namespace {

class ReduceOpMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "reduce-op-mismatch"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    reportFieldMismatch(e, ctx, id(), kFieldOp,
                        "each rank's operator is applied to its own contribution: the result "
                        "depends on which rank's operator the library uses where");
  }
};

} // namespace

std::unique_ptr<TraceRule> makeReduceOpMismatchRule() {
  return std::make_unique<ReduceOpMismatch>();
}

} // namespace collcheck::analyzer
