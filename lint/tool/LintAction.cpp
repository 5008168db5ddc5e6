#include "tool/LintAction.h"

#include "catalogue.h"
#include "checks/Registry.h"
#include "engine/Analysis.h"
#include "support/Suppressions.h"
#include "tool/ProjectSummaries.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnostic.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace collcheck::lint {
namespace {

// Where Clang's own renderer puts it: a macro's argument where it is written, a macro's body where
// the macro is used.
ReportedLocation locate(const clang::SourceManager &sm, clang::SourceLocation loc) {
  ReportedLocation where;
  if (loc.isInvalid())
    return where;
  clang::SourceLocation at = sm.getFileLoc(loc);
  clang::PresumedLoc presumed = sm.getPresumedLoc(at, /*UseLineDirectives=*/false);
  if (presumed.isInvalid())
    return where;
  where.file = absolutePath(presumed.getFilename());
  where.line = presumed.getLine();
  where.column = presumed.getColumn();
  return where;
}

ReportedLocation locateRange(const clang::SourceManager &sm, const clang::LangOptions &lang,
                             clang::CharSourceRange range) {
  if (range.isTokenRange())
    if (clang::CharSourceRange written = writtenRange(range.getAsRange(), sm, lang);
        written.isValid())
      range = written;
  ReportedLocation where = locate(sm, range.getBegin());
  clang::SourceLocation end = sm.getFileLoc(range.getEnd());
  if (range.isTokenRange())
    end = clang::Lexer::getLocForEndOfToken(end, 0, sm, lang);
  ReportedLocation last = locate(sm, end);
  if (last.file == where.file && last.line > 0) {
    where.endLine = last.line;
    where.endColumn = last.column;
  }
  return where;
}

rules::Severity severityOf(const Finding &f) {
  if (f.guess)
    return rules::Severity::Note;
  const rules::Rule *rule = rules::find(f.ruleId);
  return rule ? rule->severity : rules::Severity::Warning;
}

clang::DiagnosticsEngine::Level levelOf(const Finding &f) {
  rules::Severity severity = severityOf(f);
  if (severity == rules::Severity::Error)
    return clang::DiagnosticsEngine::Error;
  if (severity == rules::Severity::Note)
    return clang::DiagnosticsEngine::Note;
  return clang::DiagnosticsEngine::Warning;
}

class LintConsumer : public clang::ASTConsumer {
public:
  LintConsumer(clang::CompilerInstance &compiler, const LintOptions &options,
               CompileErrorCollector &errors, LintResults &results)
      : compiler_(compiler), options_(options), errors_(errors), results_(results) {}

  bool skippedHeader = false; // a missing header was skipped (MissingHeaders below)

