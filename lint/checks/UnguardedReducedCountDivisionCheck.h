// unguarded-reduced-count-division: a division by the all-reduced count N with nothing ruling out
// N == 0 (a window in which no rank has a valid item).
// rules/pages/unguarded-reduced-count-division.md
#pragma once

#include "engine/Check.h"

namespace collcheck::lint {

class UnguardedReducedCountDivisionCheck : public Check {
public:
  UnguardedReducedCountDivisionCheck() : Check("unguarded-reduced-count-division") {}
  void onDivision(const DivisionEvent &event, clang::ASTContext &context,
                  std::vector<Finding> &out) override;
};

} // namespace collcheck::lint
