#include "options.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <map>
#include <vector>

namespace collcheck::example {
namespace {

constexpr int kBadOptionsExitCode = 2;

template <typename Enum> using Names = std::map<std::string, Enum>;

const Names<Backend> kBackends{{"mpi", Backend::mpi}, {"nccl", Backend::nccl}};
const Names<Normalization> kNormalizations{{"local-mean", Normalization::localMean},
                                           {"global-count", Normalization::globalCount},
                                           {"sum", Normalization::sum}};
const Names<Reducer> kReducers{{"avg", Reducer::average},
                               {"sum-then-divide", Reducer::sumThenDivide},
                               {"premulsum", Reducer::preMulSum},
                               {"sum", Reducer::sum}};
const Names<CountWindow> kCountWindows{{"whole", CountWindow::whole}, {"last", CountWindow::last}};
const Names<DataSet> kDataSets{
    {"seed", DataSet::seed},           {"uneven", DataSet::uneven},
    {"zero-rank", DataSet::zeroRank},  {"zero-window", DataSet::zeroWindow},
    {"exhausted", DataSet::exhausted}, {"masked", DataSet::masked}};

// A named choice: the error for a wrong name lists the accepted names.
template <typename Enum>
CLI::Option *addChoice(CLI::App &app, const std::string &flag, Enum &value,
                       const Names<Enum> &names, const std::string &help) {
  std::vector<std::string> accepted;
  std::string current;
  for (const auto &[text, choice] : names) {
    accepted.push_back(text);
    if (choice == value)
      current = text;
  }
  return app
      .add_option_function<std::string>(
          flag, [&value, &names](const std::string &text) { value = names.at(text); }, help)
      ->check(CLI::IsMember(accepted))
      ->default_str(current);
}

} // namespace

Options parseOptions(int argc, char **argv) {
  Options options;
  CLI::App app{"collcheck example trainer: SGD on loss 1/2 (w - y)^2 per item across ranks, with "
               "correct and incorrect gradient normalization (see examples/README.md)",
               "collcheck-example-trainer"};
  addChoice(app, "--backend", options.backend, kBackends, "collectives over MPI or the NCCL API");
  addChoice(app, "--normalization", options.normalization, kNormalizations,
            "local loss divided by the local count, the all-reduced global count, or not");
  addChoice(app, "--reducer", options.reducer, kReducers,
            "gradient reduction: avg, sum-then-divide and premulsum (1/P) divide by the ranks");
  app.add_flag("--compensate", options.compensate,
               "scale the local contribution so that the reducer yields the global item mean "
               "(local means by P*n_r/N after all-reducing the counts)");
  app.add_option("--micro-batches", options.microBatches, "micro-batches per update")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  addChoice(app, "--count-window", options.countWindow, kCountWindows,
            "count over the whole accumulation window, or only the last micro-batch (a bug)");
  addChoice(app, "--data", options.data, kDataSets, "the per-rank data set");
  app.add_flag("--exhausted-skip", options.exhaustedSkip,
               "with --data exhausted: the exhausted rank stops joining collectives (a bug)");
  app.add_flag("--zero-skip", options.zeroSkip,
               "a rank with no valid item in an update skips its gradient all-reduce (a bug)");
  app.add_option("--steps", options.steps, "optimizer updates")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--lr", options.learningRate, "SGD learning rate")->capture_default_str();
  app.add_option("--w0", options.initialWeight, "initial parameter value")->capture_default_str();
  app.add_option("--dim", options.dimension, "parameter components (component j targets y + j)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_flag("--reference", options.reference,
               "single process over the union of every rank's data (the intended objective)");
  app.add_flag("--reference-allreduce", options.referenceAllreduce,
               "with --reference: initialize MPI and pass each update's gradient through an "
               "all-reduce on the one rank, so that a traced reference run records the results "
               "collcheck analyze --reference compares with");
  app.add_option("--ranks", options.referenceRanks, "ranks whose data --reference uses")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_flag("--all-ranks-print", options.allRanksPrint, "every rank prints its updates");
  app.add_option("--watchdog", options.watchdogSeconds,
                 "seconds a collective may take before the trainer reports a hang and exits "
                 "(0: wait forever)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--float-counts", options.floatCounts,
               "all-reduce the valid counts as doubles (as a float tensor of counts would be)");
  app.add_flag("--log-micro-batch-counts", options.logMicroBatchCounts,
               "also all-reduce each micro-batch's valid count, before the window's, for the log");
  app.add_flag("--log-active-ranks", options.logActiveRanks,
               "also all-reduce a has-data flag (0 or 1) after the window's count, for the log");
  app.add_flag("!--no-annotations", options.annotate,
               "do not call the collcheck annotation API (the analyzer then has only the count "
               "reductions to go by)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    const int printed = app.exit(error); // prints help (0) or the error
    std::exit(printed == 0 ? 0 : kBadOptionsExitCode);
  }
  return options;
}

std::string checkOptions(const Options &options, int ranks) {
  if (options.data == DataSet::seed && ranks != 2)
    return "--data seed is the two-rank example of the seed document: run it on 2 ranks (or "
           "--reference --ranks 2), not " +
           std::to_string(ranks);
  if ((options.data == DataSet::zeroRank || options.data == DataSet::exhausted) && ranks < 2)
    return "--data zero-rank and exhausted need at least 2 ranks";
  if (options.exhaustedSkip && options.data != DataSet::exhausted)
    return "--exhausted-skip only applies to --data exhausted";
  if (options.referenceAllreduce && !options.reference)
    return "--reference-allreduce only applies to --reference";
  if (options.reducer == Reducer::preMulSum && options.backend != Backend::nccl &&
      !options.reference)
    return "--reducer premulsum is ncclRedOpCreatePreMulSum: it needs --backend nccl";
  return {};
}

} // namespace collcheck::example