  void HandleTranslationUnit(clang::ASTContext &context) override {
    const clang::SourceManager &sm = context.getSourceManager();
    const clang::LangOptions &lang = context.getLangOpts();
    clang::OptionalFileEntryRef main = sm.getFileEntryRefForID(sm.getMainFileID());
    std::string mainPath = main ? absolutePath(main->getName()) : std::string();

    // Clang's own renderer: file:line:col, the source line, a caret, ranges and fix-it hints.
    auto diagOptions = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
    diagOptions->ShowColors = options_.color;
    clang::TextDiagnostic text(*options_.out, lang, diagOptions.get(),
                               &compiler_.getPreprocessor());
    auto emit = [&](clang::SourceLocation loc, clang::DiagnosticsEngine::Level level,
                    const std::string &message, llvm::ArrayRef<clang::CharSourceRange> ranges = {},
                    llvm::ArrayRef<clang::FixItHint> fixes = {}) {
      if (loc.isValid())
        text.emitDiagnostic(clang::FullSourceLoc(loc, sm), level, message, ranges, fixes);
      else
        *options_.out << "collcheck-lint: note: " << message << "\n";
    };

    // Like clang-tidy: a file that does not compile is an error a review gate sees, unless the
    // user asked for the analysis of what parsed.
    std::vector<CompileErrorCollector::Error> compileErrors = errors_.take();
    // The summary is the one a parse of its own gives, errors included, so not where a missing
    // header was skipped: a summary parse stops there (main.cpp then makes it by such a parse).
    if (!skippedHeader && !options_.summariseFile.empty() && mainPath == options_.summariseFile &&
        options_.summarised)
      options_.summarised(filesRead(sm),
                          summariseTranslationUnit(context, *options_.summaryConfig));
    if (!compileErrors.empty() && !options_.allowCompileErrors) {
      for (const CompileErrorCollector::Error &e : compileErrors) {
        std::string message = e.message + " [clang-diagnostic-error]";
        if (e.loc.isValid())
          emit(e.loc, clang::DiagnosticsEngine::Error, message);
        else
          *options_.out << "collcheck-lint: error: " << message << "\n";
        results_.notifications.push_back({"error", e.message, e.where});
      }
      results_.notCompiling.insert(mainPath);
      options_.out->flush();
      return;
    }
    for (const CompileErrorCollector::Error &e : compileErrors) {
      std::string message = "the code does not compile here (" + e.message +
                            "); the analysis continued on what could be parsed";
      emit(e.loc, clang::DiagnosticsEngine::Note, message);
      results_.notifications.push_back({"note", message, e.where});
    }

    results_.analyzedFiles.insert(mainPath);
    std::vector<NotAnalysed> failed;
    std::vector<Finding> findings =
        analyzeTranslationUnit(context, *options_.config, makeChecks(), &failed);
    Suppressions suppressions(sm.getBufferData(sm.getMainFileID()));
    for (const NotAnalysed &f : failed) {
      std::string message = "'" + f.name +
                            "' was not analysed: the analysis failed inside it (the rest of the "
                            "file was analysed)";
      emit(f.function->getLocation(), clang::DiagnosticsEngine::Note, message);
      results_.notifications.push_back({"warning", message, locate(sm, f.function->getLocation())});
    }
    results_.functionsNotAnalysed += failed.size();
    for (const Suppressions::Problem &p : suppressions.problems()) {
      clang::SourceLocation at = sm.translateLineCol(sm.getMainFileID(), p.line, 1);
      emit(at, clang::DiagnosticsEngine::Warning, p.message);
      results_.notifications.push_back({"warning", p.message, locate(sm, at)});
    }

    for (const Finding &f : findings) {
      ReportedLocation where = locate(sm, f.loc);
      if (suppressions.suppressed(where.line, f.ruleId))
        continue;
      if (options_.changedLines &&
          !options_.changedLines->contains(relativeTo(options_.sourceRoot, where.file), where.line))
        continue;
      std::vector<clang::CharSourceRange> ranges;
      if (f.range.isValid())
        ranges.push_back(clang::CharSourceRange::getTokenRange(f.range));
      std::vector<clang::FixItHint> hints;
      for (const FixIt &fix : f.fixes)
        hints.push_back(clang::FixItHint::CreateReplacement(fix.range, fix.replacement));
      emit(f.loc, levelOf(f), f.message + " [" + f.ruleId + "]", ranges, hints);

      ReportedFinding reported;
      reported.ruleId = f.ruleId;
      reported.level = std::string(rules::severityName(severityOf(f)));
      reported.message = f.message;
      reported.where = where;
      if (f.range.isValid()) {
        ReportedLocation extent =
            locateRange(sm, lang, clang::CharSourceRange::getTokenRange(f.range));
        if (extent.file == where.file &&
            (extent.endLine > where.line ||
             (extent.endLine == where.line && extent.endColumn > where.column))) {
          reported.where.endLine = extent.endLine;
          reported.where.endColumn = extent.endColumn;
        }
      }
      for (const Note &n : f.notes) {
        emit(n.loc, clang::DiagnosticsEngine::Note, n.message);
        reported.notes.push_back({locate(sm, n.loc), n.message});
      }
      for (const FixIt &fix : f.fixes)
        reported.fixes.push_back({locateRange(sm, lang, fix.range), fix.replacement});
      results_.findings.push_back(std::move(reported));
    }
    options_.out->flush();
  }

private:
  clang::CompilerInstance &compiler_;
  const LintOptions &options_;
  CompileErrorCollector &errors_;
  LintResults &results_;
};

// A header that cannot be found is fatal to Clang, which then includes nothing more. Skipping it
// instead keeps every later #include, so one missing generated header costs only its own
// declarations; it is reported like any other compile error.
class MissingHeaders : public clang::PPCallbacks {
public:
  MissingHeaders(CompileErrorCollector &errors, const clang::SourceManager &sm, bool &skipped)
      : errors_(errors), sm_(sm), skipped_(skipped) {}

