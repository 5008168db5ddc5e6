// What collcheck-lint knows about the communication libraries it checks: the reducer table (which
// functions issue collectives and where their buffers and reduction op are), the functions that
// tell the rank and the communicator size, and the naming conventions it trusts when a value's
// origin is not visible. The built-in table covers MPI, NCCL and libtorch c10d; a project adds its
// own wrappers and disables rules in `.collcheck-lint.json` (format in docs/lint.md).
#pragma once

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace collcheck::lint {

enum class CollectiveKind {
  AllReduce,
  Reduce,
  ReduceScatter,
  Broadcast,
  AllGather,
  Barrier,
  Other
};
std::string_view collectiveKindName(CollectiveKind kind);

// Reduction ops, as far as the weighting of contributions is concerned.
enum class ReduceOpKind : uint8_t { None, Sum, Avg, PreMulSum, Other, Unknown };

// One function that issues a collective. Argument indices exclude the object of a method call.
struct ReducerSpec {
  std::string name; // "ncclAllReduce", "c10d::ProcessGroup::allreduce"
  CollectiveKind kind = CollectiveKind::AllReduce;
  int send = -1; // the data contributed (-1: none)
  int recv = -1; // where the result lands (-1: in place, on `send`; kReturned: returned)
  int op = -1;   // the reduction op argument (-1: the op is `fixedOp`)
  ReduceOpKind fixedOp = ReduceOpKind::None;
  int datatype = -1; // the datatype argument, used to recognise count reductions
  int comm = -1;     // the communicator argument
  // How a wrapper known from its summary reduces, where it is defined (for messages).
  std::string how;
};

// ReducerSpec::recv of a wrapper that returns the reduced value (`float mean = sync_mean(x)`).
inline constexpr int kReturned = -2;

// A function that tells the rank or the size of a communicator, by return value or out argument.
struct QuerySpec {
  enum class What { Rank, Size };
  std::string name;
  What what = What::Rank;
  int out = -1; // argument index of the out pointer; -1: the return value
};

// A function that creates a PreMulSum op: the op is written to `out` (-1: returned), the scalar is
// read from argument `scalar` (a pointer for NCCL, a value for c10d).
struct PreMulSumFactorySpec {
  std::string name;
  int out = -1;
  int scalar = 0;
};

// memcpy-like functions: the data at `src` reaches `dst` (cudaMemcpy and friends).
struct CopySpec {
  std::string name;
  int dst = 0;
  int src = 1;
};

class ProjectSummaries;

struct LintConfig {
  std::vector<ReducerSpec> reducers;
  std::vector<QuerySpec> queries;
  std::vector<PreMulSumFactorySpec> preMulSumFactories;
  std::vector<CopySpec> copies;
  std::set<std::string, std::less<>> disabledRules;
  // Case-insensitive ECMAScript patterns matched against whole variable, parameter and field
  // names whose origin the lint cannot see (a parameter of an entry function, a struct field).
  std::vector<std::string> rankNames, sizeNames, countNames;
  // Counts already summed over the ranks (N): tried before countNames.
  std::vector<std::string> globalCountNames;
  // Containers of this rank's data (batches, tokens, masks): their sizes are rank-local counts
  // that a condition may not depend on. Other containers (parameters, buckets) are assumed to have
  // the same size on every rank.
  std::vector<std::string> dataNames;
  // The model's state (gradients, parameters, optimizer state): containers as large on every
  // rank, whose size is no count of items even when a data name is part of theirs
  // (`token_embedding_grads`).
  std::vector<std::string> modelNames;
  // Boolean masks of valid items: their sum is a count.
  std::vector<std::string> maskNames;
  // Integers that divide a floating value without being a count of items (a step number, a
  // dimension): dividing by any other integer that is not rank-uniform forms a mean.
  std::vector<std::string> nonCountNames;
  std::string origin; // the file it was read from, empty for the built-in defaults
  // Not from the file: what the functions of the project's other translation units do
  // (engine/Summary.h); null when the run has no whole-project summaries.
  const ProjectSummaries *project = nullptr;
  // Not from the file: the walk of the function of this name fails on purpose (a trap), so that
  // the tests can see a failure contained to its function (collcheck-lint --debug-fail-in).
  std::string failInFunction;

  // The built-in tables (MPI, NCCL, c10d) and naming conventions.
  static LintConfig defaults();
  bool ruleEnabled(std::string_view ruleId) const { return !disabledRules.contains(ruleId); }
};

// Reads a JSON config on top of `config` (usually the defaults). On a malformed file returns
// false with a message that names the offending key.
bool parseConfig(std::string_view text, std::string_view origin, LintConfig &config,
                 std::string &error);
bool loadConfigFile(const std::string &path, LintConfig &config, std::string &error);

// The nearest `.collcheck-lint.json` in `directory` or one of its parents; empty when none.
std::string findConfigFile(const std::string &directory);

// A name pattern as the lint matches it: case-insensitive ECMAScript. Names can be of any length,
// and libstdc++'s default matcher recurses once per character (a name of 30,000 characters
// overflows the stack), so the pattern is compiled for its breadth-first matcher, whose recursion
// is bounded by the pattern; that matcher refuses back-references. The compiler recurses once per
// term and per group, so a pattern longer than kMaxNamePatternLength is refused rather than
// compiled. Throws std::regex_error.
inline constexpr size_t kMaxNamePatternLength = 1000;
std::regex compileNamePattern(const std::string &pattern);

inline constexpr const char *kConfigFileName = ".collcheck-lint.json";

} // namespace collcheck::lint
