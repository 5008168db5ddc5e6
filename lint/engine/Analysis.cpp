#include "engine/Analysis.h"
#include "engine/Callee.h"

#include "checks/Describe.h"
#include "engine/FlowAnalysis.h"
#include "engine/flow/Helpers.h"

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

// Each function is walked inside a crash recovery context: code the walk does not expect (an AST
// shape met nowhere before) costs that function, reported as not analysed, not the run.
class ContainedWalks {
public:
  ContainedWalks(FlowAnalysis &flow, CollectiveSignatures &signatures)
      : flow_(flow), signatures_(signatures) {
    static const bool recoveryEnabled = [] {
      llvm::CrashRecoveryContext::Enable();
      return true;
    }();
    (void)recoveryEnabled;
  }

  // False when the work failed, now or in an earlier walk of the same function.
  bool run(const clang::FunctionDecl *fn, llvm::function_ref<void()> work) {
    if (broken_.contains(fn->getCanonicalDecl()))
      return false;
    llvm::CrashRecoveryContext recovery;
    if (recovery.RunSafely(work))
      return true;
    flow_.recoverFromFailure();
    signatures_.recoverFromFailure();
    broken_.insert(fn->getCanonicalDecl());
    failed.push_back({fn, qualifiedName(fn)});
    return false;
  }

  std::vector<NotAnalysed> failed;

private:
  FlowAnalysis &flow_;
  CollectiveSignatures &signatures_;
  llvm::DenseSet<const clang::FunctionDecl *> broken_;
};

// Keeps the averaging reductions a summarised function reports at its own level, whose data
// comes from its parameters: the function is a wrapper of that reducer.
class WrapperEvents : public FlowListener {
public:
  void reduction(const ReductionEvent &event) override {
    if (event.reportDepth == 0 && event.reportMask != 0)
      reductions.push_back(event);
  }
  void division(const DivisionEvent &) override {}
  void collective(const CollectiveEvent &) override {}
  std::vector<ReductionEvent> reductions;
};

// Overrides of virtual methods defined in the project's headers (not the main file): another
// translation unit may call them through the base class without including their header.
void collectHeaderOverrides(const clang::DeclContext *dc, const clang::SourceManager &sm,
                            std::vector<const clang::FunctionDecl *> &out) {
  for (const clang::Decl *d : dc->decls()) {
    if (sm.isInSystemHeader(sm.getExpansionLoc(d->getLocation())))
      continue;
    if (const auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
      collectHeaderOverrides(ns, sm, out);
    } else if (const auto *linkage = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
      collectHeaderOverrides(linkage, sm, out);
    } else if (const auto *record = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
      if (record->isThisDeclarationADefinition() && !record->isDependentContext())
        collectHeaderOverrides(record, sm, out);
    } else if (const auto *method = llvm::dyn_cast<clang::CXXMethodDecl>(d)) {
      if (method->doesThisDeclarationHaveABody() && method->size_overridden_methods() > 0 &&
          !method->isDependentContext() &&
          !sm.isInMainFile(sm.getExpansionLoc(method->getLocation())))
        out.push_back(method);
    }
  }
}

// Whether other translation units can call `fn` by name.
bool summarisable(const clang::FunctionDecl *fn) {
  if (!fn->isExternallyVisible() || fn->isMain() || fn->isDependentContext() ||
      fn->isTemplateInstantiation() || !fn->getIdentifier())
    return false;
  if (const auto *method = llvm::dyn_cast<clang::CXXMethodDecl>(fn))
    if (method->getParent()->isLambda())
      return false;
  return true;
}

