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

TEST(Config, WrappersReducersAndDisabledRules) {
  LintConfig config = LintConfig::defaults();
  std::string error;
  ASSERT_TRUE(parseConfig(R"({
      "disabled-rules": ["collcheck-double-normalization"],
      "wrappers": [{"name": "allreduce_mean", "buffer": 1}],
      "reducers": [{"name": "MPI_Allreduce", "kind": "all-reduce", "send": 0, "recv": 1,
                    "op-arg": 4}],
      "rank-functions": ["my::rank", {"name": "get_rank", "out": 0}],
      "count-names": ["tokens_.*"], "global-count-names": ["total_.*"],
      "non-count-names": [], "data-names": ["shard"], "mask-names": ["keep"]})",
                          "test.json", config, error))
      << error;
  EXPECT_FALSE(config.ruleEnabled("double-normalization"));
  const ReducerSpec *wrapper = reducer(config, "allreduce_mean");
  ASSERT_NE(wrapper, nullptr);
  EXPECT_EQ(wrapper->send, 1);
  EXPECT_EQ(wrapper->fixedOp, ReduceOpKind::Avg);
  EXPECT_EQ(std::count_if(config.reducers.begin(), config.reducers.end(),
                          [](const ReducerSpec &r) { return r.name == "MPI_Allreduce"; }),
            1);
  EXPECT_EQ(config.countNames, std::vector<std::string>{"tokens_.*"});
  EXPECT_EQ(config.globalCountNames, std::vector<std::string>{"total_.*"});
  EXPECT_TRUE(config.nonCountNames.empty());
  EXPECT_EQ(config.dataNames, std::vector<std::string>{"shard"});
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

} // namespace
} // namespace collcheck::lint
