// Device buffers of captured calls, through the CUDA driver API (libcuda, loaded by every process
// that uses a GPU, whether its CUDA runtime is linked statically or dynamically), never linked:
// found among the loaded objects at run time. A capture from device memory is an asynchronous copy
// into pinned host memory on the call's own stream, followed by a host function on that stream
// that publishes the values: the application's stream never waits and no synchronization is made.
#pragma once

#include "format/record.h"
#include "tracer/preload/core.h"

#include <atomic>

namespace collcheck::tracer {

enum class MemoryKind { Host, Device, Unknown };

// Where `pointer` lives. Host when no CUDA driver is loaded in the process (no GPU in use).
MemoryKind memoryKind(const void *pointer);
bool cudaDriverLoaded();
// Whether `pointer` is host memory, at a call stamped `tsc`: the same answer as memoryKind(), but
// where no driver was loaded at a look less than kNoDriverRecheckTicks before, no look at all.
// Sound because no device memory exists that soon after the driver is loaded: the driver's
// initialization and a context alone take milliseconds. A loop of calls pays the look (a walk of
// the loaded objects, about 10 ns) once per such interval instead of on every call.
// 2^20 timestamp ticks: 0.2-0.5 ms at the 2-5 GHz of x86 timestamp counters, 1 ms where the
// stamps are nanoseconds.
inline constexpr uint64_t kNoDriverRecheckTicks = uint64_t{1} << 20;
namespace detail {
// The stamp of the last look that found no driver (0: none, or a driver was found).
extern std::atomic<uint64_t> noDriverAt;
bool lookForHostMemory(const void *pointer, uint64_t tsc); // the look, which sets noDriverAt
} // namespace detail
COLLCHECK_HOT bool hostMemoryAt(const void *pointer, uint64_t tsc) {
  uint64_t at = detail::noDriverAt.load(std::memory_order_relaxed);
  if (at != 0 && tsc - at < kNoDriverRecheckTicks) [[likely]]
    return true;
  return detail::lookForHostMemory(pointer, tsc);
}

// Enqueues the copy of `elements` values of `call`'s type from device memory on `stream` and the
// host function that records them. False when the driver lacks an entry point, the staging slots
// are all in flight, or an enqueue fails: nothing is then captured.
bool captureFromDevice(const format::Record &call, const void *device, uint64_t elements,
                       bool output, void *stream);

} // namespace collcheck::tracer
