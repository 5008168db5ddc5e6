// collective-not-reached-by-all-ranks: a collective under a condition that depends on the rank or
// on a rank-local count, so some ranks never issue it.
// rules/pages/collective-not-reached-by-all-ranks.md
#pragma once

#include "engine/Check.h"

namespace collcheck::lint {

class CollectiveNotReachedCheck : public Check {
public:
  CollectiveNotReachedCheck() : Check("collective-not-reached-by-all-ranks") {}
  void onCollective(const CollectiveEvent &event, clang::ASTContext &context,
                    std::vector<Finding> &out) override;
};

} // namespace collcheck::lint
