// libFuzzer target: a whole trace folder through the analyzer. The input is split into up to eight
// files (each a 4-byte little-endian length and its bytes), written to a fresh folder, opened as
// one job and analyzed. Truncations, bit flips, wrong versions and byte orders, duplicate ranks,
// records of unknown communicators and absurd counts must all end as named input problems or
// findings: never a crash, a hang or unbounded memory.
#include "analyzer/load/trace_set.h"
#include "analyzer/match/analysis.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

std::filesystem::path freshFolder() {
  static int counter = 0;
  auto dir = std::filesystem::path("/dev/shm") /
             ("collcheck-fuzz-" + std::to_string(getpid()) + "-" + std::to_string(counter++ % 4));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::filesystem::path dir = freshFolder();
  size_t offset = 0;
  for (int file = 0; file < 8 && offset + 4 <= size; ++file) {
    uint32_t length;
    std::memcpy(&length, data + offset, 4);
    offset += 4;
    length = static_cast<uint32_t>(std::min<size_t>(length, size - offset));
    std::ofstream out(dir / ("rank" + std::to_string(file) + ".cctrace"), std::ios::binary);
    out.write(reinterpret_cast<const char *>(data + offset), length);
    offset += length;
  }
  using namespace collcheck::analyzer;
  TraceSet traces = TraceSet::open({dir.string()}, 1);
  for (const InputProblem &problem : traces.problems)
    if (problem.reason.empty())
      __builtin_trap(); // every problem says why
  if (!traces.fatal) {
    AnalysisOptions options;
    // Each position costs its communicator's size even when few of its ranks left a file (a
    // claimed 2^21-rank world over one file takes 0.2 s a position in a release build): bounded
    // here so that the inputs explore the logic; bench/ and docs/performance.md cover the scaling.
    options.maxCommunicatorSize = 256;
    AnalysisResult result = analyze(traces, options);
    (void)result;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