void addOverridden(const clang::CXXMethodDecl *method, std::vector<std::string> &out) {
  for (const clang::CXXMethodDecl *base : method->overridden_methods()) {
    std::string name = qualifiedName(base);
    if (std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(std::move(name));
    addOverridden(base, out);
  }
}

bool throws(const clang::Stmt *s) {
  if (!s)
    return false;
  if (llvm::isa<clang::CXXThrowExpr>(s))
    return true;
  for (const clang::Stmt *child : s->children())
    if (throws(child))
      return true;
  return false;
}

bool worthKeeping(const ValueFacts &f) {
  return f.reduced || f.rankDerived || f.countDerived || f.meanFormed || f.exactSize ||
         f.exactRank || !f.powers.isZero() || f.mask;
}

// `effect`: the walk with rank-varying parameters, which shows what reaches a reducer; `own`: the
// walk with uniform ones, which shows what the function adds itself.
FunctionSummary summarise(const clang::FunctionDecl *fn, const RootEffect &effect,
                          const RootEffect &own, const std::vector<ReductionEvent> &reductions,
                          CollectiveSignatures &signatures, const clang::SourceManager &sm) {
  FunctionSummary s;
  s.usr = usrOf(fn);
  s.name = qualifiedName(fn);
  s.params = fn->getNumParams();
  clang::PresumedLoc at = sm.getPresumedLoc(sm.getExpansionLoc(fn->getLocation()));
  if (at.isValid()) {
    s.file = at.getFilename();
    s.line = at.getLine();
  }
  auto resultOf = [&](unsigned param) {
    return param < s.params && flow::isOutPointerOrReference(fn->getParamDecl(param)->getType())
               ? -1
               : kReturned;
  };
  // An averaging reducer of a parameter: the pair is one for its callers.
  for (const ReductionEvent &event : reductions) {
    unsigned param = llvm::countr_zero(event.reportMask);
    if (param >= s.params)
      continue;
    s.reducedParam = static_cast<int>(param);
    s.reducedOp = ReduceOpKind::Avg;
    s.resultAt = resultOf(param);
    s.reducedBy = describeReducer(event);
    break;
  }
  // A SUM of a parameter handed back undivided: a sum reducer, which the caller may divide.
  auto pendingOf = [&](const Value &v) -> const PendingSum * {
    return v.pendingSum && v.pendingSum->reportDepth == 0 && v.pendingSum->reportMask
               ? v.pendingSum.get()
               : nullptr;
  };
  if (s.reducedParam < 0) {
    const PendingSum *pending = effect.returned ? pendingOf(*effect.returned) : nullptr;
    for (const auto &[param, value] : effect.outParams)
      if (!pending)
        pending = pendingOf(value);
    if (pending && static_cast<unsigned>(llvm::countr_zero(pending->reportMask)) < s.params) {
      s.reducedParam = llvm::countr_zero(pending->reportMask);
      s.reducedOp = ReduceOpKind::Sum;
      s.resultAt = effect.returned && pendingOf(*effect.returned)
                       ? kReturned
                       : resultOf(static_cast<unsigned>(s.reducedParam));
      s.reducedBy = pending->reducerName + " with " + pending->opName;
    }
  }
  if (own.returned) {
    ValueFacts returns = ValueFacts::of(*own.returned);
    if (returns.paramMask == 0 && !returns.guessed && (returns.exactRank || returns.exactSize))
      s.query = returns.exactRank ? QuerySpec::What::Rank : QuerySpec::What::Size;
    if (worthKeeping(returns) || returns.uniform)
      s.returns = returns;
  }
  for (const auto &[param, value] : own.outParams) {
    ValueFacts facts = ValueFacts::of(value);
    if (worthKeeping(facts))
      s.writes.emplace_back(param, facts);
  }
  // A function that may throw is left to its callers' try blocks: only exits and aborts count.
  s.endsProcess = own.neverReturns && !throws(fn->getBody());
  // A wrapper is a reducer for its callers, which see its collective there.
  if (s.reducedParam < 0) {
    PathSet paths = signatures.ofFunction(fn);
    if (paths.single() && !paths.paths.empty() && !paths.paths.front().empty())
      s.collectives = paths.paths.front();
  }
  if (const auto *method = llvm::dyn_cast<clang::CXXMethodDecl>(fn))
    addOverridden(method, s.overrides);
  return s;
}

} // namespace

std::vector<Finding> analyzeTranslationUnit(clang::ASTContext &context, const LintConfig &config,
                                            std::vector<std::unique_ptr<Check>> checks,
                                            std::vector<NotAnalysed> *failed) {
  std::erase_if(checks, [&](const auto &check) { return !config.ruleEnabled(check->ruleId()); });
  if (checks.empty())
    return {};

  ReducerTable table(config);
  CollectiveSignatures signatures(table, config.project);
  Dispatcher dispatcher(context, checks);
  FlowAnalysis flow(context, config, table, signatures, dispatcher);

  ContainedWalks walks(flow, signatures);
  auto contained = [&](const clang::FunctionDecl *fn, llvm::function_ref<void()> work) {
    walks.run(fn, work);
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

  if (failed)
    failed->insert(failed->end(), walks.failed.begin(), walks.failed.end());
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

FileSummary summariseTranslationUnit(clang::ASTContext &context, const LintConfig &config) {
  ReducerTable table(config);
  CollectiveSignatures signatures(table, config.project);
  WrapperEvents events;
  FlowAnalysis flow(context, config, table, signatures, events);
  ContainedWalks walks(flow, signatures);
  MainFileFunctions functions(context);
  for (const auto *list : {&functions.definitions, &functions.patterns})
    for (const clang::FunctionDecl *fn : *list)
      walks.run(fn, [&] { flow.learnRankStorage(fn); });

  FileSummary summary;
  const clang::SourceManager &sm = context.getSourceManager();
  std::vector<const clang::FunctionDecl *> summarised = functions.definitions;
  collectHeaderOverrides(context.getTranslationUnitDecl(), sm, summarised);
  for (const clang::FunctionDecl *fn : summarised) {
    if (!summarisable(fn))
      continue;
    events.reductions.clear();
    RootEffect effect, own;
    if (!walks.run(fn, [&] { effect = flow.summariseRoot(fn, /*uniformParameters=*/false); }))
      continue;
    std::vector<ReductionEvent> reductions = std::move(events.reductions);
    if (!walks.run(fn, [&] { own = flow.summariseRoot(fn, /*uniformParameters=*/true); }))
      continue;
    summary.functions.push_back(summarise(fn, effect, own, reductions, signatures, sm));
  }
  for (LastingStorage &s : flow.lastingStorage()) {
    // A field of an unnamed struct has no name another translation unit could share with it.
    std::string name = qualifiedName(s.decl);
    if (name.find("(anonymous") == std::string::npos && name.find("(unnamed") == std::string::npos)
      summary.storage.push_back({std::move(name), s.what, std::move(s.communicator)});
  }
  std::sort(summary.storage.begin(), summary.storage.end(),
            [](const StorageFact &a, const StorageFact &b) { return a.name < b.name; });
  return summary;
}

} // namespace collcheck::lint
