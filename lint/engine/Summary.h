// Whole-project summaries: what each function of a translation unit does, as far as the checks of
// its callers in other translation units care. With a compilation database, collcheck-lint first
// summarises every translation unit of the project (tool/ProjectSummaries.h caches them by file
// content), then checks each file with the summaries of the functions it calls but cannot see:
//
// - a wrapper that forwards a parameter to an averaging reducer (an AVG op, or a SUM then a
//   division by the communicator size) or to a SUM reducer becomes a reducer of the table, as a
//   `wrappers` entry of the config would (its result in place or returned);
// - a function that returns the rank or the communicator size becomes a rank or size query;
// - fields and globals that some function fills with the rank or the size are known as such
//   where another file reads them;
// - what a function returns (a local mean, a count of this rank's items, the rank, a value the
//   same on every rank) is known at its calls, and so is the collective it always issues.
//
// Summaries are computed with the parameters unknown: what a call's arguments bring is added at
// the call, by the parameters the result derives from.
#pragma once

#include "engine/Value.h"
#include "support/Config.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class FunctionDecl;
class NamedDecl;
} // namespace clang

namespace collcheck::lint {

// The facts of a Value that outlive a translation unit (no AST pointers).
struct ValueFacts {
  bool uniform = false, reduced = false, rankDerived = false, countDerived = false;
  bool nonZero = false, mask = false, exactRank = false, exactSize = false, guessed = false;
  bool meanFormed = false; // a local mean was formed inside
  CountPowers powers;
  uint32_t paramMask = 0; // the parameters the value derives from

  static ValueFacts of(const Value &v);
  bool operator==(const ValueFacts &) const = default;
};

struct FunctionSummary {
  std::string usr;  // Clang's unified symbol resolution: the key across translation units
  std::string name; // qualified: "LightGBM::Network::GlobalSyncUpByMean"
  unsigned params = 0;
  std::string file; // where it is defined, for messages
  unsigned line = 0;
  // A wrapper of a reducer: the parameter it forwards, the op the pair amounts to (Avg or Sum),
  // and where its result lands (ReducerSpec::recv: -1 in place, kReturned).
  int reducedParam = -1;
  ReduceOpKind reducedOp = ReduceOpKind::None;
  int resultAt = -1;
  std::string reducedBy; // "MPI_Allreduce with MPI_SUM, then a division by the communicator size"
  // A rank or size query by return value.
  std::optional<QuerySpec::What> query;
  std::optional<ValueFacts> returns;
  std::vector<std::pair<unsigned, ValueFacts>> writes; // out parameters it fills
  std::vector<std::string> collectives; // the collectives every path issues, in order
  bool endsProcess = false;             // no path returns (exit, abort, a throw nothing catches)
  std::vector<std::string> overrides;   // qualified names of the virtual methods it overrides
};

// A field or a variable outside functions that some function fills with the rank or the size.
struct StorageFact {
  std::string name; // qualified
  QuerySpec::What what = QuerySpec::What::Rank;
  // A rank's communicator, as communicatorKey names it: "" where it is not known (a query without
  // a communicator argument, or writes from different communicators).
  std::string communicator;
  bool operator==(const StorageFact &) const = default;
};

struct FileSummary {
  std::vector<FunctionSummary> functions;
  std::vector<StorageFact> storage;
};

nlohmann::json toJson(const FileSummary &summary);
// False on a document of another shape (a cache entry of an older format).
bool fromJson(const nlohmann::json &json, FileSummary &summary);

class ProjectSummaries;

// What the check of a file asked of the project, with the answers it got as text ("" for none): a
// function's summary by USR, the overrides of a virtual method, what a field or global holds, and
// the reducer and query tables by short name (the summaries extend them). A run that summarises
// the files it checks from their checks' parses checks some files before every summary is known;
// such a file is checked again only where an answer differs from the one the whole project gives.
class ProjectLookups {
public:
  enum Kind : char { Function = 'f', Overrides = 'o', Storage = 's', Table = 't' };
  // The first answer to a question is kept: within one check the summaries do not change.
  template <typename Answer> void record(Kind kind, llvm::StringRef key, Answer answer) {
    auto [it, inserted] = answers_.try_emplace((llvm::Twine(char(kind)) + key).str());
    if (inserted)
      it->second = answer();
  }
  // The first question whose answer is not the one `project`, and the tables of `config` it
  // extends, give ("function USR", "overrides NAME", "storage NAME", "table NAME"); "" if none.
  std::string firstChanged(const ProjectSummaries &project, const LintConfig &config) const;
  bool empty() const { return answers_.empty(); }

private:
  std::map<std::string, std::string> answers_;
};

// The summaries of every translation unit of a project.
class ProjectSummaries {
public:
  void add(const FileSummary &file);
  size_t functionCount() const { return byUsr_.size(); }

  // The summary of a function this translation unit declares but does not define; for a virtual
  // method without one, what its overrides in the project do, joined (any of them may run).
  const FunctionSummary *find(const clang::FunctionDecl *function) const;
  std::optional<QuerySpec::What> storageOf(const clang::NamedDecl *decl) const;
  // The communicator whose rank `decl` holds, where the project shows it ("" otherwise).
  std::string rankCommunicatorOf(const clang::NamedDecl *decl) const;
  // A call of virtual `method` through a pointer or reference: what the project's overrides do,
  // joined; null when the project overrides it nowhere.
  const FunctionSummary *dispatched(const clang::CXXMethodDecl *method) const;

  // The wrappers and queries the summaries show, added to the config's tables (entries the
  // config already names are kept as written).
  void extend(LintConfig &config) const;

  // Where the lookups above are recorded (null: nowhere).
  void recordInto(ProjectLookups *lookups) { lookups_ = lookups; }
  ProjectLookups *lookups() const { return lookups_; }

private:
  friend class ProjectLookups;
  const FunctionSummary *byUsr(const std::string &usr) const;
  const FunctionSummary *overridesOf(const std::string &name) const;
  const StorageFact *storageNamed(const std::string &name) const;

  ProjectLookups *lookups_ = nullptr;
  std::map<std::string, FunctionSummary> byUsr_;
  std::map<std::string, std::vector<const FunctionSummary *>> overridersOf_;
  mutable std::map<std::string, FunctionSummary> dispatched_; // joined overriders, by base

  std::map<std::string, StorageFact> storage_;
};

// The key a function is summarised under.
std::string usrOf(const clang::FunctionDecl *function);
std::string qualifiedName(const clang::NamedDecl *decl);

} // namespace collcheck::lint
