// The reductions of a job, sorted into optimizer-update windows per communicator and told apart:
// count reductions (the valid counts travelling in a small SUM all-reduce) and gradient
// reductions (everything else a sum, an average or a PreMulSum weighs).
//
// Windows are the annotated ones (collcheck_annotate_window). A job without window annotations
// gets inferred windows: on each communicator a new one starts at a count reduction that follows
// a gradient reduction, since a count is reduced before the gradient it normalizes.
#pragma once

#include "analyzer/checks/objective/ledger.h"

#include <vector>

namespace collcheck::analyzer::objective {

enum class ReductionRole : uint8_t { Count, Gradient, Other };

struct WindowReductions {
  const Communicator *comm = nullptr;
  uint32_t window = 0;
  bool inferred = false;                 // no window annotations: a window per count reduction
  std::vector<const Reduction *> counts; // in sequence order
  std::vector<const Reduction *> gradients;
};

// Every communicator's windows, in the order their first reduction was seen.
std::vector<WindowReductions> groupByWindow(const Ledger &ledger, const JobView &job);

// How a reduction is read, given what its window declared. Exposed for the reference comparison,
// which reads one file at a time: `inputs` are the captured input values of each rank that issued
// the call, `declaredCounts` the counts those ranks declared for the window (each rank's window
// total and last micro-batch, empty when not annotated), `followedByGradient` whether a float
// reduction comes after it in the same window on the same communicator.
struct CountEvidence {
  std::vector<std::vector<double>> inputs;
  std::vector<std::pair<double, double>> declaredCounts;
  bool followedByGradient = false;
};
ReductionRole classify(const format::Record &call, const CountEvidence &evidence);

} // namespace collcheck::analyzer::objective
