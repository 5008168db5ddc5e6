// Flow analysis within functions, and across the functions of one translation unit.
//
// Each function is walked statement by statement, in order, keeping an abstract Value (Value.h) for
// every variable, field and pointee; branches are walked separately and merged, loops until their
// values settle. Calls of functions defined in the translation unit are walked with the caller's
// argument values, so a helper that forms a mean, copies it to the device or averages its parameter
// behaves as its body says (a function whose parameter reaches an averaging reducer is an averaging
// reducer for its callers). Functions nobody calls are the roots, walked with unknown parameters.
//
// The walk reports events (Check.h); it decides nothing about findings.
#pragma once

#include "engine/Check.h"
#include "engine/CollectiveSignature.h"
#include "engine/ReducerTable.h"

#include <llvm/ADT/ArrayRef.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace clang {
class ASTContext;
class NamedDecl;
class FunctionDecl;
class CXXMethodDecl;
} // namespace clang

namespace collcheck::lint {

class FlowListener {
public:
  virtual ~FlowListener() = default;
  virtual void reduction(const ReductionEvent &event) = 0;
  virtual void division(const DivisionEvent &event) = 0;
  virtual void collective(const CollectiveEvent &event) = 0;
};

// What a function does for its callers, from a walk with its parameters unknown (a summary).
struct RootEffect {
  std::optional<Value> returned;
  std::vector<std::pair<unsigned, Value>> outParams; // what it leaves behind writable parameters
  bool neverReturns = false;
};

// A field or global some function fills with the rank or the size; for a rank, the communicator
// it was queried on (communicatorKey; "" where the query names none).
struct LastingStorage {
  const clang::NamedDecl *decl = nullptr;
  QuerySpec::What what = QuerySpec::What::Rank;
  std::string communicator;
};

class FlowAnalysis {
public:
  FlowAnalysis(clang::ASTContext &context, const LintConfig &config, const ReducerTable &table,
               CollectiveSignatures &signatures, FlowListener &listener);
  ~FlowAnalysis();

  // Before the walks: the fields and globals that `functions` fill with the rank, so that a
  // function reading them where the walk has not seen the write still knows what they hold.
  void learnRankStorage(llvm::ArrayRef<const clang::FunctionDecl *> functions);
  void analyzeRoot(const clang::FunctionDecl *function);
  // Walks `function` as a root whose parameters hold unknown values that derive from them
  // (Value::paramMask): rank-varying ones, or, with `uniformParameters`, scalars the same on
  // every rank (data behind pointers and references still varies), so that what the result owes
  // to the function itself stands out.
  RootEffect summariseRoot(const clang::FunctionDecl *function, bool uniformParameters);
  // The fields and globals that learnRankStorage found filled with the rank or the size.
  std::vector<LastingStorage> lastingStorage() const;
  // Walked as a root or from a caller.
  bool analyzed(const clang::FunctionDecl *function) const;
  // The same, or, for a template as written, one of its instantiations walked.
  bool analyzedOrInstantiated(const clang::FunctionDecl *pattern) const;
  // After a walk that failed (a crash contained by the caller): forget the frames it left open,
  // so that the next root starts clean.
  void recoverFromFailure();
  // A function not to walk again (a lambda whose walk failed).
  void markAnalyzed(const clang::FunctionDecl *function);
  // Lambdas met during the walks whose closures were never called where the walk could see it
  // (passed to an algorithm or a thread): they are walked as roots of their own.
  std::vector<const clang::CXXMethodDecl *> unwalkedLambdas() const;

private:
  class Walker;
  std::unique_ptr<Walker> walker_;
};

} // namespace collcheck::lint
