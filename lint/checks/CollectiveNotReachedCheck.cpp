#include "checks/CollectiveNotReachedCheck.h"
#include "engine/Callee.h"

#include "checks/Describe.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"

namespace collcheck::lint {
namespace {

// Leaders chosen by their rank in one communicator (`local_rank == 0`) issuing a collective on
// another one: the members of that other communicator are often exactly those leaders (the
// cross-node communicator of a hierarchical all-reduce, split by the local rank), and which ranks
// it holds is not visible here. Not when either is MPI_COMM_WORLD, which holds every rank, nor
// when the collective's communicator is not named.
bool leadersElsewhere(const ControlDependence &dep, const CollectiveEvent &event) {
  const std::string &ranked = dep.rankCommunicator;
  return !ranked.empty() && ranked != kWorldCommunicator && !event.communicator.empty() &&
         event.communicator != kWorldCommunicator && event.communicator != ranked;
}

// A condition matters when it is not rank-uniform and depends on the rank or on a local count,
// and the paths it chooses between do not issue the same collectives.
bool divergent(const ControlDependence &dep, const CollectiveEvent &event) {
  bool onSubCommunicator = event.onSubCommunicator;
  // A guard on membership of the communicator the collective runs on: the ranks it keeps out are
  // no members, and a collective involves its members only.
  if (dep.membershipOf && llvm::is_contained(event.argumentDecls, dep.membershipOf))
    return false;
  const Value &v = dep.value;
  if (v.uniform || dep.balanced || !(v.rankDerived || v.countDerived))
    return false;
  // Precision before recall: a dependence only names suggest (`count`, `num_tokens`, `rank` of
  // unseen origin) is no finding; every rank may well hold the same value there.
  if (v.guessed)
    return false;
  // Ranks chosen by a colour talk on the communicator that colour built.
  if (onSubCommunicator && v.rankDerived && !v.countDerived)
    return false;
  return !(v.rankDerived && !v.countDerived && leadersElsewhere(dep, event));
}

// The collective whose output differs from rank to rank (a prefix, a piece of a scatter), if the
// value came from one.
std::string leftDifferentBy(const Origin &source) {
  const auto *call = llvm::dyn_cast_or_null<clang::CallExpr>(source.at);
  const clang::FunctionDecl *callee = call ? calleeOf(call) : nullptr;
  if (!source.perRankResult || !callee || !callee->getIdentifier())
    return "";
  return callee->getName().str();
}

std::string dependsOn(const Value &v, const clang::ASTContext &context) {
  if (v.rootOnly && v.rankSource.subject)
    return quoted(v.rankSource.subject) + ", a reduce's result, which only its root receives";
  if (v.rootOnly)
    return "a reduce's result, which only its root receives";
  if (v.rankDerived)
    return v.rankSource.subject ? "the rank (" + quoted(v.rankSource.subject) + ")" : "the rank";
  if (v.countSource.subject)
    if (std::string by = leftDifferentBy(v.countSource); !by.empty())
      return quoted(v.countSource.subject) + ", which " + by + " leaves different on each rank";
  // `batches.size()`: name the size, not the container.
  if (llvm::isa_and_nonnull<clang::CallExpr>(v.countSource.at))
    return "'" + sourceText(v.countSource.at, context) + "', a count of this rank's items";
  if (v.countSource.subject)
    return quoted(v.countSource.subject) + ", a count of this rank's items";
  return "a count of this rank's items";
}

std::string jumpName(const clang::Stmt *jump, const clang::ASTContext &context) {
  if (llvm::isa<clang::ContinueStmt>(jump))
    return "continue";
  if (llvm::isa<clang::BreakStmt>(jump))
    return "break";
  if (llvm::isa<clang::CXXThrowExpr>(jump))
    return "throw";
  if (const auto *call = llvm::dyn_cast<clang::CallExpr>(jump)) {
    // As written (`std::exit`, not the `::exit` it names), unless a macro hides the spelling.
    const clang::Expr *callee = call->getCallee();
    if (callee->getBeginLoc().isFileID())
      return sourceText(callee, context);
    if (const clang::FunctionDecl *fn = calleeOf(call))
      return fn->getQualifiedNameAsString();
  }
  return "return";
}

// The jump, and the function it is taken in when that is a callee: "std::exit in 'validate'".
std::string exitName(const ControlDependence &dep, const clang::ASTContext &context) {
  std::string name = jumpName(dep.exit, context);
  if (dep.exitIn)
    name += " in '" + dep.exitIn->getNameAsString() + "'";
  return name;
}

} // namespace

void CollectiveNotReachedCheck::onCollective(const CollectiveEvent &event,
                                             clang::ASTContext &context,
                                             std::vector<Finding> &out) {
  const ControlDependence *culprit = nullptr;
  for (auto it = event.controls.rbegin(); it != event.controls.rend() && !culprit; ++it)
    if (divergent(*it, event))
      culprit = &*it;
  if (!culprit)
    return;
  std::string cond = "'" + sourceText(culprit->condition, context) + "'";
  const char *holds = culprit->negated ? " does not hold" : " holds";
  std::string dependence = dependsOn(culprit->value, context);
  std::string why, because = ", which depends on " + dependence;
  std::string noteText = "this condition differs across ranks: it depends on " + dependence;
  using Kind = ControlDependence::Kind;
  switch (culprit->kind) {
  case Kind::Branch:
    why = "it is issued only where " + cond + holds;
    break;
  case Kind::Loop:
    if (!culprit->overRange) {
      why = "it is issued once per iteration of a loop bounded by " + cond;
      break;
    }
    why = "it is issued once per element of " + cond;
    noteText = "this range's size differs across ranks: ";
    // The range itself is the count: naming it again as what the size depends on says nothing.
    if (!culprit->value.rankDerived && culprit->value.countSource.at == culprit->condition) {
      because = ", whose size is a count of this rank's items";
      noteText += "it is a count of this rank's items";
    } else {
      noteText += "it depends on " + dependence;
    }
    break;
  case Kind::EarlyExit:
    why = "ranks where " + cond + holds + " skip it (" + exitName(*culprit, context) + ")";
    break;
  case Kind::LoopExit:
    why = "ranks where " + cond + holds + " leave its loop early (" + exitName(*culprit, context) +
          ")";
    break;
  }
  if (culprit->reordered && culprit->kind == Kind::Branch)
    why = "the branches of " + cond + " issue the same collectives in different orders";
  Finding f =
      finding(event.call, "'" + event.name + "' is not reached by every rank: " + why + because +
                              "; issue it on every rank (a zero contribution is fine) or "
                              "make the condition rank-uniform");
  f.notes.push_back({culprit->condition->getExprLoc(), noteText});
  if (culprit->via)
    f.notes.push_back({culprit->via->getExprLoc(), "the ranks leave inside this call"});
  if (culprit->exit)
    f.notes.push_back({culprit->exit->getBeginLoc(), "ranks taking this path leave here"});
  const Origin &source =
      culprit->value.rankDerived ? culprit->value.rankSource : culprit->value.countSource;
  // A count formed by the condition itself (the range of a range-for) has its note already.
  if (source.at && source.at != culprit->condition)
    addNote(f, source,
            culprit->value.rankDerived ? "the rank is read here"
                                       : "this rank's count is formed here");
  out.push_back(std::move(f));
}

} // namespace collcheck::lint
