// The cost of naming a call's site when the site is known (the path every call after the first
// from a place takes): the wrapper's store of its return address and the look-up in the thread's
// site cache, timed over many calls from a set of call sites (each its own call instruction),
// against the same loop without them.
// Prints JSON: ns per call for each, and their difference.
// Usage: collcheck-bench-call-site [calls [sites [frames]]]   (sites: 1 to 32 distinct callers,
// default 8; `frames`: the calling loop keeps a frame pointer, so its caller is followed too)
#include "tracer/preload/call_site.h"
#include "tracer/preload/core.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <utility>

using namespace collcheck;
using namespace collcheck::tracer;

namespace {

// The wrapper whose return address is the site, as an MPI wrapper's is: instantiated per index so
// that each call below is a call instruction of its own (a distinct return address).
template <int I> [[gnu::noinline]] uint16_t named(bool withSite) {
  if (withSite) {
    setCaller(__builtin_return_address(0), COLLCHECK_CALLER_FRAME);
    return currentSite();
  }
  asm volatile("" ::: "memory");
  return 0;
}

// Calls named<k> from a call instruction of its own for each k (a chain of compares and direct
// calls, inlined into the loop that uses it), so that `sites` calls are `sites` call sites.
template <int... I>
[[gnu::always_inline]] inline uint16_t callSite(uint64_t k, bool withSite,
                                                std::integer_sequence<int, I...>) {
  uint16_t result = 0;
  (void)((k == I ? (result = named<I>(withSite), true) : false) || ...);
  return result;
}
constexpr auto kCallers = std::make_integer_sequence<int, 32>{};

[[gnu::noinline]] uint64_t loop(uint64_t calls, int sites, bool withSite) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < calls; ++i)
    sum += callSite(i % static_cast<uint64_t>(sites), withSite, kCallers);
  return sum;
}

// The same loop in a function that keeps a frame pointer and is called directly: each site is
// then the pair (return address, the loop's own return address), and a known one costs the two
// loads that follow it.
[[gnu::noinline, gnu::optimize("no-omit-frame-pointer")]] uint64_t
loopWithFrame(uint64_t calls, int sites, bool withSite) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < calls; ++i)
    sum += callSite(i % static_cast<uint64_t>(sites), withSite, kCallers);
  asm volatile("" ::: "memory"); // a call, not a jump, for whoever calls this
  return sum;
}

} // namespace

int main(int argc, char **argv) {
  uint64_t calls = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000000;
  int sites = argc > 2 ? std::atoi(argv[2]) : 8;
  if (sites < 1 || sites > 32)
    sites = 8;
  bool frames = argc > 3 && std::string(argv[3]) == "frames";
  auto dir =
      std::filesystem::temp_directory_path() / ("collcheck-bench-site-" + std::to_string(getpid()));
  setenv("COLLCHECK_OUTPUT", dir.c_str(), 1);
  if (!reserveSlot()) { // the file the first sight of each site writes to
    std::fprintf(stderr, "cannot open a trace in %s\n", dir.c_str());
    return 1;
  }
  if (frames)
    loopWithFrame(1000, sites, true); // first sights: the slow path, not timed
  else
    loop(1000, sites, true);
  auto time = [&](bool withSite) {
    auto t0 = std::chrono::steady_clock::now();
    // Direct calls (a call through a pointer is not followed by the site's frame walk).
    volatile uint64_t sink =
        frames ? loopWithFrame(calls, sites, withSite) : loop(calls, sites, withSite);
    (void)sink;
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
           static_cast<double>(calls);
  };
  // Interleaved, best of five each: the machine's other load moves single runs.
  double without = 1e9, with = 1e9;
  for (int round = 0; round < 5; ++round) {
    without = std::min(without, time(false));
    with = std::min(with, time(true));
  }
  std::printf("{\"calls\": %llu, \"sites\": %d, \"caller_followed\": %s, \"ns_without\": %.2f, "
              "\"ns_with_site\": %.2f, \"ns_added\": %.2f}\n",
              static_cast<unsigned long long>(calls), sites, frames ? "true" : "false", without,
              with, with - without);
  markFinished();
  std::filesystem::remove_all(dir);
  return 0;
}
