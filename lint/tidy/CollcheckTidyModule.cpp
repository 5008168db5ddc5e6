// The collcheck-lint checks as a clang-tidy plugin module:
//
//   clang-tidy-19 -load build/lib/libcollcheck-tidy.so -checks='-*,collcheck-*' file.cpp -- ...
//
// Every rule of the catalogue run by the lint becomes the check `collcheck-<rule id>`. They share
// one analysis per translation unit (the one collcheck-lint runs), read the same
// .collcheck-lint.json (or the file named by the check option `ConfigFile`), and honour NOLINT
// comments naming either spelling of the rule.
#include "catalogue.h"
#include "checks/Registry.h"
#include "engine/Analysis.h"
#include "support/Config.h"
#include "support/Suppressions.h"

#include "clang-tidy/ClangTidyCheck.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang-tidy/ClangTidyModuleRegistry.h"
#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Path.h"

#include <map>
#include <memory>
#include <optional>

namespace collcheck::lint {
namespace {

using namespace clang::ast_matchers;

// The findings of the translation unit being checked, computed by whichever check runs first.
class SharedAnalysis {
public:
  static SharedAnalysis &instance() {
    static SharedAnalysis shared;
    return shared;
  }

  void reset() { findings_.reset(); }

  const std::vector<Finding> &findings(clang::ASTContext &context, const std::string &configFile,
                                       std::string &configError) {
    if (!findings_) {
      const clang::SourceManager &sm = context.getSourceManager();
      LintConfig config = LintConfig::defaults();
      std::string path = configFile;
      if (path.empty())
        if (clang::OptionalFileEntryRef main = sm.getFileEntryRefForID(sm.getMainFileID()))
          path = findConfigFile(llvm::sys::path::parent_path(main->getName()).str());
      if (!path.empty() && !loadConfigFile(path, config, configError))
        config = LintConfig::defaults();
      disabledByConfig_ = config.disabledRules;
      // Each clang-tidy check decides for its own rule; the config's disabled rules still apply.
      config.disabledRules.clear();
      findings_ = analyzeTranslationUnit(context, config, makeChecks());
      suppressions_.emplace(sm.getBufferData(sm.getMainFileID()));
    }
    return *findings_;
  }

  bool disabledByConfig(const std::string &ruleId) const {
    return disabledByConfig_.contains(ruleId);
  }
  const Suppressions &suppressions() const { return *suppressions_; }

private:
  std::optional<std::vector<Finding>> findings_;
  std::optional<Suppressions> suppressions_;
  std::set<std::string, std::less<>> disabledByConfig_;
};

class CatalogueRuleCheck : public clang::tidy::ClangTidyCheck {
public:
  CatalogueRuleCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context,
                     std::string ruleId)
      : ClangTidyCheck(name, context), ruleId_(std::move(ruleId)),
        configFile_(Options.get("ConfigFile", "")) {}

  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &options) override {
    Options.store(options, "ConfigFile", configFile_);
  }

  void registerMatchers(MatchFinder *finder) override {
    finder->addMatcher(translationUnitDecl().bind("unit"), this);
  }

  void onStartOfTranslationUnit() override { SharedAnalysis::instance().reset(); }

  void check(const MatchFinder::MatchResult &result) override {
    SharedAnalysis &shared = SharedAnalysis::instance();
    std::string configError;
    const std::vector<Finding> &findings =
        shared.findings(*result.Context, configFile_, configError);
    if (!configError.empty() && !reportedConfigError_) {
      reportedConfigError_ = true;
      configurationDiag("collcheck: %0") << configError;
    }
    if (shared.disabledByConfig(ruleId_))
      return;
    const clang::SourceManager &sm = *result.SourceManager;
    clang::DiagnosticIDs::Level level = clang::DiagnosticIDs::Warning;
    if (const rules::Rule *rule = rules::find(ruleId_);
        rule && rule->severity == rules::Severity::Error)
      level = clang::DiagnosticIDs::Error;
    for (const Finding &f : findings) {
      if (f.ruleId != ruleId_)
        continue;
      unsigned line = sm.getSpellingLineNumber(sm.getFileLoc(f.loc));
      if (shared.suppressions().suppressed(line, ruleId_))
        continue;
      // A guess is a note of collcheck-lint; clang-tidy has no diagnostic of that level of its
      // own (a note belongs to the warning before it), so it is left out here.
      if (f.guess)
        continue;
      {
        auto builder = diag(f.loc, "%0", level) << f.message;
        if (f.range.isValid())
          builder << f.range;
        for (const FixIt &fix : f.fixes)
          builder << clang::FixItHint::CreateReplacement(fix.range, fix.replacement);
      }
      for (const Note &note : f.notes)
        diag(note.loc, "%0", clang::DiagnosticIDs::Note) << note.message;
    }
  }

private:
  std::string ruleId_;
  std::string configFile_;
  bool reportedConfigError_ = false;
};

class CollcheckModule : public clang::tidy::ClangTidyModule {
public:
  void addCheckFactories(clang::tidy::ClangTidyCheckFactories &factories) override {
    for (const rules::Rule &rule : rules::catalogue()) {
      if (rule.checker != "lint" && rule.checker != "both")
        continue;
      std::string id = rule.id;
      factories.registerCheckFactory(
          "collcheck-" + id, [id](llvm::StringRef name, clang::tidy::ClangTidyContext *context) {
            return std::make_unique<CatalogueRuleCheck>(name, context, id);
          });
    }
  }
};

clang::tidy::ClangTidyModuleRegistry::Add<CollcheckModule>
    registration("collcheck-module", "collcheck: distributed-training normalisation and "
                                     "participation checks");

} // namespace
} // namespace collcheck::lint
