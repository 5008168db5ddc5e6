#include "training.h"

#include "dataset.h"

#include <collcheck/annotate.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

#include <unistd.h>

namespace collcheck::example {
namespace {

void printUpdate(bool print, int update, const std::vector<double> &weights, bool skipped) {
  if (!print)
    return;
  std::printf("%s\n", formatUpdate(update, weights, skipped).c_str());
  std::fflush(stdout);
}

// This rank's view of one update window.
struct LocalWindow {
  std::vector<double> gradientSum; // sum over the valid items of all micro-batches
  std::int64_t windowCount = 0;    // valid items over all micro-batches
  std::int64_t lastCount = 0;      // valid items of the last micro-batch
  std::vector<std::int64_t> microBatchCounts;
};

// The annotation calls of the trainer, or none with --no-annotations.
struct Annotations {
  bool on;
  void window(int window) const {
    if (on)
      collcheck_annotate_window(std::uint64_t(window));
  }
  void validCount(std::int64_t count) const {
    if (on)
      collcheck_annotate_valid_count(double(count));
  }
  void normalization(enum collcheck_normalization how, double multiplier) const {
    if (on)
      collcheck_annotate_normalization(how, multiplier);
  }
  void reducerScale(double factor) const {
    if (on)
      collcheck_annotate_reducer_scale(factor);
  }
};

LocalWindow accumulate(const Options &options, const Annotations &annotations,
                       const std::vector<Item> &batch, const std::vector<double> &weights) {
  LocalWindow window;
  window.gradientSum.assign(weights.size(), 0.0);
  for (int index = 0; index < options.microBatches; ++index) {
    std::int64_t valid = 0;
    for (const Item &item : microBatch(batch, index, options.microBatches)) {
      if (!item.valid)
        continue;
      ++valid;
      for (std::size_t j = 0; j < weights.size(); ++j)
        window.gradientSum[j] += weights[j] - (item.target + double(j));
    }
    annotations.validCount(valid);
    window.microBatchCounts.push_back(valid);
    window.windowCount += valid;
    window.lastCount = valid;
  }
  return window;
}

// What goes into the gradient reduction, and this rank's PreMulSum factor.
struct Contribution {
  std::vector<double> gradient;
  double preMulSumFactor = 1;
};

// The division the reducer applies after summing: P for the mean reducers, 1 for a plain sum.
double reducerDivision(Reducer reducer, int ranks) {
  return reducer == Reducer::sum ? 1.0 : double(ranks);
}

Contribution contribute(const Options &options, const LocalWindow &window, std::int64_t localCount,
                        std::int64_t globalCount, int ranks) {
  Contribution contribution;
  contribution.gradient = window.gradientSum;
  const double count = double(localCount), global = double(globalCount);
  // The loss normalization, as the rank's code would write it (0/0 stays NaN: an empty local
  // mean is not a zero contribution).
  for (double &component : contribution.gradient)
    if (options.normalization == Normalization::localMean)
      component /= count;
    else if (options.normalization == Normalization::globalCount)
      component /= global;
  // The fix: after the reducer's division by D the result is sum_r S_r / N. For local means the
  // factor is D n_r / N, for globally normalized losses D, for sums D / N.
  double factor = 1;
  if (options.compensate) {
    const double division = reducerDivision(options.reducer, ranks);
    if (options.normalization == Normalization::localMean)
      factor = division * count / global;
    else if (options.normalization == Normalization::globalCount)
      factor = division;
    else
      factor = division / global;
    if (options.normalization == Normalization::localMean && localCount == 0)
      contribution.gradient.assign(contribution.gradient.size(), 0.0); // weight 0, not 0/0
  }
  if (options.reducer == Reducer::preMulSum) {
    contribution.preMulSumFactor = factor / ranks; // the reducer applies 1/P and the fix
  } else {
    for (double &component : contribution.gradient)
      component *= factor;
  }
  return contribution;
}

void annotateNormalization(const Options &options, const Annotations &annotations,
                           std::int64_t globalCount, int ranks, bool zeroContribution) {
  if (zeroContribution) { // no item and a connected zero instead of 0/0: weight 0
    annotations.normalization(COLLCHECK_NORM_MULTIPLIER, 0);
    return;
  }
  if (options.compensate && options.reducer != Reducer::preMulSum) {
    // Every valid item's gradient enters the reduction multiplied by D / N.
    annotations.normalization(COLLCHECK_NORM_MULTIPLIER,
                              reducerDivision(options.reducer, ranks) / double(globalCount));
    return;
  }
  switch (options.normalization) {
  case Normalization::localMean:
    return annotations.normalization(COLLCHECK_NORM_LOCAL_MEAN, 0);
  case Normalization::globalCount:
    return annotations.normalization(COLLCHECK_NORM_GLOBAL_MEAN, 0);
  case Normalization::sum:
    return annotations.normalization(COLLCHECK_NORM_SUM, 0);
  }
}

} // namespace

std::string formatUpdate(int update, const std::vector<double> &weights, bool skipped) {
  std::string line = "update " + std::to_string(update) + " w";
  for (double weight : weights) {
    char number[32];
    std::snprintf(number, sizeof number, " %.10g", weight);
    line += std::isnan(weight) ? " nan" : number; // one spelling, whatever the sign bit
  }
  if (skipped)
    line += " skipped";
  return line;
}

void trainDistributed(const Options &options, Collectives &collectives, Watchdog &watchdog,
                      bool print) {
  const int ranks = collectives.size(), rank = collectives.rank();
  std::vector<double> weights(std::size_t(options.dimension), options.initialWeight);
  const bool needsGlobalCount =
      options.normalization == Normalization::globalCount || options.compensate;
  const Annotations annotations{options.annotate};
  bool skippedAReduction = false; // --zero-skip
  for (int window = 0; window < options.steps; ++window) {
    const int update = window + 1;
    annotations.window(window);
    const std::optional<std::vector<Item>> batch = batchFor(options.data, ranks, rank, window);
    if (!batch && options.exhaustedSkip) {
      std::fprintf(stderr,
                   "collcheck-example-trainer: rank %d has no input for update %d and leaves the "
                   "training loop (--exhausted-skip: the other ranks still issue its "
                   "collectives)\n",
                   rank, update);
      // It waits for the job to end outside MPI: Open MPI 4.1's mpirun can hang or crash tearing
      // down a job whose processes die while one of them sits in MPI_Finalize.
      Watchdog::Watch watch(watchdog,
                            "waiting for the other ranks after leaving the loop at update", update);
      for (;;)
        pause();
    }
    // An exhausted rank joins every collective of the window with no items and a zero gradient.
    const LocalWindow local =
        accumulate(options, annotations, batch.value_or(std::vector<Item>{}), weights);
    const std::int64_t localCount =
        options.countWindow == CountWindow::whole ? local.windowCount : local.lastCount;
    std::int64_t globalCount = 0;
    {
      Watchdog::Watch watch(watchdog, "in the count all-reduce of update", update);
      if (options.logMicroBatchCounts)
        for (std::int64_t count : local.microBatchCounts)
          collectives.sumCounts(count); // logged, not used
      if (needsGlobalCount)
        globalCount = options.floatCounts
                          ? std::int64_t(collectives.sumFloatCounts(double(localCount)))
                          : collectives.sumCounts(localCount);
      if (options.logActiveRanks)
        collectives.sumCounts(local.windowCount > 0 ? 1 : 0); // logged, not used
    }
    if (needsGlobalCount && globalCount == 0) { // every rank sees N = 0: all skip alike
      printUpdate(print, update, weights, true);
      continue;
    }
    Contribution contribution = contribute(options, local, localCount, globalCount, ranks);
    if (!batch)
      contribution.gradient.assign(contribution.gradient.size(), 0.0);
    const bool zeroContribution =
        !batch ||
        (options.compensate && options.normalization == Normalization::localMean && !localCount);
    annotateNormalization(options, annotations, globalCount, ranks, zeroContribution);
    const bool dividesAfterTheWire =
        options.reducer == Reducer::sumThenDivide ||
        (options.reducer == Reducer::average && options.backend == Backend::mpi);
    if (dividesAfterTheWire)
      annotations.reducerScale(1.0 / ranks);
    if (options.zeroSkip && localCount == 0) {
      std::fprintf(stderr,
                   "collcheck-example-trainer: rank %d has no valid item in update %d and skips "
                   "its gradient all-reduce (--zero-skip: the other ranks still issue it)\n",
                   rank, update);
      skippedAReduction = true;
      continue;
    }
    {
      Watchdog::Watch watch(watchdog, "in the gradient all-reduce of update", update);
      collectives.reduceGradient(contribution.gradient, options.reducer,
                                 contribution.preMulSumFactor);
    }
    for (std::size_t j = 0; j < weights.size(); ++j)
      weights[j] -= options.learningRate * contribution.gradient[j];
    printUpdate(print, update, weights, false);
  }
  if (skippedAReduction) {
    // The other ranks wait in the reduction this rank skipped; it waits outside MPI for the job
    // to end, as the exhausted rank of --exhausted-skip does.
    Watchdog::Watch watch(watchdog,
                          "waiting for the other ranks after skipping a reduction at "
                          "update",
                          options.steps);
    for (;;)
      pause();
  }
}

void trainReference(const Options &options, Collectives *collectives) {
  const int ranks = options.referenceRanks;
  std::vector<double> weights(std::size_t(options.dimension), options.initialWeight);
  const Annotations annotations{collectives != nullptr && options.annotate};
  for (int window = 0; window < options.steps; ++window) {
    annotations.window(window);
    std::vector<double> gradient(weights.size(), 0.0);
    std::int64_t validItems = 0;
    for (int rank = 0; rank < ranks; ++rank)
      for (const Item &item :
           batchFor(options.data, ranks, rank, window).value_or(std::vector<Item>{})) {
        if (!item.valid)
          continue;
        ++validItems;
        for (std::size_t j = 0; j < weights.size(); ++j)
          gradient[j] += weights[j] - (item.target + double(j));
      }
    annotations.validCount(validItems);
    if (validItems == 0) {
      printUpdate(true, window + 1, weights, true);
      continue;
    }
    for (double &component : gradient)
      component /= double(validItems);
    if (collectives) { // the same reduction as the distributed run, over one rank
      annotations.normalization(COLLCHECK_NORM_GLOBAL_MEAN, 0);
      collectives->reduceGradient(gradient, Reducer::sum, 1);
    }
    for (std::size_t j = 0; j < weights.size(); ++j)
      weights[j] -= options.learningRate * gradient[j];
    printUpdate(true, window + 1, weights, false);
  }
}

} // namespace collcheck::example
