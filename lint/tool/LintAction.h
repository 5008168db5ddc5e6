// The frontend action of collcheck-lint: after Clang has parsed a file (errors included), run the
// checks, drop what NOLINT comments, disabled rules or the changed-lines filter exclude, print
// clang-style diagnostics and keep the findings for SARIF.
#pragma once

#include "engine/Summary.h"
#include "support/ChangedLines.h"
#include "support/Config.h"
#include "support/Report.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace collcheck::lint {

struct LintOptions {
  const LintConfig *config = nullptr;
  const ChangedLines *changedLines = nullptr; // null: report every line
  std::string sourceRoot;                     // diff paths are relative to it
  bool color = false;
  llvm::raw_ostream *out = nullptr; // where diagnostics are printed
  // Analyse a file that does not compile as far as it parsed; otherwise its errors are reported
  // and it is not analysed.
  bool allowCompileErrors = false;
  // The file whose whole-project summary is made from its check's parse (one not in the summary
  // cache), with the config summaries are made with, and what receives it (not called where a
  // missing header was skipped).
  std::string summariseFile;
  const LintConfig *summaryConfig = nullptr;
  std::function<void(std::vector<std::string> read, const FileSummary &)> summarised;
};

// Collects Clang's own errors for the file being parsed: they are reported as errors (or, with
// --allow-compile-errors, as notes, and the analysis goes on with whatever Clang could make of the
// code).
class CompileErrorCollector : public clang::DiagnosticConsumer {
public:
  struct Error {
    ReportedLocation where; // file empty: no location (a driver error)
    clang::FullSourceLoc loc;
    std::string message;
  };
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override;
  void add(clang::SourceLocation loc, const clang::SourceManager &sm, std::string message);
  std::vector<Error> take() { return std::exchange(errors_, {}); }
  const std::vector<Error> &errors() const { return errors_; }

private:
  std::vector<Error> errors_;
};

// What a run found, over all files.
struct LintResults {
  std::vector<ReportedFinding> findings;
  std::vector<ToolNotification> notifications;
  std::set<std::string> analyzedFiles; // absolute paths of files whose AST was analysed
  std::set<std::string> notCompiling;  // ... of files not analysed because they do not compile
  size_t functionsNotAnalysed = 0;     // whose analysis failed, in the files analysed
};

std::unique_ptr<clang::tooling::FrontendActionFactory>
makeLintActionFactory(const LintOptions &options, CompileErrorCollector &errors,
                      LintResults &results);

// Absolute, normalised path.
std::string absolutePath(llvm::StringRef path);

} // namespace collcheck::lint
