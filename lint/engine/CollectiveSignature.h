// The collectives a statement may issue, as the set of sequences its paths issue, found
// syntactically: reducer-table calls, and calls of functions defined in the translation unit
// expanded into the collectives they issue. Two branches are balanced when, together, they allow a
// single sequence: every rank then issues the same collectives whichever branch it takes.
#pragma once

#include "engine/ReducerTable.h"
#include "engine/Summary.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>
#include <vector>

namespace clang {
class Stmt;
class FunctionDecl;
} // namespace clang

namespace collcheck::lint {

using Signature = std::vector<std::string>;

// Sorted, without duplicates. Past kMaxPaths the set is `overflowed` and balances nothing.
struct PathSet {
  static constexpr size_t kMaxPaths = 16;
  std::vector<Signature> paths{Signature{}};
  bool overflowed = false;

  bool issuesCollectives() const;
  PathSet then(const PathSet &next) const; // every path of this one, followed by one of next
  PathSet either(const PathSet &other) const;
  // One sequence whichever path is taken (or none: every path ends the process).
  bool single() const { return !overflowed && paths.size() <= 1; }
  // The paths issue the same collectives, in different orders.
  bool onlyReordered() const;
};

class CollectiveSignatures {
public:
  // `project`: the summaries of the functions other translation units define (may be null).
  explicit CollectiveSignatures(const ReducerTable &table,
                                const ProjectSummaries *project = nullptr)
      : table_(table), project_(project) {}

  PathSet of(const clang::Stmt *stmt);
  PathSet ofFunction(const clang::FunctionDecl *function);

  // The collective's name for messages and signatures: "MPI_Allreduce",
  // "ProcessGroup::allreduce".
  static std::string displayName(const clang::FunctionDecl *function);

  // After a walk that failed inside a computation: the functions it had under way.
  void recoverFromFailure() { inProgress_.clear(); }

private:
  PathSet compute(const clang::Stmt *stmt);

  const ReducerTable &table_;
  const ProjectSummaries *project_;
  llvm::DenseMap<const clang::Stmt *, PathSet> byStmt_;
  llvm::DenseMap<const clang::FunctionDecl *, PathSet> byFunction_;
  llvm::DenseSet<const clang::FunctionDecl *> inProgress_;
};

} // namespace collcheck::lint
