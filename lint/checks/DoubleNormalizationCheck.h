// double-normalization: a value already divided by the all-reduced count N goes through an
// averaging reducer, which divides by P once more. rules/pages/double-normalization.md
#pragma once

#include "engine/Check.h"

namespace collcheck::lint {

class DoubleNormalizationCheck : public Check {
public:
  DoubleNormalizationCheck() : Check("double-normalization") {}
  void onReduction(const ReductionEvent &event, clang::ASTContext &context,
                   std::vector<Finding> &out) override;
};

} // namespace collcheck::lint
