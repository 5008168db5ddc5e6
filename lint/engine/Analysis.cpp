#include "engine/Analysis.h"
#include "engine/Callee.h"

#include "checks/CollectiveNotReachedCheck.h"
#include "checks/DoubleNormalizationCheck.h"
#include "checks/UncompensatedMeanCheck.h"
#include "checks/UnguardedReducedCountDivisionCheck.h"
#include "engine/FlowAnalysis.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <set>

namespace collcheck::lint {
namespace {

// Hands every event to every check and keeps what they find.
class Dispatcher : public FlowListener {
public:
  Dispatcher(clang::ASTContext &context, std::vector<std::unique_ptr<Check>> &checks)
      : context_(context), checks_(checks) {}

  void reduction(const ReductionEvent &event) override {
    for (auto &check : checks_)
      check->onReduction(event, context_, findings_);
  }
  void division(const DivisionEvent &event) override {
    for (auto &check : checks_)
      check->onDivision(event, context_, findings_);
  }
  void collective(const CollectiveEvent &event) override {
    for (auto &check : checks_)
      check->onCollective(event, context_, findings_);
  }

  std::vector<Finding> take() { return std::move(findings_); }

private:
  clang::ASTContext &context_;
  std::vector<std::unique_ptr<Check>> &checks_;
  std::vector<Finding> findings_;
};

// Function definitions written in the main file, and the functions any of them calls.
class MainFileFunctions {
public:
  explicit MainFileFunctions(clang::ASTContext &context) : sm_(context.getSourceManager()) {
    visit(context.getTranslationUnitDecl());
  }

  std::vector<const clang::FunctionDecl *> definitions;
  // Function templates and the methods of class templates, as written.
  std::vector<const clang::FunctionDecl *> patterns;
  llvm::DenseSet<const clang::FunctionDecl *> called;

private:
  bool inMainFile(const clang::Decl *d) const {
    return sm_.isInMainFile(sm_.getExpansionLoc(d->getLocation()));
  }

  // `dependent`: inside a class template, whose methods are patterns.
  void visit(const clang::DeclContext *dc, bool dependent = false) {
    for (const clang::Decl *d : dc->decls()) {
      if (const auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
        visit(ns);
      } else if (const auto *linkage = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
        visit(linkage);
      } else if (const auto *record = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
        if (inMainFile(record) && record->isThisDeclarationADefinition())
          visit(record, dependent || record->isDependentContext());
      } else if (const auto *classTemplate = llvm::dyn_cast<clang::ClassTemplateDecl>(d)) {
        const clang::CXXRecordDecl *record = classTemplate->getTemplatedDecl();
        if (inMainFile(record) && record->isThisDeclarationADefinition())
          visit(record, /*dependent=*/true);
      } else if (const auto *functionTemplate = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
        add(functionTemplate->getTemplatedDecl(), /*pattern=*/true);
      } else if (const auto *fn = llvm::dyn_cast<clang::FunctionDecl>(d)) {
        add(fn, dependent || fn->isDependentContext());
      }
    }
  }

  void add(const clang::FunctionDecl *fn, bool pattern) {
    if (!fn->doesThisDeclarationHaveABody() || !inMainFile(fn))
      return;
    (pattern ? patterns : definitions).push_back(fn);
    collectCalls(fn->getBody());
  }

  void collectCalls(const clang::Stmt *s) {
    if (!s)
      return;
    if (const auto *call = llvm::dyn_cast<clang::CallExpr>(s))
      if (const clang::FunctionDecl *callee = calleeOf(call))
        if (const clang::FunctionDecl *definition = callee->getDefinition())
          called.insert(definition);
    if (const auto *construct = llvm::dyn_cast<clang::CXXConstructExpr>(s))
      if (const clang::FunctionDecl *definition = construct->getConstructor()->getDefinition())
        called.insert(definition);
    for (const clang::Stmt *child : s->children())
      collectCalls(child);
  }