  bool FileNotFound(llvm::StringRef name) override {
    missing_.insert(name.str());
    skipped_ = true;
    return true;
  }

  void InclusionDirective(clang::SourceLocation hash, const clang::Token &, llvm::StringRef name,
                          bool, clang::CharSourceRange, clang::OptionalFileEntryRef file,
                          llvm::StringRef, llvm::StringRef, const clang::Module *, bool,
                          clang::SrcMgr::CharacteristicKind) override {
    if (file || !missing_.contains(name.str()))
      return;
    errors_.add(hash, sm_, "'" + name.str() + "' file not found");
  }

private:
  CompileErrorCollector &errors_;
  const clang::SourceManager &sm_;
  bool &skipped_;
  std::set<std::string> missing_;
};

class LintAction : public clang::ASTFrontendAction {
public:
  LintAction(const LintOptions &options, CompileErrorCollector &errors, LintResults &results)
      : options_(options), errors_(errors), results_(results) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &compiler,
                                                        llvm::StringRef) override {
    auto consumer = std::make_unique<LintConsumer>(compiler, options_, errors_, results_);
    compiler.getPreprocessor().addPPCallbacks(std::make_unique<MissingHeaders>(
        errors_, compiler.getSourceManager(), consumer->skippedHeader));
    return consumer;
  }

private:
  const LintOptions &options_;
  CompileErrorCollector &errors_;
  LintResults &results_;
};

class LintActionFactory : public clang::tooling::FrontendActionFactory {
public:
  LintActionFactory(const LintOptions &options, CompileErrorCollector &errors, LintResults &results)
      : options_(options), errors_(errors), results_(results) {}
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<LintAction>(options_, errors_, results_);
  }

private:
  const LintOptions &options_;
  CompileErrorCollector &errors_;
  LintResults &results_;
};

} // namespace

std::string absolutePath(llvm::StringRef path) {
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return std::string(absolute);
}

void CompileErrorCollector::HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                                             const clang::Diagnostic &info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info);
  if (level < clang::DiagnosticsEngine::Error)
    return;
  llvm::SmallString<128> message;
  info.FormatDiagnostic(message);
  if (info.hasSourceManager() && info.getLocation().isValid()) {
    add(info.getLocation(), info.getSourceManager(), std::string(message));
  } else {
    Error e;
    e.message = std::string(message);
    errors_.push_back(std::move(e));
  }
}

void CompileErrorCollector::add(clang::SourceLocation loc, const clang::SourceManager &sm,
                                std::string message) {
  Error e;
  e.message = std::move(message);
  e.loc = clang::FullSourceLoc(loc, sm);
  e.where = locate(sm, loc);
  errors_.push_back(std::move(e));
}

std::unique_ptr<clang::tooling::FrontendActionFactory>
makeLintActionFactory(const LintOptions &options, CompileErrorCollector &errors,
                      LintResults &results) {
  return std::make_unique<LintActionFactory>(options, errors, results);
}

} // namespace collcheck::lint
