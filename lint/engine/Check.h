// The contract between the flow analysis and the checks. The analysis walks each function and
// reports what it sees as events (a value reaching an averaging reducer, a division, a collective
// call under its control conditions); a check looks at the events of its rule and turns the wrong
// ones into findings. Policy lives in the checks, knowledge of the code in the analysis.
#pragma once

#include "engine/Value.h"

#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceLocation.h"

#include <string>
#include <string_view>
#include <vector>

namespace collcheck::lint {

struct Note {
  clang::SourceLocation loc;
  std::string message;
};

struct FixIt {
  clang::CharSourceRange range;
  std::string replacement;
};

struct Finding {
  std::string ruleId;
  clang::SourceLocation loc;
  clang::SourceRange range;
  std::string message;
  std::vector<Note> notes; // the flow, in order
  std::vector<FixIt> fixes;
  // It rests on names only (a count named `num_tokens` of unseen origin): reported as a note
  // whatever the rule's severity, since every rank may well hold the same value there.
  bool guess = false;
};

// A value reaches a reducer that averages over the ranks: an averaging op (ncclAvg, c10d AVG, a
// wrapper declared `avg`), a PreMulSum by 1/P, or a SUM whose result is then divided by P.
struct ReductionEvent {
  enum class Averaging { AverageOp, PreMulSumByInverseSize, SumThenDivide, DivideThenSum };
  Averaging how = Averaging::AverageOp;
  const clang::Expr *reportAt = nullptr;    // the reducer, or the outermost wrapper call
  const clang::Expr *reducerCall = nullptr; // the reducer itself
  const clang::Expr *opArgument = nullptr;  // the op as written at the reducer, when it is
  std::string reducerName, opName;
  const clang::Expr *divisionSite = nullptr; // SumThenDivide, DivideThenSum: the division by P
  std::vector<WrapperStep> steps;            // wrappers between reportAt and the reducer
  unsigned reportDepth = 0;                  // depth of the frame holding reportAt (0: a root)
  uint32_t reportMask = 0; // parameters of that frame's function the data comes from
  Value input;             // the data entering the reducer
  CountPowers effective;   // its powers once the reducer has averaged
};

// A division `dividend / divisor` (or `/=`, or a tensor div).
struct DivisionEvent {
  const clang::Expr *division = nullptr;
  const clang::Expr *divisor = nullptr;
  Value dividendValue, divisorValue;
};

// How communicatorKey names MPI_COMM_WORLD.
inline constexpr std::string_view kWorldCommunicator = "MPI_COMM_WORLD";

// A condition a statement depends on.
struct ControlDependence {
  enum class Kind {
    Branch,    // inside one branch of an if or switch
    Loop,      // inside a loop, which runs as long as `condition` holds
    EarlyExit, // after a `continue`, `break`, `return`, `throw` or call that never returns
               // (std::exit, [[noreturn]]) taken when `condition` holds
    LoopExit   // inside a loop that some ranks leave early (break or return under `condition`)
  };
  Kind kind = Kind::Branch;
  const clang::Expr *condition = nullptr;
  const clang::Stmt *exit = nullptr; // EarlyExit and LoopExit: the jump, or the call
  const clang::Expr *via = nullptr;  // EarlyExit in a called function: the call leading there
  const clang::FunctionDecl *exitIn = nullptr; // ... and the function the exit is taken in
  Value value;                                 // the condition's value
  bool negated = false;   // taken (Branch) or left (exits) where `condition` fails
  bool overRange = false; // Loop: `condition` is the range a range-for walks
  bool balanced = false;  // every path issues the same collectives
  bool reordered = false; // the paths issue the same collectives in different orders
  // A membership guard (`comm == MPI_COMM_NULL`): the communicator it tests. The ranks outside it
  // take no part in its collectives, so the guard is rank-uniform for them.
  const clang::NamedDecl *membershipOf = nullptr;
  // Where the condition reads a rank queried on a named communicator: that communicator
  // (communicatorKey), "" where it is not known.
  std::string rankCommunicator;
  unsigned id = 0;
};

// A call that issues a collective: a reducer of the table, or a function of this translation unit
// that (transitively) issues one.
struct CollectiveEvent {
  const clang::Expr *call = nullptr;
  std::string name;
  bool onSubCommunicator = false;
  std::vector<ControlDependence> controls; // outermost first
  // What the call's arguments name (its communicator among them), for membership guards.
  std::vector<const clang::NamedDecl *> argumentDecls;
  // The communicator it runs on (communicatorKey), "" where the call does not show it.
  std::string communicator;
};

class Check {
public:
  explicit Check(std::string ruleId) : ruleId_(std::move(ruleId)) {}
  virtual ~Check() = default;
  const std::string &ruleId() const { return ruleId_; }

  virtual void onReduction(const ReductionEvent &, clang::ASTContext &, std::vector<Finding> &) {}
  virtual void onDivision(const DivisionEvent &, clang::ASTContext &, std::vector<Finding> &) {}
  virtual void onCollective(const CollectiveEvent &, clang::ASTContext &, std::vector<Finding> &) {}

protected:
  Finding finding(const clang::Expr *at, std::string message) const;

private:
  std::string ruleId_;
};

// Where `range` is written in a file, when it is written there as one piece: a call passed to a
// macro (NCCLCHECK(ncclAllReduce(...))) where the argument is spelled, a whole macro use where the
// macro is used; invalid when part of it comes from a macro's body.
clang::CharSourceRange writtenRange(clang::SourceRange range, const clang::SourceManager &sm,
                                    const clang::LangOptions &lang);

// Short source text of `e` for messages ("'loss_sum / n'"), cut at `limit` characters.
std::string sourceText(const clang::Stmt *s, const clang::ASTContext &context, size_t limit = 40);
std::string quoted(const clang::NamedDecl *d);

} // namespace collcheck::lint
