// One translation unit through every enabled check: the entry point shared by collcheck-lint and
// the clang-tidy plugin.
#pragma once

#include "engine/Check.h"
#include "engine/Summary.h"
#include "support/Config.h"

#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
} // namespace clang

namespace collcheck::lint {

// A function whose analysis failed (a crash inside the walk, contained): it is reported as not
// analysed, and the rest of the translation unit is analysed as usual.
struct NotAnalysed {
  const clang::FunctionDecl *function = nullptr;
  std::string name;
};

// Findings of `checks` (checks/Registry.h) in the main file of `context`, sorted by position, at
// most one per rule and location. Rules disabled by `config` are not run. The functions whose
// analysis failed are added to `failed` when it is given.
std::vector<Finding> analyzeTranslationUnit(clang::ASTContext &context, const LintConfig &config,
                                            std::vector<std::unique_ptr<Check>> checks,
                                            std::vector<NotAnalysed> *failed = nullptr);

// What the functions defined in the main file of `context` do, for their callers in other
// translation units (engine/Summary.h). Each is walked with its parameters unknown; a function
// whose walk fails is left out.
FileSummary summariseTranslationUnit(clang::ASTContext &context, const LintConfig &config);

} // namespace collcheck::lint
