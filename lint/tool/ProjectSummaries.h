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

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace clang {
class SourceManager;
}

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

// The summaries cached on disk, one entry per translation unit, checked against the content of
// every file it read.
class FileHashes;
class SummaryCache {
public:
  SummaryCache(const clang::tooling::CompilationDatabase &database,
               const SummaryPassOptions &options);
  ~SummaryCache();
  // The cached summary of `file`, when every file it read is as it was.
  bool lookup(const std::string &file, FileSummary &summary);
  // `read`: the files the parse read (clang's SourceManager), relative to the command's directory
  // or absolute.
  void store(const std::string &file, std::vector<std::string> read, const FileSummary &summary);

private:
  struct Entry {
    std::string key, path, directory;
  };
  std::optional<Entry> entryOf(const std::string &file) const;

  const clang::tooling::CompilationDatabase &database_;
  const SummaryPassOptions &options_;
  std::unique_ptr<FileHashes> hashes_;
  bool enabled_ = false;
};

// The files a parse read, as Clang named them.
std::vector<std::string> filesRead(const clang::SourceManager &sm);

// Summarises `files` (source files of `database`) into `out` (by absolute path), from the cache
// where it can. A file of `checked` not in the cache is left for its check to summarise from the
// same parse (a run parses such a file once). Files that do not compile are summarised as far as
// they parsed; their errors are for the check of the file itself to report.
void summariseProject(const clang::tooling::CompilationDatabase &database,
                      const std::vector<std::string> &files, const std::set<std::string> &checked,
                      const LintConfig &config, const SummaryPassOptions &options,
                      SummaryCache &cache, std::map<std::string, FileSummary> &out,
                      SummaryPassStats &stats);

// Summarises one file from its own parse and stores it in the cache.
FileSummary summariseFile(const clang::tooling::CompilationDatabase &database,
                          const std::string &file, const LintConfig &config,
                          const SummaryPassOptions &options, SummaryCache &cache,
                          SummaryPassStats &stats);

// The default cache: $XDG_CACHE_HOME/collcheck-lint, else ~/.cache/collcheck-lint.
std::string defaultSummaryCache();

} // namespace collcheck::lint
