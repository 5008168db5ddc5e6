// uncompensated-mean: a local mean (divided by this rank's count) reaches a reducer that averages
// over the ranks, so every rank agrees on a gradient that weighs items unequally.
// rules/pages/uncompensated-mean.md
#pragma once

#include "engine/Check.h"

namespace collcheck::lint {

class UncompensatedMeanCheck : public Check {
public:
  UncompensatedMeanCheck() : Check("uncompensated-mean") {}
  void onReduction(const ReductionEvent &event, clang::ASTContext &context,
                   std::vector<Finding> &out) override;
};

} // namespace collcheck::lint
