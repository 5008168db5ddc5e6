// Device buffers of captured calls, through the CUDA driver API (libcuda, loaded by every process
// that uses a GPU, whether its CUDA runtime is linked statically or dynamically), never linked:
// found among the loaded objects at run time. A capture from device memory is an asynchronous copy
// into pinned host memory on the call's own stream, followed by a host function on that stream
// that publishes the values: the application's host thread never waits and no synchronization is
// made.
#pragma once

#include "record.h"

namespace collcheck::tracer {

enum class MemoryKind { Host, Device, Unknown };

// Where `pointer` lives. Host when no CUDA driver is loaded in the process (no GPU in use).
MemoryKind memoryKind(const void *pointer);
bool cudaDriverLoaded();

// Enqueues the copy of `elements` values of `call`'s type from device memory on `stream`, into the
// calling thread's open capture (opened by the call's first copy). False when the driver lacks an
// entry point, the staging slots are all in flight, or the enqueue fails: nothing is then captured
// of that side.
bool captureFromDevice(const format::Record &call, const void *device, uint64_t elements,
                       bool output, void *stream);
// Enqueues the one host function that records the open capture's values (input, then output) once
// the stream has run the copies; nothing if none is open. Called after the call's last copy: one
// host function per call, since the stream waits for each until the host has run it.
void finishDeviceCapture(void *stream);

} // namespace collcheck::tracer
