// The lint's checks, one per rule of the catalogue whose checker is lint or both: what
// engine/Analysis.h runs over a translation unit. A new check is added here, with its rule's page
// in rules/pages and its corpus cases.
#pragma once

#include "engine/Check.h"

#include <memory>
#include <vector>

namespace collcheck::lint {

// Every check, in rule order.
std::vector<std::unique_ptr<Check>> makeChecks();

} // namespace collcheck::lint
