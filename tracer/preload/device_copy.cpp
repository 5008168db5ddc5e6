#include "tracer/preload/device_copy.h"

#include "tracer/preload/capture.h"
#include "tracer/preload/core.h"
#include "tracer/preload/resolve.h"

#include <atomic>
#include <cstring>
#include <mutex>

namespace collcheck::tracer {
namespace {

// The driver API entry points used (signatures of cuda.h, types reduced to what they are).
using CUresult = int;
using PointerGetAttribute = CUresult (*)(void *data, int attribute, uintptr_t pointer);
using MemHostAlloc = CUresult (*)(void **pointer, size_t bytes, unsigned flags);
using MemcpyDtoHAsync = CUresult (*)(void *dst, uintptr_t src, size_t bytes, void *stream);
using LaunchHostFunc = CUresult (*)(void *stream, void (*fn)(void *), void *userData);
constexpr int kAttributeMemoryType = 2; // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr unsigned kMemoryTypeHost = 1, kMemoryTypeDevice = 2;

struct Driver {
  PointerGetAttribute pointerGetAttribute;
  MemHostAlloc memHostAlloc;
  MemcpyDtoHAsync memcpyDtoHAsync;
  LaunchHostFunc launchHostFunc;
};

// Looked up once the driver is loaded; before that (and in processes without a GPU) all null.
// The lookup walks every loaded object, so while the driver is absent it is repeated only when the
// loader has loaded something since the last one: a process that loads CUDA later is noticed at its
// next query (until then no buffer can be device memory), one without CUDA pays a short walk of
// the loader's list per query. (An earlier version repeated it every 1024th query and answered
// "no driver" in between, so a device buffer could be read as host memory.)
const Driver &driver() {
  static const Driver none{};
  static Driver found{};
  static std::atomic<const Driver *> published{nullptr};
  static std::atomic<uint64_t> lookedUpAt{~uint64_t{0}}; // objectsLoaded() at the last lookup
  static std::mutex lookup;
  if (const Driver *d = published.load(std::memory_order_acquire))
    return *d;
  // A loader that does not count (0) gets a lookup per query: slow, never wrong.
  uint64_t loaded = objectsLoaded();
  if (loaded != 0 && loaded == lookedUpAt.load(std::memory_order_acquire))
    return none;
  std::lock_guard<std::mutex> lock(lookup);
  if (const Driver *d = published.load(std::memory_order_relaxed))
    return *d;
  if (loaded != 0 && loaded == lookedUpAt.load(std::memory_order_relaxed))
    return none; // another thread looked while this one waited
  auto probe = reinterpret_cast<PointerGetAttribute>(resolveNext("cuPointerGetAttribute"));
  if (!probe) {
    // Stored after the lookup, so that no query answers "no driver" while one is under way;
    // counted before it, so that an object loaded meanwhile is looked at by the next query.
    lookedUpAt.store(loaded, std::memory_order_release);
    return none;
  }
  found.pointerGetAttribute = probe;
  found.memHostAlloc = reinterpret_cast<MemHostAlloc>(resolveNext("cuMemHostAlloc"));
  found.memcpyDtoHAsync = reinterpret_cast<MemcpyDtoHAsync>(resolveNext("cuMemcpyDtoHAsync_v2"));
  found.launchHostFunc = reinterpret_cast<LaunchHostFunc>(resolveNext("cuLaunchHostFunc"));
  published.store(&found, std::memory_order_release);
  return found;
}

// Pinned staging slots, one per capture in flight; the host function frees its slot. The input and
// the output of a call each have their own slot and host function: one shared host function would
// cost the host about 11 us less per count reduction (bench/README.md, History), but would run only
// after the collective, so that a collective that hangs (the case the post-mortem is for) would
// leave no record of its inputs.
constexpr size_t kSlots = 256;
constexpr size_t kSlotBytes = 64 * sizeof(double);
struct Pending {
  format::Record call;
  uint64_t elements;
  bool output;
  unsigned char *staging;
  std::atomic<bool> busy{false};
};
Pending pending[kSlots];
unsigned char *staging = nullptr;
std::atomic<uint64_t> nextSlot{0};
std::mutex stagingMutex;

bool ensureStaging(const Driver &d) {
  std::lock_guard<std::mutex> lock(stagingMutex);
  if (staging)
    return true;
  void *memory = nullptr;
  if (!d.memHostAlloc || d.memHostAlloc(&memory, kSlots * kSlotBytes, 0) != 0 || !memory)
    return false;
  staging = static_cast<unsigned char *>(memory);
  for (size_t i = 0; i < kSlots; ++i)
    pending[i].staging = staging + i * kSlotBytes;
  return true;
}

void publishStaged(void *userData) {
  auto *slot = static_cast<Pending *>(userData);
  recordCapturedValues(slot->call, slot->staging, slot->elements, slot->output,
                       format::kFlagDeviceBuffer);
  slot->busy.store(false, std::memory_order_release);
}

} // namespace

bool cudaDriverLoaded() { return driver().pointerGetAttribute != nullptr; }

namespace detail {
std::atomic<uint64_t> noDriverAt{0};

bool lookForHostMemory(const void *pointer, uint64_t tsc) {
  if (!driver().pointerGetAttribute) {
    noDriverAt.store(tsc | 1, std::memory_order_relaxed);
    return true;
  }
  noDriverAt.store(0, std::memory_order_relaxed);
  return memoryKind(pointer) == MemoryKind::Host;
}
} // namespace detail

MemoryKind memoryKind(const void *pointer) {
  const Driver &d = driver();
  if (!d.pointerGetAttribute)
    return MemoryKind::Host;
  unsigned type = 0;
  CUresult rc =
      d.pointerGetAttribute(&type, kAttributeMemoryType, reinterpret_cast<uintptr_t>(pointer));
  if (rc != 0)
    return MemoryKind::Host; // CUDA_ERROR_INVALID_VALUE: memory the driver does not know
  if (type == kMemoryTypeHost)
    return MemoryKind::Host;
  return type == kMemoryTypeDevice ? MemoryKind::Device : MemoryKind::Unknown;
}

bool captureFromDevice(const format::Record &call, const void *device, uint64_t elements,
                       bool output, void *stream) {
  const Driver &d = driver();
  uint32_t elementBytes = format::dataTypeSize(static_cast<format::DataType>(call.dataType));
  if (!d.memcpyDtoHAsync || !d.launchHostFunc || elementBytes == 0 ||
      elements * elementBytes > kSlotBytes || !ensureStaging(d))
    return false;
  Pending &slot = pending[nextSlot.fetch_add(1, std::memory_order_relaxed) % kSlots];
  if (slot.busy.exchange(true, std::memory_order_acquire))
    return false; // every slot in flight: skip rather than wait
  slot.call = call;
  slot.elements = elements;
  slot.output = output;
  if (d.memcpyDtoHAsync(slot.staging, reinterpret_cast<uintptr_t>(device), elements * elementBytes,
                        stream) != 0 ||
      d.launchHostFunc(stream, publishStaged, &slot) != 0) {
    slot.busy.store(false, std::memory_order_release);
    return false;
  }
  return true;
}

} // namespace collcheck::tracer
