#include "support/Config.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace collcheck::lint {
namespace {

const ReducerSpec *reducer(const LintConfig &config, const std::string &name) {
  auto it = std::find_if(config.reducers.begin(), config.reducers.end(),
                         [&](const ReducerSpec &r) { return r.name == name; });
  return it == config.reducers.end() ? nullptr : &*it;
}

TEST(Config, DefaultsCoverTheThreeLibraries) {
  LintConfig config = LintConfig::defaults();
  for (const char *name : {"ncclAllReduce", "MPI_Allreduce", "c10d::ProcessGroup::allreduce"})
    EXPECT_NE(reducer(config, name), nullptr) << name;
  EXPECT_EQ(reducer(config, "ncclAllReduce")->op, 4);
  EXPECT_EQ(reducer(config, "c10d::ProcessGroup::allreduce")->recv, -1);
  EXPECT_TRUE(config.ruleEnabled("uncompensated-mean"));
}

// The MPI entries come from the tracer's table of collectives, their arguments found by name:
// the same positions the MPI standard gives them, blocking and nonblocking alike.
TEST(Config, EveryMpiCollectiveIsKnownWithItsArguments) {
  LintConfig config = LintConfig::defaults();
  struct Expected {
    const char *name;
    CollectiveKind kind;
    int send, recv, op, datatype, comm;
  } expected[] = {
      {"MPI_Allreduce", CollectiveKind::AllReduce, 0, 1, 4, 3, 5},
      {"MPI_Iallreduce", CollectiveKind::AllReduce, 0, 1, 4, 3, 5},
      {"MPI_Reduce", CollectiveKind::Reduce, 0, 1, 4, 3, 6},
      {"MPI_Bcast", CollectiveKind::Broadcast, 0, -1, -1, 2, 4},
      {"MPI_Barrier", CollectiveKind::Barrier, -1, -1, -1, -1, 0},
      {"MPI_Allgatherv", CollectiveKind::AllGather, 0, 3, -1, 2, 7},
      {"MPI_Reduce_scatter", CollectiveKind::ReduceScatter, 0, 1, 4, 3, 5},
      {"MPI_Ireduce_scatter_block", CollectiveKind::ReduceScatter, 0, 1, 4, 3, 5},
      {"MPI_Scatterv", CollectiveKind::Other, 0, 4, -1, 3, 8},
      {"MPI_Igatherv", CollectiveKind::Other, 0, 3, -1, 2, 8},
      {"MPI_Alltoallw", CollectiveKind::Other, 0, 4, -1, -1, 8},
      {"MPI_Iexscan", CollectiveKind::Other, 0, 1, 4, 3, 5},
      {"MPI_Neighbor_alltoall", CollectiveKind::Other, 0, 3, -1, 2, 6},
      {"MPI_Ineighbor_alltoallw", CollectiveKind::Other, 0, 4, -1, -1, 8},
      {"MPI_Allreduce_init", CollectiveKind::AllReduce, 0, 1, 4, 3, 5},
      {"MPIX_Allreduce_init", CollectiveKind::AllReduce, 0, 1, 4, 3, 5},
      {"MPIX_Bcast_init", CollectiveKind::Broadcast, 0, -1, -1, 2, 4},
      {"MPI_Neighbor_alltoallw_init", CollectiveKind::Other, 0, 4, -1, -1, 8},
  };
  for (const Expected &e : expected) {
    const ReducerSpec *spec = reducer(config, e.name);
    ASSERT_NE(spec, nullptr) << e.name;
    EXPECT_EQ(spec->kind, e.kind) << e.name;
    EXPECT_EQ(spec->send, e.send) << e.name;
    EXPECT_EQ(spec->recv, e.recv) << e.name;
    EXPECT_EQ(spec->op, e.op) << e.name;
    EXPECT_EQ(spec->datatype, e.datatype) << e.name;
    EXPECT_EQ(spec->comm, e.comm) << e.name;
  }
  // 22 collectives (the 5 neighborhood collectives among them) in two forms each, and their
  // persistent initializations under two names.
  EXPECT_EQ(std::count_if(config.reducers.begin(), config.reducers.end(),
                          [](const ReducerSpec &r) {
                            return r.name.starts_with("MPI_") && !r.name.starts_with("MPI_Comm_");
                          }),
            66);
  EXPECT_EQ(std::count_if(config.reducers.begin(), config.reducers.end(),
                          [](const ReducerSpec &r) { return r.name.starts_with("MPIX_"); }),
            22);
}

TEST(Config, WrappersReducersAndDisabledRules) {
  LintConfig config = LintConfig::defaults();
  std::string error;
  ASSERT_TRUE(parseConfig(R"({
      "disabled-rules": ["collcheck-double-normalization"],
      "wrappers": [{"name": "allreduce_mean", "buffer": 1},
                   {"name": "sync_mean", "buffer": 0, "result": "return"}],
      "reducers": [{"name": "MPI_Allreduce", "kind": "all-reduce", "send": 0, "recv": 1,
                    "op-arg": 4}],
      "rank-functions": ["my::rank", {"name": "get_rank", "out": 0}],
      "count-names": ["tokens_.*"], "global-count-names": ["total_.*"],
      "non-count-names": [], "data-names": ["shard"], "mask-names": ["keep"],
      "model-names": ["weights_.*"]})",
                          "test.json", config, error))
      << error;
  EXPECT_FALSE(config.ruleEnabled("double-normalization"));
  const ReducerSpec *wrapper = reducer(config, "allreduce_mean");
  ASSERT_NE(wrapper, nullptr);
  EXPECT_EQ(wrapper->send, 1);
  EXPECT_EQ(wrapper->fixedOp, ReduceOpKind::Avg);
  EXPECT_EQ(wrapper->recv, -1); // in place
  ASSERT_NE(reducer(config, "sync_mean"), nullptr);
  EXPECT_EQ(reducer(config, "sync_mean")->recv, kReturned);
  EXPECT_EQ(std::count_if(config.reducers.begin(), config.reducers.end(),
                          [](const ReducerSpec &r) { return r.name == "MPI_Allreduce"; }),
            1);
  EXPECT_EQ(config.countNames, std::vector<std::string>{"tokens_.*"});
  EXPECT_EQ(config.globalCountNames, std::vector<std::string>{"total_.*"});
  EXPECT_TRUE(config.nonCountNames.empty());
  EXPECT_EQ(config.dataNames, std::vector<std::string>{"shard"});
  // The documented key that an earlier version refused as unknown.
  EXPECT_EQ(config.modelNames, std::vector<std::string>{"weights_.*"});
  EXPECT_EQ(config.queries.back().out, 0);
}

