// The first pass of a whole-project run: every translation unit of the compilation database is
// summarised (engine/Summary.h), so that each file is then checked knowing what the functions it
// calls in other files do. A translation unit's summary is cached by the content of every file it
// read (the source and each header), its compile command, the config and the lint's version: a
// review run over a few changed files re-parses only the translation units those changes reach.
#pragma once

#include "engine/Summary.h"
#include "support/Config.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"

#include <string>
#include <vector>

namespace collcheck::lint {

struct SummaryPassOptions {
  std::string cacheDir;  // empty: no cache
  std::string configKey; // what of the config the summaries depend on (its text)
  std::vector<clang::tooling::ArgumentsAdjuster> adjusters;
};

struct SummaryPassStats {
  size_t files = 0, fromCache = 0, parsed = 0, notCompiling = 0;
  double seconds = 0;
};

// Summarises `files` (source files of `database`) into `out`. Files that do not compile are
// summarised as far as they parsed; their errors are for the check of the file itself to report.
void summariseProject(const clang::tooling::CompilationDatabase &database,
                      const std::vector<std::string> &files, const LintConfig &config,
                      const SummaryPassOptions &options, ProjectSummaries &out,
                      SummaryPassStats &stats);

// The default cache: $XDG_CACHE_HOME/collcheck-lint, else ~/.cache/collcheck-lint.
std::string defaultSummaryCache();

} // namespace collcheck::lint
