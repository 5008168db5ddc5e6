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
};

LocalWindow accumulate(const Options &options, const std::vector<Item> &batch,
                       const std::vector<double> &weights) {
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
    collcheck_annotate_valid_count(double(valid));
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

void annotateNormalization(const Options &options, std::int64_t globalCount, int ranks) {
  if (options.compensate && options.reducer != Reducer::preMulSum) {
    // Every valid item's gradient enters the reduction multiplied by D / N.
    collcheck_annotate_normalization(COLLCHECK_NORM_MULTIPLIER,
                                     reducerDivision(options.reducer, ranks) / double(globalCount));
    return;
  }
  switch (options.normalization) {
  case Normalization::localMean:
    return collcheck_annotate_normalization(COLLCHECK_NORM_LOCAL_MEAN, 0);
  case Normalization::globalCount:
    return collcheck_annotate_normalization(COLLCHECK_NORM_GLOBAL_MEAN, 0);
  case Normalization::sum:
    return collcheck_annotate_normalization(COLLCHECK_NORM_SUM, 0);
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
  for (int window = 0; window < options.steps; ++window) {
    const int update = window + 1;
    collcheck_annotate_window(std::uint64_t(window));
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
    const LocalWindow local = accumulate(options, batch.value_or(std::vector<Item>{}), weights);
    const std::int64_t localCount =
        options.countWindow == CountWindow::whole ? local.windowCount : local.lastCount;
    std::int64_t globalCount = 0;
    if (needsGlobalCount) {
      Watchdog::Watch watch(watchdog, "in the count all-reduce of update", update);
      globalCount = collectives.sumCounts(localCount);
    }
    if (needsGlobalCount && globalCount == 0) { // every rank sees N = 0: all skip alike
      printUpdate(print, update, weights, true);
      continue;
    }
    Contribution contribution = contribute(options, local, localCount, globalCount, ranks);
    if (!batch)
      contribution.gradient.assign(contribution.gradient.size(), 0.0);
    annotateNormalization(options, globalCount, ranks);
    const bool dividesAfterTheWire =
        options.reducer == Reducer::sumThenDivide ||
        (options.reducer == Reducer::average && options.backend == Backend::mpi);
    if (dividesAfterTheWire)
      collcheck_annotate_reducer_scale(1.0 / ranks);
    {
      Watchdog::Watch watch(watchdog, "in the gradient all-reduce of update", update);
      collectives.reduceGradient(contribution.gradient, options.reducer,
                                 contribution.preMulSumFactor);
    }
    for (std::size_t j = 0; j < weights.size(); ++j)
      weights[j] -= options.learningRate * contribution.gradient[j];
    printUpdate(print, update, weights, false);
  }
}

void trainReference(const Options &options) {
  const int ranks = options.referenceRanks;
  std::vector<double> weights(std::size_t(options.dimension), options.initialWeight);
  for (int window = 0; window < options.steps; ++window) {
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
    if (validItems == 0) {
      printUpdate(true, window + 1, weights, true);
      continue;
    }
    for (std::size_t j = 0; j < weights.size(); ++j)
      weights[j] -= options.learningRate * gradient[j] / double(validItems);
    printUpdate(true, window + 1, weights, false);
  }
}

} // namespace collcheck::example
