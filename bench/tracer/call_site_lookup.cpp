// The cost of naming a call's site when the site is known (the path every call after the first
// from a place takes): the wrapper's store of its return address and the look-up in the thread's
// site cache, timed over many calls from a set of call sites, against the same loop without them.
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

// One of `kCallers` distinct call sites: each instantiation is its own function with its own
// return address into the loop below.
template <int I> [[gnu::noinline]] uint16_t named(bool withSite) {
  if (withSite) {
    setCaller(__builtin_return_address(0), COLLCHECK_CALLER_FRAME);
    return currentSite();
  }
  asm volatile("" ::: "memory");
  return 0;
}

using Fn = uint16_t (*)(bool);
template <int... I> constexpr auto table(std::integer_sequence<int, I...>) {
  return std::array<Fn, sizeof...(I)>{&named<I>...};
}
constexpr auto kCallers = table(std::make_integer_sequence<int, 32>{});

[[gnu::noinline]] uint64_t loop(uint64_t calls, int sites, bool withSite) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < calls; ++i)
    sum += kCallers[i % static_cast<uint64_t>(sites)](withSite);
  return sum;
}

// The same loop in a function that keeps a frame pointer: each site is then the pair (return
// address, the loop's own return address), and a known one costs the two loads that follow it.
[[gnu::noinline, gnu::optimize("no-omit-frame-pointer")]] uint64_t
loopWithFrame(uint64_t calls, int sites, bool withSite) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < calls; ++i)
    sum += kCallers[i % static_cast<uint64_t>(sites)](withSite);
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
  auto run = frames ? &loopWithFrame : &loop;
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
    volatile uint64_t sink = run(calls, sites, withSite);
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
