// Separate ifs that together issue the same collectives on every rank. No one of
//
//   if (rank == src) MPI_Barrier(comm);
//   if (rank == dest) MPI_Barrier(comm);
//   if (rank != src && rank != dest) MPI_Barrier(comm);
//
// is balanced alone, but in whichever way the rank compares with `src` and `dest` (below, equal
// or above each) the three issue one barrier. A run of sibling statements whose ifs compare one
// variable with the same operands is proved so: every ordering of the variable against the
// operands that can hold decides those ifs, and every ordering must issue the same sequence of
// collectives. The ifs of a proved run are then balanced. Anything the proof cannot see through
// (a condition that tests something else, a write to the variable or an operand inside the run,
// a jump out of it, collectives on different communicators) leaves the run unproved, and its
// ifs are judged one by one as before.

#include "engine/flow/Walker.h"

#include "llvm/ADT/FoldingSet.h"

#include <functional>
#include <limits>

namespace collcheck::lint {
namespace {

constexpr unsigned kMaxRun = 8;      // statements of a run
constexpr unsigned kMaxOperands = 4; // 3^4 orderings

bool sameExpr(const ASTContext &context, const Expr *a, const Expr *b) {
  llvm::FoldingSetNodeID x, y;
  a->IgnoreParenImpCasts()->Profile(x, context, /*Canonical=*/true);
  b->IgnoreParenImpCasts()->Profile(y, context, /*Canonical=*/true);
  return x == y;
}

// Whether evaluating `e` twice gives the same value as long as the variables it reads keep
// theirs: no call, no side effect.
bool plainValue(const ASTContext &context, const Expr *e) {
  if (!e || e->isValueDependent() || e->isTypeDependent() || e->HasSideEffects(context))
    return false;
  std::function<bool(const Stmt *)> callFree = [&](const Stmt *s) {
    if (!s)
      return true;
    if (isa<CallExpr, LambdaExpr, CXXConstructExpr, StmtExpr>(s))
      return false;
    return llvm::all_of(s->children(), callFree);
  };
  return callFree(e);
}

// A variable or a field of one, of an integral type: what the ifs of a run may compare.
bool subjectLike(const ASTContext &context, const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (!isa<DeclRefExpr, MemberExpr>(e) || !hasType(e) ||
      !e->getType()->isIntegralOrEnumerationType() || !plainValue(context, e))
    return false;
  if (const auto *ref = dyn_cast<DeclRefExpr>(e))
    return isa<VarDecl>(ref->getDecl());
  return true;
}

// The variables and fields `e` reads.
void declsRead(const Stmt *e, llvm::SmallVectorImpl<const ValueDecl *> &out) {
  if (!e)
    return;
  if (const auto *ref = dyn_cast<DeclRefExpr>(e))
    if (isa<VarDecl>(ref->getDecl()))
      out.push_back(ref->getDecl());
  if (const auto *member = dyn_cast<MemberExpr>(e))
    out.push_back(member->getMemberDecl());
  for (const Stmt *child : e->children())
    declsRead(child, out);
}

// Whether `s` calls a function whose body may write what it does not receive by argument
// (a function defined here, a non-const member function).
bool callsDefinedFunction(const Stmt *s) {
  if (!s)
    return false;
  if (const auto *call = dyn_cast<CallExpr>(s)) {
    const FunctionDecl *callee = calleeOf(call);
    if (!callee || callee->hasBody())
      return true;
    if (const auto *method = dyn_cast<CXXMethodDecl>(callee);
        method && method->isInstance() && !method->isConst())
      return true;
  }
  return llvm::any_of(s->children(), callsDefinedFunction);
}

// Whether `s` throws: the ranks that do leave the run with the collectives after the throw
// unissued.
bool throws(const Stmt *s) {
  if (!s || isa<LambdaExpr>(s))
    return false;
  return isa<CXXThrowExpr>(s) || llvm::any_of(s->children(), throws);
}

// The comparisons a partition decides (not `<=>`, whose result is no truth).
bool decidable(BinaryOperatorKind op) {
  return op == BO_EQ || op == BO_NE || op == BO_LT || op == BO_LE || op == BO_GT || op == BO_GE;
}

// A condition beneath its parentheses and conversions to a truth value, which test what they
// convert (a narrowing cast, `(char)rank`, tests something else and is kept).
const Expr *testOf(const Expr *cond) {
  while (true) {
    cond = cond->IgnoreParenImpCasts();
    const auto *cast = dyn_cast<ExplicitCastExpr>(cond);
    if (!cast || !cast->getType()->isBooleanType())
      return cond;
    cond = cast->getSubExpr();
  }
}

// Whether `subject OP operand` holds where the subject is below (-1), equal to (0) or above (1)
// the operand.
bool holds(BinaryOperatorKind op, int8_t order) {
  switch (op) {
  case BO_EQ:
    return order == 0;
  case BO_NE:
    return order != 0;
  case BO_LT:
    return order < 0;
  case BO_LE:
    return order <= 0;
  case BO_GT:
    return order > 0;
  case BO_GE:
    return order >= 0;
  default:
    return false;
  }
}

// The comparison `cond` makes of the subject, its operator as if the subject were on the left,
// and the operand (null for the zero of a bare `if (rank)`). Not a comparison of the subject:
// nullopt.
struct Comparison {
  BinaryOperatorKind op;
  const Expr *operand;
};

std::optional<Comparison> comparisonOf(const ASTContext &context, const Expr *cond,
                                       const Expr *subject) {
  cond = testOf(cond);
  if (const auto *binary = dyn_cast<BinaryOperator>(cond)) {
    BinaryOperatorKind op = binary->getOpcode();
    if (!decidable(op))
      return std::nullopt;
    const Expr *lhs = binary->getLHS(), *rhs = binary->getRHS();
    bool left = sameExpr(context, lhs, subject), right = sameExpr(context, rhs, subject);
    if (left == right || !plainValue(context, left ? rhs : lhs))
      return std::nullopt;
    // A signed subject compared as unsigned (`rank < 5u`) is ordered otherwise than as itself.
    if (subject->getType()->isSignedIntegerOrEnumerationType() &&
        lhs->getType()->isUnsignedIntegerOrEnumerationType())
      return std::nullopt;
    // `src > rank` is `rank < src`.
    return Comparison{left ? op : BinaryOperator::reverseComparisonOp(op), left ? rhs : lhs};
  }
  if (sameExpr(context, cond, subject))
    return Comparison{BO_NE, nullptr};
  return std::nullopt;
}

} // namespace

// The index of `operand` among the partition's operands: two constants of one value, or the
// same expression.
std::optional<unsigned> FlowAnalysis::Walker::operandIndex(const Expr *operand,
                                                           const Partition &p) const {
  std::optional<int64_t> constant = constantOperand(operand);
  for (unsigned i = 0; i < p.operands.size(); ++i) {
    const Partition::Operand &known = p.operands[i];
    if (constant || known.constant) {
      if (constant && known.constant && *constant == *known.constant)
        return i;
    } else if (sameExpr(context_, operand, known.expr)) {
      return i;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> FlowAnalysis::Walker::constantOperand(const Expr *operand) const {
  if (!operand)
    return 0;
  // In the type of the comparison (`-1` against an unsigned subject is its largest value).
  Expr::EvalResult result;
  if (operand->EvaluateAsInt(result, context_))
    return result.Val.getInt().tryExtValue();
  return std::nullopt;
}

// Whether `cond` is built of comparisons of the subject only (with !, && and ||); with
// `addOperands`, their operands join the partition's while there is room.
bool FlowAnalysis::Walker::comparisonsOf(const Expr *cond, Partition &p, bool addOperands) const {
  if (!cond)
    return false;
  cond = testOf(cond);
  if (const auto *unary = dyn_cast<UnaryOperator>(cond); unary && unary->getOpcode() == UO_LNot)
    return comparisonsOf(unary->getSubExpr(), p, addOperands);
  if (const auto *binary = dyn_cast<BinaryOperator>(cond); binary && binary->isLogicalOp())
    return comparisonsOf(binary->getLHS(), p, addOperands) &&
           comparisonsOf(binary->getRHS(), p, addOperands);
  auto compared = comparisonOf(context_, cond, p.subject);
  if (!compared)
    return false;
  if (operandIndex(compared->operand, p))
    return true;
  if (!addOperands || p.operands.size() >= kMaxOperands)
    return false;
  Partition::Operand fresh;
  fresh.expr = compared->operand;
  fresh.constant = constantOperand(compared->operand);
  p.operands.push_back(fresh);
  return true;
}

// The truth of `cond` (of which comparisonsOf holds) where the subject compares with the
// operands as `ways` says.
bool FlowAnalysis::Walker::truthIn(const Expr *cond, const Partition &p,
                                   const Ordering &ways) const {
  cond = testOf(cond);
  if (const auto *unary = dyn_cast<UnaryOperator>(cond); unary && unary->getOpcode() == UO_LNot)
    return !truthIn(unary->getSubExpr(), p, ways);
  if (const auto *binary = dyn_cast<BinaryOperator>(cond); binary && binary->isLogicalOp()) {
    bool lhs = truthIn(binary->getLHS(), p, ways);
    return binary->getOpcode() == BO_LAnd ? lhs && truthIn(binary->getRHS(), p, ways)
                                          : lhs || truthIn(binary->getRHS(), p, ways);
  }
  auto compared = comparisonOf(context_, cond, p.subject);
  std::optional<unsigned> index = compared ? operandIndex(compared->operand, p) : std::nullopt;
  assert(index && "truthIn asked of a condition comparisonsOf rejects");
  return index && holds(compared->op, ways[*index]);
}

// The ifs under `s` (through blocks and branches) whose conditions compare the subject only.
void FlowAnalysis::Walker::collectDecided(const Stmt *s, Partition &p) const {
  if (const auto *block = dyn_cast_or_null<CompoundStmt>(s)) {
    for (const Stmt *child : block->body())
      collectDecided(child, p);
    return;
  }
  const auto *branch = dyn_cast_or_null<IfStmt>(s);
  if (!branch)
    return;
  if (!branch->getInit() && !branch->getConditionVariable() && !branch->isConsteval() &&
      comparisonsOf(branch->getCond(), p, /*addOperands=*/true))
    p.decided.push_back(branch);
  collectDecided(branch->getThen(), p);
  collectDecided(branch->getElse(), p);
}

// Whether the subject and the operands keep their values through the run: nothing in it writes
// what they read, and where that is not a local variable of this function (a global, a field),
// nothing in it calls a function that could.
bool FlowAnalysis::Walker::stableIn(llvm::ArrayRef<const Stmt *> run, const Partition &p) const {
  llvm::SmallVector<const ValueDecl *, 8> read;
  declsRead(p.subject, read);
  for (const Partition::Operand &operand : p.operands)
    if (!operand.constant)
      declsRead(operand.expr, read);
  bool reachable = false; // by code outside the run's own text
  for (const ValueDecl *decl : read) {
    const auto *var = dyn_cast<VarDecl>(decl);
    if (!var || !var->hasLocalStorage() || var->getType()->isReferenceType())
      reachable = true;
  }
  for (const Stmt *s : run) {
    for (const ValueDecl *decl : read)
      if (writes(s, decl))
        return false;
    if (reachable && callsDefinedFunction(s))
      return false;
  }
  return true;
}

// Whether every collective the run calls directly names the same communicator (those it issues
// through functions of its own are compared by name, as for the two sides of one if).
bool FlowAnalysis::Walker::oneCommunicator(llvm::ArrayRef<const Stmt *> run) const {
  const Expr *first = nullptr;
  bool same = true;
  std::function<void(const Stmt *)> visit = [&](const Stmt *s) {
    if (!s || !same || isa<LambdaExpr>(s))
      return;
    if (const auto *call = dyn_cast<CallExpr>(s))
      if (const FunctionDecl *callee = calleeOf(call))
        if (const ReducerSpec *spec = table_.lookup(callee).reducer;
            spec && spec->comm >= 0 && static_cast<unsigned>(spec->comm) < call->getNumArgs()) {
          const Expr *comm = call->getArg(spec->comm);
          if (!first)
            first = comm;
          else if (!sameExpr(context_, first, comm))
            same = false;
        }
    for (const Stmt *child : s->children())
      visit(child);
  };
  for (const Stmt *s : run)
    visit(s);
  return same;
}

// Whether the subject can compare with the operands as `ways` says. Operands whose values are
// unknown can stand anywhere (two of them may be equal); constants must leave room for an integer,
// a rank is never negative and always below the communicator size.
bool FlowAnalysis::Walker::possible(const Partition &p, const Ordering &ways) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t lo = p.nonNegative ? 0 : kMin, hi = kMax;
  for (unsigned i = 0; i < p.operands.size(); ++i) {
    const Partition::Operand &operand = p.operands[i];
    if (operand.size && p.nonNegative && ways[i] >= 0)
      return false;
    if (!operand.constant)
      continue;
    int64_t c = *operand.constant;
    if (ways[i] == 0) {
      lo = std::max(lo, c);
      hi = std::min(hi, c);
    } else if (ways[i] < 0) {
      if (c == kMin)
        return false;
      hi = std::min(hi, c - 1);
    } else {
      if (c == kMax)
        return false;
      lo = std::max(lo, c + 1);
    }
  }
  return lo <= hi;
}

// The sequences of collectives `s` may issue where the subject compares with the operands as
// `ways` says: the ifs it decides take one side.
PathSet FlowAnalysis::Walker::pathsIn(const Stmt *s, const Partition &p, const Ordering &ways) {
  if (!s)
    return PathSet{};
  if (const auto *block = dyn_cast<CompoundStmt>(s)) {
    PathSet out;
    for (const Stmt *child : block->body())
      out = out.then(pathsIn(child, p, ways));
    return out;
  }
  if (const auto *branch = dyn_cast<IfStmt>(s); branch && llvm::is_contained(p.decided, branch))
    return pathsIn(truthIn(branch->getCond(), p, ways) ? branch->getThen() : branch->getElse(), p,
                   ways);
  return signatures_.of(s);
}

// Whether the run issues the same sequence of collectives in every possible ordering of the
// subject against the operands (and some collective at all).
bool FlowAnalysis::Walker::provePartitionOf(llvm::ArrayRef<const Stmt *> run, Partition &p) {
  if (llvm::none_of(run, [&](const Stmt *s) { return signatures_.of(s).issuesCollectives(); }))
    return false;
  p.operands.clear();
  p.decided.clear();
  for (const Stmt *s : run)
    collectDecided(s, p);
  if (p.decided.empty() || !stableIn(run, p) || !oneCommunicator(run))
    return false;
  for (Partition::Operand &operand : p.operands)
    if (const auto *ref = dyn_cast_or_null<DeclRefExpr>(
            operand.expr ? operand.expr->IgnoreParenImpCasts() : nullptr);
        ref && !operand.constant)
      operand.size = readLocation(keyOf(ref->getDecl())).exactSize;
  PathSet all;
  all.paths.clear();
  Ordering ways(p.operands.size(), -1);
  while (true) {
    if (possible(p, ways)) {
      PathSet paths;
      for (const Stmt *s : run)
        paths = paths.then(pathsIn(s, p, ways));
      all = all.either(paths);
      if (!all.single())
        return false;
    }
    // The next ordering, as a number in base 3.
    unsigned i = 0;
    while (i < ways.size() && ways[i] == 1)
      ways[i++] = -1;
    if (i == ways.size())
      break;
    ++ways[i];
  }
  return all.issuesCollectives() && all.single();
}

// The statements from `first` on in `block` that form a run of ifs splitting the ranks, proved
// (the shortest that is): their number, 0 if none. The ifs of the run count as balanced
// (partitioned_) until the walk of the block ends; they are added to `proved`.
unsigned FlowAnalysis::Walker::provePartition(const CompoundStmt *block, unsigned first,
                                              llvm::SmallVectorImpl<const IfStmt *> &proved) {
  llvm::ArrayRef<const Stmt *> body(block->body_begin(), block->size());
  const auto *head = dyn_cast<IfStmt>(body[first]);
  if (!head || head->getInit() || head->getConditionVariable() || head->isConsteval())
    return 0;
  // The subject: a side of the first comparison the condition makes.
  const Expr *cond = testOf(head->getCond());
  while (true) {
    if (const auto *unary = dyn_cast<UnaryOperator>(cond); unary && unary->getOpcode() == UO_LNot)
      cond = testOf(unary->getSubExpr());
    else if (const auto *binary = dyn_cast<BinaryOperator>(cond); binary && binary->isLogicalOp())
      cond = testOf(binary->getLHS());
    else
      break;
  }
  llvm::SmallVector<const Expr *, 2> subjects;
  if (const auto *binary = dyn_cast<BinaryOperator>(cond); binary && binary->isComparisonOp()) {
    subjects.push_back(binary->getLHS());
    subjects.push_back(binary->getRHS());
  } else {
    subjects.push_back(cond);
  }
  for (const Expr *subject : subjects) {
    if (!subjectLike(context_, subject))
      continue;
    Partition p;
    p.subject = subject->IgnoreParenImpCasts();
    if (const auto *ref = dyn_cast<DeclRefExpr>(p.subject))
      p.nonNegative = readLocation(keyOf(ref->getDecl())).exactRank;
    if (!comparisonsOf(head->getCond(), p, true))
      continue;
    for (unsigned last = first; last < body.size() && last - first < kMaxRun; ++last) {
      const Stmt *s = body[last];
      if (isa<SwitchCase, LabelStmt>(s) || mayLeave(s) || throws(s))
        break;
      const auto *branch = dyn_cast<IfStmt>(s);
      Partition probe = p;
      if (!branch || !comparisonsOf(branch->getCond(), probe, true))
        continue;
      llvm::ArrayRef<const Stmt *> run = body.slice(first, last - first + 1);
      if (!provePartitionOf(run, p))
        continue;
      for (const IfStmt *decided : p.decided) {
        ++partitioned_[decided];
        proved.push_back(decided);
      }
      return last - first + 1;
    }
  }
  return 0;
}

} // namespace collcheck::lint
