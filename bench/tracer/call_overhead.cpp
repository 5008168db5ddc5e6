// Added host cost of an intercepted MPI call as a job feels it: every call is timed on its own
// with the timestamp counter, so the figures are the mean over all calls (the growth of the trace
// file, its page faults and every other rare stall included) and the tail of single calls (p99,
// p99.9, max), not a median of batches that would hide them. Batches of calls through the wrapper
// (MPI_*, intercepted when the library is preloaded) alternate with batches of the same call to
// PMPI_* (never intercepted); the added mean is the difference of the two means.
// Usage (see docs/performance.md, bench/tracer/run_call_overhead.sh):
//   COLLCHECK_OUTPUT=DIR LD_PRELOAD=build/lib/libcollcheck_preload.so
//     mpirun -np 1 build/bin/collcheck-bench-call-overhead CASE [calls] [batch] [cpu]
// CASE: allreduce16 (a 16-element SUM of doubles), count1 (a one-element SUM of an int: a count
// reduction, its values captured), count4 (the same of four ints), derived (a broadcast of a
// contiguous derived datatype), userop (a 16-element all-reduce with an MPI_Op_create operation),
// threads8 (allreduce16 from 8 threads at once, each on its own duplicate of MPI_COMM_SELF).
// `calls`: intercepted calls in all (default 10,000,000; as many direct ones again), split evenly
// over the threads. `cpu`: pin the calling threads to that CPU after the warm-up (the tracer's own
// thread keeps every CPU).
#include <mpi.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <x86intrin.h>

namespace {

// Single calls up to this many ticks are counted one tick per bucket (about 100 us at 2.5 GHz);
// longer ones are kept as they are.
constexpr uint64_t kBuckets = uint64_t{1} << 18;

struct Histogram {
  std::vector<uint32_t> buckets = std::vector<uint32_t>(kBuckets, 0);
  std::vector<uint64_t> overflow;
  uint64_t calls = 0, ticks = 0;

  void add(uint64_t t) {
    ++calls;
    ticks += t;
    if (t < kBuckets)
      ++buckets[t];
    else
      overflow.push_back(t);
  }
  void merge(const Histogram &o) {
    for (uint64_t i = 0; i < kBuckets; ++i)
      buckets[i] += o.buckets[i];
    overflow.insert(overflow.end(), o.overflow.begin(), o.overflow.end());
    calls += o.calls;
    ticks += o.ticks;
  }
  // The single-call time (ticks) that a fraction `q` of calls does not exceed.
  uint64_t quantile(double q) {
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(calls - 1));
    uint64_t seen = 0;
    for (uint64_t i = 0; i < kBuckets; ++i) {
      seen += buckets[i];
      if (seen > rank)
        return i;
    }
    std::sort(overflow.begin(), overflow.end());
    return overflow[std::min<uint64_t>(rank - seen, overflow.size() - 1)];
  }
  uint64_t max() {
    if (!overflow.empty())
      return *std::max_element(overflow.begin(), overflow.end());
    for (uint64_t i = kBuckets; i-- > 0;)
      if (buckets[i])
        return i;
    return 0;
  }
  uint64_t above(uint64_t t) const {
    uint64_t n = 0;
    for (uint64_t i = std::min(t + 1, kBuckets); i < kBuckets; ++i)
      n += buckets[i];
    for (uint64_t v : overflow)
      n += v > t;
    return n;
  }
};

