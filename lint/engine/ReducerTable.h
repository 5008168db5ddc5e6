// Looks up a called function in the reducer table of the configuration: reducers, rank and size
// queries, PreMulSum factories and copies. A spec named with `::` matches that qualified name (or a
// method overriding it); a plain name matches a function of that name in any namespace.
#pragma once

#include "support/Config.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace clang {
class FunctionDecl;
}

namespace collcheck::lint {

class ProjectLookups;

class ReducerTable {
public:
  explicit ReducerTable(const LintConfig &config);

  struct Match {
    const ReducerSpec *reducer = nullptr;
    const QuerySpec *query = nullptr;
    const PreMulSumFactorySpec *preMulSum = nullptr;
    const CopySpec *copy = nullptr;
    explicit operator bool() const { return reducer || query || preMulSum || copy; }
  };
  // By value: the cache behind it grows while callers still use an earlier answer.
  Match lookup(const clang::FunctionDecl *function) const;
  // The entries of that short name, as text: what a lookup of a function of that name depends on.
  std::string entriesNamed(llvm::StringRef shortName) const;

private:
  struct Candidates {
    std::vector<const ReducerSpec *> reducers;
    std::vector<const QuerySpec *> queries;
    std::vector<const PreMulSumFactorySpec *> preMulSums;
    std::vector<const CopySpec *> copies;
  };
  Match compute(const clang::FunctionDecl *function) const;

  llvm::StringMap<Candidates> byShortName_;
  ProjectLookups *lookups_ = nullptr; // where the names looked up are recorded
  mutable llvm::DenseMap<const clang::FunctionDecl *, Match> cache_;
};

// Whether `function` has the name `specName` in the sense above.
bool matchesSpecName(const clang::FunctionDecl *function, llvm::StringRef specName);

} // namespace collcheck::lint
