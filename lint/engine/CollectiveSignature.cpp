#include "engine/CollectiveSignature.h"
#include "engine/Callee.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"

#include <algorithm>

namespace collcheck::lint {
namespace {

void normalize(PathSet &set) {
  std::sort(set.paths.begin(), set.paths.end());
  set.paths.erase(std::unique(set.paths.begin(), set.paths.end()), set.paths.end());
  if (set.paths.size() > PathSet::kMaxPaths) {
    set.overflowed = true;
    set.paths.resize(PathSet::kMaxPaths);
  }
}

PathSet one(std::string collective) {
  PathSet set;
  set.paths = {Signature{std::move(collective)}};
  return set;
}

// A loop issues its body's collectives some number of times: one opaque token, so that two loops
// balance only when their bodies do.
std::string loopToken(const PathSet &body) {
  std::string token = "loop{";
  for (const Signature &path : body.paths) {
    token += "[";
    for (const std::string &c : path)
      token += c + ";";
    token += "]";
  }
  return token + (body.overflowed ? "...}" : "}");
}

} // namespace

bool PathSet::issuesCollectives() const {
  return overflowed ||
         std::any_of(paths.begin(), paths.end(), [](const Signature &p) { return !p.empty(); });
}

PathSet PathSet::then(const PathSet &next) const {
  PathSet out;
  out.paths.clear();
  out.overflowed = overflowed || next.overflowed;
  for (const Signature &a : paths)
    for (const Signature &b : next.paths) {
      Signature joined = a;
      joined.insert(joined.end(), b.begin(), b.end());
      out.paths.push_back(std::move(joined));
    }
  normalize(out);
  return out;
}

PathSet PathSet::either(const PathSet &other) const {
  PathSet out = *this;
  out.overflowed = overflowed || other.overflowed;
  out.paths.insert(out.paths.end(), other.paths.begin(), other.paths.end());
  normalize(out);
  return out;
}

bool PathSet::onlyReordered() const {
  if (overflowed || paths.size() < 2)
    return false;
  Signature first = paths.front();
  std::sort(first.begin(), first.end());
  return std::all_of(paths.begin(), paths.end(), [&](Signature p) {
    std::sort(p.begin(), p.end());
    return p == first;
  });
}

std::string CollectiveSignatures::displayName(const clang::FunctionDecl *function) {
  // getNameAsString: operators and conversions have no plain identifier, lambdas' classes no name.
  if (const auto *method = llvm::dyn_cast<clang::CXXMethodDecl>(function)) {
    const clang::CXXRecordDecl *owner = method->getParent();
    std::string ownerName = owner->isLambda() || !owner->getIdentifier() ? std::string("(lambda)")
                                                                         : owner->getNameAsString();
    return ownerName + "::" + method->getNameAsString();
  }
  return function->getNameAsString();
}

PathSet CollectiveSignatures::of(const clang::Stmt *stmt) {
  if (!stmt)
    return PathSet{};
  auto it = byStmt_.find(stmt);
  if (it != byStmt_.end())
    return it->second;
  PathSet set = compute(stmt);
  byStmt_[stmt] = set;
  return set;
}

PathSet CollectiveSignatures::ofFunction(const clang::FunctionDecl *function) {
  const clang::FunctionDecl *definition = nullptr;
  if (!function || !function->hasBody(definition) || !definition)
    return PathSet{};
  auto it = byFunction_.find(definition);
  if (it != byFunction_.end())
    return it->second;
  // A recursive function contributes nothing while its own signature is being computed.
  if (!inProgress_.insert(definition).second)
    return PathSet{};
  PathSet set = of(definition->getBody());
  inProgress_.erase(definition);
  byFunction_[definition] = set;
  return set;
}

PathSet CollectiveSignatures::compute(const clang::Stmt *stmt) {
  using namespace clang;
  if (isa<LambdaExpr>(stmt))
    return PathSet{}; // a lambda's body runs where the closure is called
  if (const auto *branch = dyn_cast<IfStmt>(stmt))
    return of(branch->getInit())
        .then(of(branch->getConditionVariableDeclStmt()))
        .then(of(branch->getCond()))
        .then(of(branch->getThen()).either(of(branch->getElse())));
  if (const auto *cond = dyn_cast<AbstractConditionalOperator>(stmt))
    return of(cond->getCond()).then(of(cond->getTrueExpr()).either(of(cond->getFalseExpr())));
  if (const auto *logical = dyn_cast<BinaryOperator>(stmt); logical && logical->isLogicalOp())
    return of(logical->getLHS()).then(of(logical->getRHS()).either(PathSet{}));
  if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(stmt)) {
    PathSet body;
    const Stmt *init = nullptr;
    if (const auto *loop = dyn_cast<ForStmt>(stmt)) {
      init = loop->getInit();
      body = of(loop->getCond()).then(of(loop->getBody())).then(of(loop->getInc()));
    } else if (const auto *loop = dyn_cast<WhileStmt>(stmt)) {
      body = of(loop->getCond()).then(of(loop->getBody()));
    } else if (const auto *loop = dyn_cast<DoStmt>(stmt)) {
      body = of(loop->getBody()).then(of(loop->getCond()));
    } else {
      const auto *range = cast<CXXForRangeStmt>(stmt);
      init = range->getRangeInit();
      body = of(range->getBody());
    }
    PathSet start = of(init);
    return body.issuesCollectives() ? start.then(one(loopToken(body))) : start;
  }
  PathSet set;
  for (const Stmt *child : stmt->children())
    if (child)
      set = set.then(of(child));
  const auto *call = dyn_cast<CallExpr>(stmt);
  const FunctionDecl *callee = call ? calleeOf(call) : nullptr;
  if (!callee)
    return set;
  // A call that ends the process (exit, abort, MPI_Abort, a [[noreturn]] function): no path goes
  // on from it, so it issues nothing the other ranks wait for.
  const FunctionSummary *summary =
      project_ && !callee->hasBody() ? project_->find(callee) : nullptr;
  if (callee->isNoReturn() || (callee->getIdentifier() && callee->getName() == "MPI_Abort") ||
      (summary && summary->endsProcess)) {
    PathSet none;
    none.paths.clear();
    return none;
  }
  const ReducerTable::Match match = table_.lookup(callee);
  if (match.reducer)
    return set.then(one(displayName(callee)));
  if (match)
    return set;
  // A function of another translation unit: the collectives its summary says every path issues.
  if (summary) {
    PathSet issued;
    issued.paths = {summary->collectives};
    return set.then(issued);
  }
  return set.then(ofFunction(callee));
}

} // namespace collcheck::lint
