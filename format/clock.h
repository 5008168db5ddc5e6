// The timestamp counter behind Record::tscStart: the x86 TSC where there is one (a few ns to read,
// no syscall), CLOCK_MONOTONIC in nanoseconds elsewhere. Calibrated against CLOCK_MONOTONIC.
#pragma once

#include <cstdint>
#include <ctime>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace collcheck::format {

inline uint64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t realtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// CPU seconds a clock (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID) has counted; negative
// when it cannot be read.
inline double cpuSeconds(clockid_t clock) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0)
    return -1;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline uint64_t readTsc() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return monotonicNs();
#endif
}

inline constexpr bool kTscIsMonotonicNs =
#if defined(__x86_64__) || defined(__i386__)
    false;
#else
    true;
#endif

// Ticks per nanosecond between two (tsc, monotonic) pairs.
inline double ticksPerNs(uint64_t tsc0, uint64_t mono0, uint64_t tsc1, uint64_t mono1) {
  if (kTscIsMonotonicNs || mono1 <= mono0 || tsc1 <= tsc0)
    return 1.0;
  return static_cast<double>(tsc1 - tsc0) / static_cast<double>(mono1 - mono0);
}

} // namespace collcheck::format
