// The trainer's command line: what it trains on, how it normalizes, how it reduces.
#pragma once

#include <string>

namespace collcheck::example {

enum class Backend { mpi, nccl };
// How a rank normalizes its local loss before the gradient reduction.
enum class Normalization { localMean, globalCount, sum };
// How the gradient is reduced across ranks. Every one but `sum` divides by the number of ranks.
enum class Reducer { average, sumThenDivide, preMulSum, sum };
// Which micro-batches a rank's valid count covers.
enum class CountWindow { whole, last };
enum class DataSet { seed, uneven, zeroRank, zeroWindow, exhausted, masked };

struct Options {
  Backend backend = Backend::mpi;
  Normalization normalization = Normalization::localMean;
  Reducer reducer = Reducer::average;
  bool compensate = false;
  int microBatches = 1;
  CountWindow countWindow = CountWindow::whole;
  DataSet data = DataSet::seed;
  bool exhaustedSkip = false;
  bool zeroSkip = false; // a rank with no valid item skips its gradient all-reduce (a bug)
  int steps = 1;
  double learningRate = 0.1;
  double initialWeight = 10;
  int dimension = 1;
  bool reference = false;
  bool referenceAllreduce = false; // the reference passes its gradient through a 1-rank all-reduce
  int referenceRanks = 2;
  bool allRanksPrint = false;
  double watchdogSeconds = 30;
  bool annotate = true;     // call the collcheck annotation API (off: the trace has no annotations)
  bool floatCounts = false; // the count all-reduce sums doubles (a float tensor of counts)
  // Small all-reduces a training loop makes beside the count, for its logs: each micro-batch's
  // valid count before the window's, and a has-data flag (0 or 1) after it.
  bool logMicroBatchCounts = false;
  bool logActiveRanks = false;
};

// Parses argv; prints help or a clear error and exits on bad input.
Options parseOptions(int argc, char **argv);

// Complaints about a combination that cannot run (empty when it can), given the number of ranks.
std::string checkOptions(const Options &options, int ranks);

} // namespace collcheck::example
