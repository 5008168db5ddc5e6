// What the tracer's record path cannot do without, timed alone on this machine: a read of the
// timestamp counter (every record's timestamp) and a locked add (a slot of the trace, and a
// communicator's sequence number), against a plain load and store of a counter. The tracer's added
// mean per call (run_call_overhead.sh) cannot fall below one clock read and two locked adds.
// Usage: collcheck-bench-primitives [iterations] (pin it: taskset -c 1 ...)
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <x86intrin.h>

namespace {

volatile uint64_t sink;
std::atomic<uint64_t> counter{0};

template <typename Body> double nsPerIteration(long iterations, Body body) {
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i)
    body();
  std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(iterations);
}

} // namespace

int main(int argc, char **argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 50'000'000;
  for (int round = 0; round < 3; ++round) {
    double tsc = nsPerIteration(iterations, [] { sink = __rdtsc(); });
    double locked =
        nsPerIteration(iterations, [] { sink = counter.fetch_add(1, std::memory_order_relaxed); });
    double plain = nsPerIteration(iterations, [] {
      uint64_t v = counter.load(std::memory_order_relaxed);
      counter.store(v + 1, std::memory_order_relaxed);
      sink = v;
    });
    std::printf("{\"round\": %d, \"rdtsc_ns\": %.2f, \"lock_xadd_ns\": %.2f, "
                "\"load_store_ns\": %.2f}\n",
                round, tsc, locked, plain);
  }
}
