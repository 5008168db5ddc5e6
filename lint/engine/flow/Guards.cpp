// States and the guards drawn from conditions: joining and comparing the states of two paths,
// what a condition tells about the values it tests (a count that cannot be zero), and the
// membership tests of a communicator (`comm != MPI_COMM_NULL`).

#include "engine/flow/Walker.h"

namespace collcheck::lint {

Value FlowAnalysis::Walker::lookupIn(const State &s, LocKey key) {
  auto it = s.values.find(key);
  return it != s.values.end() ? it->second : defaultFor(key);
}

State FlowAnalysis::Walker::joinStates(const State &a, const State &b) {
  if (!a.reachable)
    return b;
  if (!b.reachable)
    return a;
  State r;
  for (const auto &[key, value] : a.values)
    r.values[key] = b.values.count(key) ? join(value, b.values.find(key)->second)
                                        : join(value, lookupIn(b, key));
  for (const auto &[key, value] : b.values)
    if (!a.values.count(key))
      r.values[key] = join(lookupIn(a, key), value);
  r.aliases = a.aliases;
  for (const auto &[base, targets] : b.aliases) {
    Locations &merged = r.aliases[base];
    for (const LocKey &t : targets)
      if (llvm::find(merged, t) == merged.end())
        merged.push_back(t);
  }
  return r;
}

bool FlowAnalysis::Walker::sameState(const State &a, const State &b) {
  if (a.reachable != b.reachable || a.values.size() != b.values.size())
    return false;
  for (const auto &[key, value] : a.values) {
    auto it = b.values.find(key);
    if (it == b.values.end() || !value.sameFacts(it->second))
      return false;
  }
  return true;
}

std::optional<double> FlowAnalysis::Walker::literalValue(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (const auto *i = dyn_cast<IntegerLiteral>(e))
    return static_cast<double>(i->getValue().getSExtValue());
  if (const auto *f = dyn_cast<FloatingLiteral>(e))
    return f->getValueAsApproximateDouble();
  if (const auto *u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_Minus)
    if (auto v = literalValue(u->getSubExpr()))
      return -*v;
  return std::nullopt;
}

BinaryOperatorKind FlowAnalysis::Walker::negate(BinaryOperatorKind op) {
  switch (op) {
  case BO_LT:
    return BO_GE;
  case BO_GE:
    return BO_LT;
  case BO_GT:
    return BO_LE;
  case BO_LE:
    return BO_GT;
  case BO_EQ:
    return BO_NE;
  case BO_NE:
    return BO_EQ;
  default:
    return op;
  }
}

BinaryOperatorKind FlowAnalysis::Walker::mirror(BinaryOperatorKind op) {
  switch (op) {
  case BO_LT:
    return BO_GT;
  case BO_GT:
    return BO_LT;
  case BO_LE:
    return BO_GE;
  case BO_GE:
    return BO_LE;
  default:
    return op;
  }
}

// Whether `x OP c` being true rules out x == 0.
bool FlowAnalysis::Walker::impliesNonZero(BinaryOperatorKind op, double c) {
  switch (op) {
  case BO_GT:
    return c >= 0;
  case BO_GE:
    return c > 0;
  case BO_NE:
    return c == 0;
  case BO_EQ:
    return c != 0;
  case BO_LT:
    return c <= 0;
  case BO_LE:
    return c < 0;
  default:
    return false;
  }
}

void FlowAnalysis::Walker::markNonZero(State &s, const Expr *e) {
  for (const LocKey &key : lvalueLocations(e)) {
    Value v = lookupIn(s, key);
    v.nonZero = true;
    s.values[key] = v;
  }
}

// The state in which `cond` evaluated to `truth`: `N > 0`, `N != 0`, `!N`, `N` and their
// conjunctions guard N against zero.
State FlowAnalysis::Walker::refine(const State &in, const Expr *cond, bool truth) {
  State s = in;
  if (!cond)
    return s;
  refineInto(s, cond, truth);
  return s;
}

void FlowAnalysis::Walker::refineInto(State &s, const Expr *cond, bool truth, int depth) {
  // `static_cast<bool>(N > 0)` (what assert expands to) tests the same thing.
  cond = cond->IgnoreParenCasts();
  if (const auto *unary = dyn_cast<UnaryOperator>(cond); unary && unary->getOpcode() == UO_LNot)
    return refineInto(s, unary->getSubExpr(), !truth, depth);
  if (const auto *binary = dyn_cast<BinaryOperator>(cond)) {
    BinaryOperatorKind op = binary->getOpcode();
    if (op == BO_LAnd && truth) {
      refineInto(s, binary->getLHS(), true, depth);
      refineInto(s, binary->getRHS(), true, depth);
      return;
    }
    if (op == BO_LOr && !truth) {
      refineInto(s, binary->getLHS(), false, depth);
      refineInto(s, binary->getRHS(), false, depth);
      return;
    }
    if (!binary->isComparisonOp())
      return;
    if (!truth)
      op = negate(op);
    if (auto c = literalValue(binary->getRHS()); c && impliesNonZero(op, *c))
      markNonZero(s, binary->getLHS());
    else if (auto c = literalValue(binary->getLHS()); c && impliesNonZero(mirror(op), *c))
      markNonZero(s, binary->getRHS());
    return;
  }
  // `const bool empty = N == 0; if (empty) return ...;`: a named test is the test it names, as
  // long as nothing it read has been written since.
  if (const auto *ref = dyn_cast<DeclRefExpr>(cond))
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()); var && depth < 4)
      if (auto it = namedTests_.find(var); it != namedTests_.end() && stillHolds(it->second))
        refineInto(s, var->getInit(), truth, depth + 1);
  if (truth && (isa<DeclRefExpr>(cond) || isa<MemberExpr>(cond)))
    markNonZero(s, cond);
}

// The communicator `cond` tests for membership: `comm == MPI_COMM_NULL`, `comm != MPI_COMM_NULL`
// (what MPI_Comm_split with MPI_UNDEFINED, MPI_Comm_create and friends give the ranks left out),
// or a communicator handle compared with a null pointer.
const NamedDecl *FlowAnalysis::Walker::membershipTested(const Expr *cond) {
  const auto *binary = dyn_cast_or_null<BinaryOperator>(cond ? cond->IgnoreParenCasts() : nullptr);
  if (!binary || (binary->getOpcode() != BO_EQ && binary->getOpcode() != BO_NE))
    return nullptr;
  auto isNull = [&](const Expr *e) {
    if (auto macro = macroNameAt(e->getBeginLoc()); macro && *macro == "MPI_COMM_NULL")
      return true;
    return !e->isValueDependent() &&
           e->isNullPointerConstant(context_, Expr::NPC_ValueDependentIsNotNull) !=
               Expr::NPCK_NotNull;
  };
  auto isCommunicator = [&](const Expr *e) {
    if (!hasType(e))
      return false;
    std::string type = e->IgnoreParenImpCasts()->getType().getAsString();
    return type.find("Comm") != std::string::npos;
  };
  const Expr *lhs = binary->getLHS(), *rhs = binary->getRHS();
  const Expr *comm = isNull(rhs) ? lhs : (isNull(lhs) ? rhs : nullptr);
  if (!comm || !isCommunicator(comm))
    return nullptr;
  const NamedDecl *decl = coreDecl(comm);
  return decl ? cast<NamedDecl>(decl->getCanonicalDecl()) : nullptr;
}

} // namespace collcheck::lint