TEST(Config, ErrorsNameTheProblem) {
  struct Case {
    const char *text;
    const char *mentions;
  } cases[] = {
      {"{", "not valid JSON"},
      {R"({"disabled": []})", "unknown key 'disabled'"},
      {R"({"disabled-rules": ["no-such-rule"]})", "no-such-rule"},
      {R"({"reducers": [{"kind": "all-reduce"}]})", "reducers[0].name"},
      {R"({"reducers": [{"name": "f", "kind": "gather-ish"}]})", "reducers[0].kind"},
      {R"({"reducers": [{"name": "f", "kind": "all-reduce"}]})", "needs \"op\""},
      {R"({"reducers": [{"name": "f", "op": "avg", "send": "zero"}]})", "reducers[0].send"},
      {R"({"wrappers": [{"name": "f", "op": "median"}]})", "wrappers[0].op"},
      {R"({"wrappers": [{"name": "f", "result": "returned"}]})", "wrappers[0].result"},
      {R"({"count-names": ["("]})", "not a valid regular expression"},
  };
  for (const Case &c : cases) {
    LintConfig config = LintConfig::defaults();
    std::string error;
    EXPECT_FALSE(parseConfig(c.text, "bad.json", config, error)) << c.text;
    EXPECT_NE(error.find(c.mentions), std::string::npos) << c.text << " -> " << error;
    EXPECT_EQ(error.rfind("bad.json: ", 0), 0u) << error;
  }
}

// A pattern is compiled and matched by recursive code: one too long to do that within the stack is
// refused, whatever its shape; back-references need the matcher that recurses per character.
TEST(Config, NamePatternsTheMatcherCannotRunSafelyAreRefused) {
  std::string deep = std::string(20000, '(') + "n" + std::string(20000, ')');
  std::string flat(20000, 'n');
  for (const std::string &pattern : {deep, flat}) {
    LintConfig config = LintConfig::defaults();
    std::string error;
    EXPECT_FALSE(
        parseConfig(R"({"count-names": [")" + pattern + R"("]})", "bad.json", config, error));
    EXPECT_NE(error.find("longer than the 1000 allowed"), std::string::npos) << error;
    EXPECT_THROW(compileNamePattern(pattern), std::regex_error);
  }
  LintConfig config = LintConfig::defaults();
  std::string error;
  EXPECT_FALSE(parseConfig(R"({"count-names": ["(n)\\1"]})", "bad.json", config, error));
  EXPECT_NE(error.find("not a valid regular expression"), std::string::npos) << error;
}

TEST(Config, NamePatternsMatchNamesOfAnyLength) {
  std::regex pattern = compileNamePattern(LintConfig::defaults().countNames[1]); // .*count.*
  EXPECT_TRUE(std::regex_match(std::string(300000, 'x') + "_count", pattern));
  EXPECT_FALSE(std::regex_match(std::string(300000, 'x'), pattern));
}

} // namespace
} // namespace collcheck::lint