// The counter read in program order: the fences keep the timed call between the two reads.
inline uint64_t stamp() {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

double ticksPerNs() {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  uint64_t c0 = __rdtsc();
  while (Clock::now() - t0 < std::chrono::milliseconds(100)) {
  }
  auto t1 = Clock::now();
  uint64_t c1 = __rdtsc();
  return static_cast<double>(c1 - c0) / std::chrono::duration<double, std::nano>(t1 - t0).count();
}

void sumInts(void *in, void *inout, int *len, MPI_Datatype *) {
  for (int i = 0; i < *len; ++i)
    static_cast<double *>(inout)[i] += static_cast<double *>(in)[i];
}

struct Case {
  int elements = 16;
  MPI_Datatype type = MPI_DOUBLE;
  MPI_Op op = MPI_SUM;
  bool broadcast = false;
  int threads = 1;
  int cpu = -1; // pin the calling threads to this CPU after the warm-up
};

// One thread's share: `calls` timed calls each way, in alternating batches.
void run(const Case &c, MPI_Comm comm, uint64_t calls, uint64_t batch, Histogram &traced,
         Histogram &direct) {
  std::vector<double> in(64, 1.0), out(64, 0.0);
  auto once = [&](bool intercepted) {
    if (c.broadcast)
      return intercepted ? MPI_Bcast(out.data(), c.elements, c.type, 0, comm)
                         : PMPI_Bcast(out.data(), c.elements, c.type, 0, comm);
    return intercepted ? MPI_Allreduce(in.data(), out.data(), c.elements, c.type, c.op, comm)
                       : PMPI_Allreduce(in.data(), out.data(), c.elements, c.type, c.op, comm);
  };
  for (uint64_t i = 0; i < 10000; ++i) // first-call resolution, file creation
    once(true), once(false);
  if (c.cpu >= 0) { // the calling thread only: threads the tracer started keep the others
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c.cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  for (uint64_t done = 0; done < calls; done += batch) {
    uint64_t n = std::min(batch, calls - done);
    for (int side = 0; side < 2; ++side) {
      bool intercepted = ((done / batch) % 2 == 0) == (side == 0);
      Histogram &h = intercepted ? traced : direct;
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t t0 = stamp();
        once(intercepted);
        h.add(stamp() - t0);
      }
    }
  }
}

void report(const char *name, Histogram &h, double tpn) {
  std::printf("\"%s\": {\"mean_ns\": %.2f, \"p50_ns\": %.1f, \"p99_ns\": %.1f, \"p999_ns\": %.1f, "
              "\"max_ns\": %.1f, \"over_1us\": %llu, \"over_50us\": %llu}",
              name, static_cast<double>(h.ticks) / static_cast<double>(h.calls) / tpn,
              static_cast<double>(h.quantile(0.5)) / tpn,
              static_cast<double>(h.quantile(0.99)) / tpn,
              static_cast<double>(h.quantile(0.999)) / tpn, static_cast<double>(h.max()) / tpn,
              static_cast<unsigned long long>(h.above(static_cast<uint64_t>(1000 * tpn))),
              static_cast<unsigned long long>(h.above(static_cast<uint64_t>(50000 * tpn))));
}

} // namespace

int main(int argc, char **argv) {
  std::string name = argc > 1 ? argv[1] : "allreduce16";
  uint64_t calls = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000000;
  uint64_t batch = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10000;
  Case c;
  c.cpu = argc > 4 ? std::atoi(argv[4]) : -1;
  if (name == "count1" || name == "count4") {
    c.elements = name == "count1" ? 1 : 4;
    c.type = MPI_INT;
  } else if (name == "derived") {
    c.elements = 4;
    c.broadcast = true;
  } else if (name == "threads8") {
    c.threads = 8;
  } else if (name != "allreduce16" && name != "userop") {
    calls = 0;
  }
  if (calls == 0 || batch == 0) {
    std::fprintf(stderr,
                 "usage: %s [allreduce16|count1|count4|derived|userop|threads8] [calls >= 1] "
                 "[batch >= 1] [cpu]\n",
                 argv[0]);
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, c.threads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  if (c.threads > 1 && provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (name == "derived") {
    MPI_Type_contiguous(2, MPI_DOUBLE, &c.type);
    MPI_Type_commit(&c.type);
  } else if (name == "userop") {
    MPI_Op_create(sumInts, 1, &c.op);
  }
  double tpn = ticksPerNs();
  std::vector<Histogram> traced(static_cast<size_t>(c.threads)),
      direct(static_cast<size_t>(c.threads));
  uint64_t share = (calls + static_cast<uint64_t>(c.threads) - 1) / c.threads;
  if (c.threads == 1) {
    run(c, MPI_COMM_SELF, share, batch, traced[0], direct[0]);
  } else {
    std::vector<MPI_Comm> comms(static_cast<size_t>(c.threads));
    for (MPI_Comm &comm : comms)
      MPI_Comm_dup(MPI_COMM_SELF, &comm);
    std::vector<std::thread> workers;
    for (size_t t = 0; t < comms.size(); ++t)
      workers.emplace_back([&, t] { run(c, comms[t], share, batch, traced[t], direct[t]); });
    for (std::thread &w : workers)
      w.join();
    for (size_t t = 1; t < comms.size(); ++t) {
      traced[0].merge(traced[t]);
      direct[0].merge(direct[t]);
    }
    for (MPI_Comm &comm : comms)
      MPI_Comm_free(&comm);
  }
  Histogram &t = traced[0], &d = direct[0];
  bool preloaded = std::getenv("LD_PRELOAD") && std::getenv("COLLCHECK_OUTPUT");
  std::printf("{\"case\": \"%s\", \"preloaded\": %s, \"calls\": %llu, \"threads\": %d, "
              "\"intercepted_in_all\": %llu, \"mean_added_ns\": %.2f, ",
              name.c_str(), preloaded ? "true" : "false", static_cast<unsigned long long>(t.calls),
              c.threads, static_cast<unsigned long long>(t.calls + 10000ull * c.threads),
              (static_cast<double>(t.ticks) - static_cast<double>(d.ticks)) /
                  static_cast<double>(t.calls) / tpn);
  report("intercepted", t, tpn);
  std::printf(", ");
  report("direct", d, tpn);
  std::printf("}\n");
  if (name == "derived")
    MPI_Type_free(&c.type);
  else if (name == "userop")
    MPI_Op_free(&c.op);
  MPI_Finalize();
  return 0;
}
