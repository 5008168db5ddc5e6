// premulsum-scalar-mismatch: PreMulSum reductions whose scalars differ across ranks.
#include "analyzer/checks/participation/field_mismatch.h"

namespace collcheck::analyzer {
namespace {

class PremulsumScalarMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "premulsum-scalar-mismatch"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    reportFieldMismatch(e, ctx, id(), kFieldScalar,
                        "legal when each rank deliberately weights its contribution (e.g. by "
                        "P*n_r/N); a bug when one scalar such as 1/P was meant for all ranks");
  }
};

} // namespace

std::unique_ptr<TraceRule> makePremulsumScalarMismatchRule() {
  return std::make_unique<PremulsumScalarMismatch>();
}

} // namespace collcheck::analyzer
