// analyzer_fixture SCENARIO DIR: writes one synthetic job for the report tests.
//   clean      4 ranks, correct
//   mismatch   4 ranks: a skipped call, a count mismatch repeated 100 times, a reorder
//   hang       4 ranks stopped while ranks 0-2 wait for rank 3
#include "tests/analyzer/job_builder.h"

#include <cstdio>
#include <string>

using namespace collcheck::testing;
using collcheck::format::ReduceOp;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: analyzer_fixture clean|mismatch|hang DIR\n");
    return 2;
  }
  std::string scenario = argv[1], dir = argv[2];
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    RankTrace &t = ranks.back();
    if (scenario == "clean") {
      t.repeat(allreduce(), 30).call(barrier()).finalize();
    } else if (scenario == "mismatch") {
      for (uint32_t step = 0; step < 100; ++step) {
        t.window(step);
        t.call(allreduce(r == 1 ? 1000 : 1024));
        if (!(r == 3 && step == 40))
          t.call(bcast(4, 0));
      }
      if (r == 2)
        t.call(barrier()).call(allreduce(1, ReduceOp::Max));
      else
        t.call(allreduce(1, ReduceOp::Max)).call(barrier());
      t.finalize();
    } else if (scenario == "hang") {
      t.repeat(allreduce(), 10);
      if (r != 3)
        t.call(barrier(), kWorld, false);
      t.finished(false);
    } else {
      std::fprintf(stderr, "analyzer_fixture: unknown scenario %s\n", scenario.c_str());
      return 2;
    }
  }
  try {
    writeJob(dir, ranks);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "analyzer_fixture: %s\n", e.what());
    return 1;
  }
  return 0;
}
