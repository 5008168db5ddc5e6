#include "engine/Value.h"

#include <algorithm>

namespace collcheck::lint {
namespace {

int8_t clampPower(int value) { return static_cast<int8_t>(std::clamp(value, -4, 4)); }

// Merge of one exponent: a division on either path wins, then a count on either path.
int8_t joinPower(int8_t a, int8_t b) {
  if (a == b)
    return a;
  if (a < 0 || b < 0)
    return std::min(a, b);
  return std::max(a, b);
}

ReduceOpKind joinOp(ReduceOpKind a, ReduceOpKind b) {
  if (a == b || b == ReduceOpKind::None)
    return a;
  if (a == ReduceOpKind::None)
    return b;
  return ReduceOpKind::Unknown;
}

// Fields known on both paths, each joined; none when the two were built differently.
std::shared_ptr<const FieldValues> joinFields(const std::shared_ptr<const FieldValues> &a,
                                              const std::shared_ptr<const FieldValues> &b) {
  if (!a || !b || a == b)
    return a == b ? a : nullptr;
  if (a->items.size() != b->items.size())
    return nullptr;
  auto r = std::make_shared<FieldValues>();
  for (size_t i = 0; i < a->items.size(); ++i) {
    if (a->items[i].first != b->items[i].first)
      return nullptr;
    r->items.emplace_back(a->items[i].first, join(a->items[i].second, b->items[i].second));
  }
  return r;
}

} // namespace

const Value *FieldValues::find(const clang::FieldDecl *field) const {
  for (const auto &[f, v] : items)
    if (f == field)
      return &v;
  return nullptr;
}

CountPowers CountPowers::operator+(CountPowers other) const {
  return {clampPower(local + other.local), clampPower(reduced + other.reduced),
          clampPower(commSize + other.commSize)};
}

CountPowers CountPowers::operator-(CountPowers other) const {
  return {clampPower(local - other.local), clampPower(reduced - other.reduced),
          clampPower(commSize - other.commSize)};
}

Value Value::uniformConstant(double value) {
  Value v;
  v.uniform = true;
  v.constant = value;
  v.nonZero = value != 0;
  return v;
}

Value Value::communicatorSize() {
  Value v;
  v.uniform = v.exactSize = v.nonZero = true;
  v.powers.commSize = 1;
  return v;
}

bool Value::sameFacts(const Value &o) const {
  return uniform == o.uniform && reduced == o.reduced && rankDerived == o.rankDerived &&
         rootOnly == o.rootOnly && countDerived == o.countDerived && nonZero == o.nonZero &&
         mask == o.mask && exactRank == o.exactRank && exactSize == o.exactSize &&
         subCommunicator == o.subCommunicator && status == o.status && guessed == o.guessed &&
         integerCopy == o.integerCopy && powers == o.powers && constant == o.constant &&
         op == o.op && opScalar == o.opScalar &&
         (pendingSum == nullptr) == (o.pendingSum == nullptr) && paramMask == o.paramMask &&
         lambda == o.lambda;
}

bool guessedFrom(const Value &a, const Value &b) {
  bool ta = a.rankDerived || a.countDerived, tb = b.rankDerived || b.countDerived;
  return (ta || tb) && (!ta || a.guessed) && (!tb || b.guessed);
}

Value join(const Value &a, const Value &b) {
  Value r;
  r.uniform = a.uniform && b.uniform;
  r.reduced = a.reduced && b.reduced;
  r.rankDerived = a.rankDerived || b.rankDerived;
  r.rootOnly = a.rootOnly || b.rootOnly;
  r.countDerived = a.countDerived || b.countDerived;
  r.guessed = guessedFrom(a, b);
  r.nonZero = a.nonZero && b.nonZero;
  r.mask = a.mask || b.mask;
  r.exactRank = a.exactRank && b.exactRank;
  r.exactSize = a.exactSize && b.exactSize;
  r.subCommunicator = a.subCommunicator || b.subCommunicator;
  r.status = a.status || b.status;
  r.integerCopy = a.integerCopy || b.integerCopy;
  r.powers = {joinPower(a.powers.local, b.powers.local),
              joinPower(a.powers.reduced, b.powers.reduced),
              joinPower(a.powers.commSize, b.powers.commSize)};
  if (a.constant == b.constant)
    r.constant = a.constant;
  r.op = joinOp(a.op, b.op);
  r.opScalar = a.op == ReduceOpKind::PreMulSum ? a.opScalar : b.opScalar;
  r.opNamedAt = a.opNamedAt ? a.opNamedAt : b.opNamedAt;
  r.meanFormed = a.meanFormed ? a.meanFormed : b.meanFormed;
  r.normalized = a.normalized ? a.normalized : b.normalized;
  r.countReduced = a.countReduced ? a.countReduced : b.countReduced;
  r.rankSource = a.rankSource ? a.rankSource : b.rankSource;
  r.countSource = a.countSource ? a.countSource : b.countSource;
  r.sizeDivided = a.sizeDivided ? a.sizeDivided : b.sizeDivided;
  r.pendingSum = a.pendingSum ? a.pendingSum : b.pendingSum;
  r.paramMask = a.paramMask | b.paramMask;
  r.lambda = a.lambda ? a.lambda : b.lambda;
  r.fields = joinFields(a.fields, b.fields);
  return r;
}

Value mix(const Value &a, const Value &b) {
  Value r;
  r.status = a.status || b.status;
  r.uniform = a.uniform && b.uniform;
  r.rankDerived = a.rankDerived || b.rankDerived;
  r.rootOnly = a.rootOnly || b.rootOnly;
  r.countDerived = a.countDerived || b.countDerived;
  r.guessed = guessedFrom(a, b);
  r.rankSource = a.rankSource ? a.rankSource : b.rankSource;
  r.countSource = a.countSource ? a.countSource : b.countSource;
  r.paramMask = a.paramMask | b.paramMask;
  return r;
}

CountPowers addPowers(CountPowers a, CountPowers b) {
  if (a == b || b.isZero())
    return a;
  if (a.isZero())
    return b;
  return {joinPower(a.local, b.local), joinPower(a.reduced, b.reduced),
          joinPower(a.commSize, b.commSize)};
}

} // namespace collcheck::lint
