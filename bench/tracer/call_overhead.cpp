// Added host cost of an intercepted collective, measured in one run: batches of MPI_Allreduce
// (through the preload library's wrapper when preloaded) alternate with batches of PMPI_Allreduce
// (the same call, never intercepted), and the medians of the per-call batch times are compared.
// Usage (see docs/performance.md):
//   COLLCHECK_OUTPUT=DIR LD_PRELOAD=build/lib/libcollcheck_preload.so
//     mpirun -np 1 build/bin/collcheck-bench-call-overhead [batches] [calls-per-batch] [elements]
// With elements <= COLLCHECK_CAPTURE_MAX (4) the SUM all-reduce is a count reduction whose values
// are captured too; the default (16) measures an ordinary collective.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

template <typename Call> double nanosPerCall(Call call, int calls) {
  auto start = Clock::now();
  for (int i = 0; i < calls; ++i)
    call();
  auto elapsed = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  return elapsed / calls;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int batches = argc > 1 ? std::atoi(argv[1]) : 200;
  int calls = argc > 2 ? std::atoi(argv[2]) : 2000;
  int elements = argc > 3 ? std::atoi(argv[3]) : 16;
  if (batches < 1 || calls < 1 || elements < 1 || elements > 64) {
    std::fprintf(stderr, "usage: %s [batches >= 1] [calls-per-batch >= 1] [elements 1..64]\n",
                 argv[0]);
    MPI_Finalize();
    return 2;
  }
  std::vector<double> in(static_cast<size_t>(elements), 1.0), out(in.size());
  auto traced = [&] {
    MPI_Allreduce(in.data(), out.data(), elements, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
  };
  auto direct = [&] {
    PMPI_Allreduce(in.data(), out.data(), elements, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
  };
  nanosPerCall(traced, calls); // warm up: first-call resolution, file creation, page faults
  nanosPerCall(direct, calls);
  std::vector<double> tracedTimes, directTimes, differences;
  for (int b = 0; b < batches; ++b) {
    double t = nanosPerCall(traced, calls);
    double d = nanosPerCall(direct, calls);
    tracedTimes.push_back(t);
    directTimes.push_back(d);
    differences.push_back(t - d);
  }
  const char *output = std::getenv("COLLCHECK_OUTPUT");
  bool preloaded = std::getenv("LD_PRELOAD") && output;
  std::printf("{\"preloaded\": %s, \"batches\": %d, \"calls_per_batch\": %d, "
              "\"median_intercepted_ns\": %.2f, \"median_direct_ns\": %.2f, "
              "\"median_added_ns\": %.2f, \"elements\": %d, \"calls\": %lld}\n",
              preloaded ? "true" : "false", batches, calls, median(tracedTimes),
              median(directTimes), median(differences), elements,
              static_cast<long long>(batches + 1) * calls);
  MPI_Finalize();
  return 0;
}
