// What the split benchmarks start from: a job's traces, opened as one process of a split analysis
// opens them, the communicator the split's cuts follow, and the options each process analyzes with.
#pragma once

#include "distributed/share_plan.h"
#include "load/reading_cost.h"
#include "load/trace_set.h"
#include "match/analysis.h"

#include <cstdint>
#include <cstdio>
#include <optional>

namespace collcheck::analyzer::bench {

// Opens the traces in `dir` into `traces`; the cut communicator, or nullopt with the reason on
// stderr (prefixed with `tool`) when the folder cannot be analyzed or not divided.
inline std::optional<uint64_t> openSplitJob(const char *tool, const char *dir, TraceSet &traces) {
  traces = TraceSet::open({dir}, 1);
  if (traces.fatal || traces.files.empty()) {
    std::fprintf(stderr, "%s: cannot analyze %s\n", tool, dir);
    for (const InputProblem &p : traces.problems)
      if (p.unusable)
        std::fprintf(stderr, "  %s: %s\n", p.file.c_str(), p.reason.c_str());
    return std::nullopt;
  }
  std::optional<uint64_t> comm = distributed::cutCommunicator(traces);
  if (!comm)
    std::fprintf(stderr, "%s: no communicator spans every file: nothing to divide\n", tool);
  return comm;
}

// As `--threads 1` with the default `--read auto`: what each process of a split analysis runs (one
// thread, copying the records where this machine's page mapping costs more than copying, else
// reading them where mapped). Says which on stderr, as `--timings` does.
inline AnalysisOptions splitProcessOptions(const TraceSet &traces) {
  AnalysisOptions options;
  options.readAhead = false;
  const ReadingCost cost = measureReadingCost(traces);
  options.copyChunks = copyingIsCheaper(cost);
  std::fprintf(stderr, "records %s (a mapped page %.0f ns, a copied one %.0f ns)\n",
               options.copyChunks ? "copied" : "matched where mapped", cost.mappedNsPerPage,
               cost.copiedNsPerPage);
  return options;
}

} // namespace collcheck::analyzer::bench
