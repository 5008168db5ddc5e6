#include "checks/Registry.h"

#include "checks/CollectiveNotReachedCheck.h"
#include "checks/DoubleNormalizationCheck.h"
#include "checks/UncompensatedMeanCheck.h"
#include "checks/UnguardedReducedCountDivisionCheck.h"

namespace collcheck::lint {

std::vector<std::unique_ptr<Check>> makeChecks() {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(std::make_unique<CollectiveNotReachedCheck>());
  checks.push_back(std::make_unique<DoubleNormalizationCheck>());
  checks.push_back(std::make_unique<UncompensatedMeanCheck>());
  checks.push_back(std::make_unique<UnguardedReducedCountDivisionCheck>());
  return checks;
}

} // namespace collcheck::lint
