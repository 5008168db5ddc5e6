// The abstract value the flow analysis keeps for every variable and expression: whether it is the
// same on every rank, whether it derives from the rank or from a rank-local count, and how it is
// normalised. The algebra behind the normalisation (rules/pages/uncompensated-mean.md) needs only
// three counts: n, this rank's valid items; N, n summed over the ranks; P, the ranks that take
// part.
#pragma once

#include "support/Config.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class Expr;
class FunctionDecl;
class NamedDecl;
class Stmt;
class CXXMethodDecl;
class FieldDecl;
} // namespace clang

namespace collcheck::lint {

// Exponents of n, N and P in a value: a local mean has n^-1, a local count n^1, the all-reduced
// count N^1, the input an averaging reducer needs n^0 N^-1 P^1.
struct CountPowers {
  int8_t local = 0;
  int8_t reduced = 0;
  int8_t commSize = 0;

  CountPowers operator+(CountPowers other) const;
  CountPowers operator-(CountPowers other) const;
  bool operator==(const CountPowers &) const = default;
  bool isZero() const { return local == 0 && reduced == 0 && commSize == 0; }
  bool isCount() const { return local >= 1 || reduced >= 1; }
};

// Where a fact about a value was established, for the notes of a finding.
struct Origin {
  const clang::Stmt *at = nullptr;
  const clang::NamedDecl *subject = nullptr; // the count, rank or size variable involved
  // `at` is a collective whose result differs from rank to rank (a scan's prefix, a scatter's
  // piece, what an all-to-all sends this rank).
  bool perRankResult = false;
  explicit operator bool() const { return at != nullptr || subject != nullptr; }
  bool operator==(const Origin &) const = default;
};

// A function between the call the user sees and the reducer: the flow passed through `wrapper`,
// called at `call`.
struct WrapperStep {
  const clang::FunctionDecl *wrapper = nullptr;
  const clang::Expr *call = nullptr;
};

// A SUM reduction of a rank-varying value. Dividing its result by the communicator size makes the
// pair an averaging reducer, so the reduction is remembered until that happens.
struct PendingSum {
  const clang::Expr *reducerCall = nullptr;
  const clang::Expr *reportAt = nullptr; // the reducer, or the outermost wrapper call seen so far
  unsigned reportDepth = 0;              // depth of the frame holding `reportAt`
  uint32_t reportMask = 0;               // parameters of that frame's function summed
  std::vector<WrapperStep> steps;        // outermost first
  std::string reducerName, opName;
  CountPowers contribution;
  Origin meanFormed, normalized, countReduced;
  bool guessed = false; // the contribution's count dependence rests on names only (Value::guessed)
};

struct FieldValues;

struct Value {
  bool uniform = false;         // proved equal on every rank (constants, P, all-reduce results)
  bool reduced = false;         // written by a collective
  bool rankDerived = false;     // depends on the rank
  bool rootOnly = false;        // ... as the result of a reduce: the root's, not the others'
  bool countDerived = false;    // depends on a rank-local count
  bool nonZero = false;         // cannot be zero: a non-zero constant, P, or a guarded count
  bool mask = false;            // a boolean mask, whose sum is a count
  bool exactRank = false;       // exactly the rank, so `rank < size` holds on every rank
  bool exactSize = false;       // exactly the communicator size
  bool subCommunicator = false; // a communicator split by a rank-dependent colour
  // The status a runtime call returned (ncclResult_t, cudaError_t, MPI's int), or a test of it:
  // a branch on it is error handling.
  bool status = false;
  // Its rank or count dependence rests on names only (a parameter named `rank` or `num_tokens`, the
  // size of a container named `batch`), not on data flow: no participation finding rests on it.
  bool guessed = false;
  // A real that holds an integer of unseen origin (`double w = n;`): dividing by it forms a mean
  // as dividing by the integer would (implicitCount), which the conversion must not hide.
  bool integerCopy = false;
  CountPowers powers;
  std::optional<double> constant;
  ReduceOpKind op = ReduceOpKind::None; // the reduction op an op variable holds
  CountPowers opScalar;                 // the scalar of a PreMulSum op
  const clang::Expr *opNamedAt = nullptr;
  Origin meanFormed, normalized, countReduced, rankSource, countSource;
  Origin sizeDivided; // where it was divided by the communicator size
  std::shared_ptr<const PendingSum> pendingSum;
  uint32_t paramMask = 0; // parameters of the current function the value derives from
  const clang::CXXMethodDecl *lambda = nullptr; // a closure: its call operator
  // A struct or pair built field by field (`{sum, n}`, `std::make_pair(rank, size)`, a local whose
  // fields were written): what each field holds, so that `.second` or a structured binding reads
  // its own field, not the join of all of them (which the facts above still are).
  std::shared_ptr<const FieldValues> fields;

  static Value uniformConstant(double value);
  // P, the size of a communicator: the same on every rank, never zero.
  static Value communicatorSize();
  // Facts that decide findings; origins are left out so that loops reach a fixed point.
  bool sameFacts(const Value &other) const;
};

struct FieldValues {
  std::vector<std::pair<const clang::FieldDecl *, Value>> items; // canonical fields, in order
  const Value *find(const clang::FieldDecl *field) const;
};

// Whether a value whose rank or count dependence comes from `a` and `b` owes it to names only.
bool guessedFrom(const Value &a, const Value &b);

// The value at a control-flow merge: facts that hold on both paths, taints of either path.
Value join(const Value &a, const Value &b);

// The taints and uniformity of a value computed from `a` and `b`, without its arithmetic.
Value mix(const Value &a, const Value &b);

// Powers of a sum: equal powers stay, a count-free addend takes the other's, otherwise the more
// divided one wins (a mean plus a regulariser is still a mean).
CountPowers addPowers(CountPowers a, CountPowers b);

} // namespace collcheck::lint