  const clang::SourceManager &sm_;
};

} // namespace

std::vector<std::unique_ptr<Check>> makeChecks() {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(std::make_unique<CollectiveNotReachedCheck>());
  checks.push_back(std::make_unique<DoubleNormalizationCheck>());
  checks.push_back(std::make_unique<UncompensatedMeanCheck>());
  checks.push_back(std::make_unique<UnguardedReducedCountDivisionCheck>());
  return checks;
}

std::vector<Finding> analyzeTranslationUnit(clang::ASTContext &context, const LintConfig &config,
                                            std::vector<NotAnalysed> *failed) {
  std::vector<std::unique_ptr<Check>> checks = makeChecks();
  std::erase_if(checks, [&](const auto &check) { return !config.ruleEnabled(check->ruleId()); });
  if (checks.empty())
    return {};

  ReducerTable table(config);
  CollectiveSignatures signatures(table);
  Dispatcher dispatcher(context, checks);
  FlowAnalysis flow(context, config, table, signatures, dispatcher);

  // Each function is walked inside a crash recovery context: code the walk does not expect (an
  // AST shape met nowhere before) costs that function, reported as not analysed, not the run.
  static const bool recoveryEnabled = [] {
    llvm::CrashRecoveryContext::Enable();
    return true;
  }();
  (void)recoveryEnabled;
  llvm::DenseSet<const clang::FunctionDecl *> broken;
  auto contained = [&](const clang::FunctionDecl *fn, llvm::function_ref<void()> work) {
    if (broken.contains(fn->getCanonicalDecl()))
      return;
    llvm::CrashRecoveryContext recovery;
    if (recovery.RunSafely(work))
      return;
    flow.recoverFromFailure();
    signatures.recoverFromFailure();
    broken.insert(fn->getCanonicalDecl());
    if (failed) {
      std::string name;
      llvm::raw_string_ostream out(name);
      fn->printQualifiedName(out);
      failed->push_back({fn, out.str()});
    }
  };
  auto root = [&](const clang::FunctionDecl *fn) { contained(fn, [&] { flow.analyzeRoot(fn); }); };

  // Functions called from the main file are walked with their callers' values; the others are
  // the entry points, walked with unknown parameters.
  MainFileFunctions functions(context);
  for (const auto *list : {&functions.definitions, &functions.patterns})
    for (const clang::FunctionDecl *fn : *list)
      contained(fn, [&] { flow.learnRankStorage(fn); });
  for (const clang::FunctionDecl *fn : functions.definitions)
    if (!functions.called.contains(fn))
      root(fn);
  for (const clang::FunctionDecl *fn : functions.definitions)
    if (!flow.analyzed(fn))
      root(fn);
  // A template is walked where the file instantiates it, with its callers' values; one the file
  // never instantiates (a helper instantiated by other files) is walked as written, as a root.
  for (const clang::FunctionDecl *pattern : functions.patterns)
    if (!flow.analyzedOrInstantiated(pattern))
      root(pattern);
  for (size_t round = 0; round < 8; ++round) {
    std::vector<const clang::CXXMethodDecl *> lambdas = flow.unwalkedLambdas();
    if (lambdas.empty())
      break;
    for (const clang::CXXMethodDecl *op : lambdas) {
      const clang::FunctionDecl *definition = op->getDefinition();
      // A lambda that cannot be walked is not offered again.
      flow.markAnalyzed(op);
      root(definition && definition->getBody() ? definition : op);
    }
  }

  const clang::SourceManager &sm = context.getSourceManager();
  std::vector<Finding> all = dispatcher.take();
  std::vector<Finding> kept;
  std::set<std::pair<std::string, unsigned>> seen;
  for (Finding &f : all) {
    // Two calls passed to one macro (CHECK(a() && b())) are two places.
    clang::SourceLocation at = sm.getFileLoc(f.loc);
    if (!sm.isInMainFile(at))
      continue;
    if (!seen.insert({f.ruleId, at.getRawEncoding()}).second)
      continue;
    kept.push_back(std::move(f));
  }
  std::stable_sort(kept.begin(), kept.end(), [&](const Finding &a, const Finding &b) {
    return sm.isBeforeInTranslationUnit(sm.getFileLoc(a.loc), sm.getFileLoc(b.loc));
  });
  return kept;
}

} // namespace collcheck::lint
