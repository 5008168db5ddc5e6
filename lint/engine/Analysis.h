// One translation unit through every enabled check: the entry point shared by collcheck-lint and
// the clang-tidy plugin.
#pragma once

#include "engine/Check.h"
#include "support/Config.h"

#include <memory>
#include <vector>

namespace clang {
class ASTContext;
}

namespace collcheck::lint {

// The lint's checks, one per rule of the catalogue whose checker is lint or both, in rule order.
std::vector<std::unique_ptr<Check>> makeChecks();

// Findings in the main file of `context`, sorted by position, at most one per rule and location.
// Rules disabled by `config` are not run.
std::vector<Finding> analyzeTranslationUnit(clang::ASTContext &context, const LintConfig &config);

} // namespace collcheck::lint
