// The tracer's one core: every wrapper hands its call here. It owns the trace file (created on the
// first recorded call, so a process that makes none leaves nothing), the communicator registry, the
// thread index, the current window and the NCCL group state. Hot path: no lock, no allocation, no
// syscall; the slow paths (first call, new communicator, file growth) are marked.
#pragma once

#include "format/clock.h"
#include "format/record.h"
#include "format/writer.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>

namespace collcheck::tracer {

using format::Kind;
using format::Record;

// Exported symbols: the wrappers and the annotation entry points only; everything else is hidden
// (-fvisibility=hidden), so internal calls are direct, not through the PLT.
#define COLLCHECK_EXPORT extern "C" __attribute__((visibility("default")))

// Plain __thread (no C++ dynamic initialization, so no TLS wrapper call) in the initial-exec model:
// one %fs-relative load per access.
#define COLLCHECK_TLS __thread __attribute__((tls_model("initial-exec")))
// The record path's small functions: inlined into every wrapper whatever the compiler's size
// heuristics say (hundreds of wrappers call them, so GCC at -O2 kept them out of line, with the
// record built in memory and handed between them).
#define COLLCHECK_HOT [[gnu::always_inline]] inline
namespace detail {
extern COLLCHECK_TLS int32_t threadIndex;
extern COLLCHECK_TLS int groupDepth;
extern COLLCHECK_TLS uint16_t groupOrdinal;
extern COLLCHECK_TLS int callDepth;
extern std::atomic<uint32_t> window;
extern bool measureDurations;
int32_t assignThreadIndex();
} // namespace detail

// One communicator as this process sees it through one handle. Several handles may share an id
// (ncclCommInitAll gives one process several ranks of one communicator); each has its own sequence.
struct CommState {
  uint64_t id = 0;
  int32_t rank = -1;
  int32_t size = -1;
  // An MPI intercommunicator's remote group size, the length of its count arrays (-1: not one).
  int32_t remoteSize = -1;
  std::atomic<uint64_t> nextSeq{0};
  std::atomic<uint64_t> creations{0}; // communicators created from this one, in call order
};

namespace detail {
inline constexpr size_t kRegistrySlots = size_t{1} << 14;
struct RegistrySlot {
  std::atomic<uintptr_t> handle{0};
  std::atomic<CommState *> state{nullptr};
};
extern RegistrySlot registry[kRegistrySlots];
// Fibonacci hashing: handles are pointers or small integers; one multiply spreads both.
inline size_t registrySlotOf(uintptr_t handle) {
  return static_cast<size_t>((handle * 0x9e3779b97f4a7c15ull) >> (64 - 14));
}
} // namespace detail

// Looks up a live communicator by its handle (MPI_Comm or ncclComm_t value). Lock-free.
COLLCHECK_HOT CommState *findComm(uintptr_t handle) {
  using namespace detail;
  size_t i = registrySlotOf(handle);
  for (size_t probe = 0; probe < kRegistrySlots; ++probe, i = (i + 1) & (kRegistrySlots - 1)) {
    uintptr_t key = registry[i].handle.load(std::memory_order_acquire);
    if (key == handle)
      return registry[i].state.load(std::memory_order_acquire);
    if (key == 0)
      return nullptr;
  }
  return nullptr;
}
// Slow path: registers a new handle (replacing a released one with the same value).
// `remoteSize`: an MPI intercommunicator's remote group size, -1 for any other communicator.
CommState *registerComm(uintptr_t handle, uint64_t id, int32_t rank, int32_t size,
                        int32_t remoteSize = -1);
void releaseComm(uintptr_t handle);

uint64_t mix64(uint64_t x);
uint64_t hashBytes(const void *data, size_t size, uint64_t seed);
// Id of a communicator derived from its parent without communication: every member computes the
// same value from what it knows locally (parent id, creation ordinal on the parent, how, color,
// and where known the member list).
uint64_t childCommId(uint64_t parentId, uint64_t ordinal, format::CommOrigin origin, int64_t color,
                     std::span<const int32_t> worldMembers);

// True while this thread is inside a wrapper: calls the MPI or NCCL library makes internally are
// forwarded without being recorded.
// A scope made with `open` false counts nothing and is never outermost: a binding that leaves the
// recording to the function it calls.
class CallScope {
public:
  COLLCHECK_HOT explicit CallScope(bool open = true)
      : open_(open), outermost_(open && detail::callDepth++ == 0) {}
  COLLCHECK_HOT ~CallScope() {
    if (open_)
      --detail::callDepth;
  }
  CallScope(const CallScope &) = delete;
  CallScope &operator=(const CallScope &) = delete;
  bool open() const { return open_; }
  bool outermost() const { return outermost_; }

private:
  bool open_;
  bool outermost_;
};

// --- the recording path of sequenced calls ---------------------------------------------------
// The record is assembled in a local (registers, after optimization) and copied into its slot, so
// the check is computed from values the CPU holds rather than read back from the just-written
// cache line (a store-forwarding stall of several nanoseconds).

namespace detail {
extern std::atomic<format::Writer *> writerPtr; // null until the first record opens the file
Record *reserveFirstSlot();                     // slow path: opens the file (or finds it off)
void warnGrowthFailure(format::Writer &w);      // once per process
COLLCHECK_HOT Record *reserveIn(format::Writer &w) {
  Record *r = w.reserve();
  if (!r) [[unlikely]]
    warnGrowthFailure(w);
  return r;
}
} // namespace detail

// A reserved slot, or null when tracing is off or the file is full.
COLLCHECK_HOT Record *reserveSlot() {
  format::Writer *w = detail::writerPtr.load(std::memory_order_acquire);
  if (!w) [[unlikely]]
    return detail::reserveFirstSlot();
  return detail::reserveIn(*w);
}

// The one way a record is built: stamp() fills, in a local, the fields every record has (kind,
// thread, window, timestamp; on a communicator its id, the rank and the next sequence number),
// the caller fills the rest, and commit() (or writeRecord()) puts it into its slot. Bytes 2..3
// (`group`) are left to the caller: a call's site (call_site.h; a call's NCCL group is that of its
// thread's GroupStart record before it), or stampMeta()'s group ordinal on other records.
COLLCHECK_HOT void stamp(Record &rec, Kind kind, CommState *comm) {
  int32_t thread = detail::threadIndex;
  if (thread < 0) [[unlikely]]
    thread = detail::assignThreadIndex();
  rec.tscStart = format::readTsc();
  rec.kind = static_cast<uint8_t>(kind);
  rec.window = detail::window.load(std::memory_order_relaxed);
  rec.peer = -1;
  if (comm) {
    rec.commId = comm->id;
    rec.commRank = comm->rank;
    rec.setSeqThread(comm->nextSeq.fetch_add(1, std::memory_order_relaxed),
                     static_cast<uint16_t>(thread));
  } else {
    rec.commRank = -1;
    rec.setSeqThread(0, static_cast<uint16_t>(thread));
  }
}

// Copies a filled record into its slot and publishes it (the check is stored last).
COLLCHECK_HOT void commit(Record &slot, const Record &rec) {
  uint16_t check = format::recordHash(rec);
  slot.group = rec.group;
  std::memcpy(reinterpret_cast<char *>(&slot) + 8, reinterpret_cast<const char *>(&rec) + 8,
              sizeof(Record) - 8);
  std::atomic_ref<uint16_t>(slot.check).store(check, std::memory_order_release);
}

// A record on no communicator: stamp() and the thread's NCCL group ordinal (0 outside a group).
inline Record stampMeta(Kind kind) {
  Record rec{};
  stamp(rec, kind, nullptr);
  rec.group = detail::groupDepth > 0 ? detail::groupOrdinal : 0;
  return rec;
}
// Reserves a slot and commits `rec` into it: the slot, or null when tracing is off or the file is
// full (nothing written).
inline Record *writeRecord(const Record &rec) {
  Record *slot = reserveSlot();
  if (slot)
    commit(*slot, rec);
  return slot;
}
// Records that a published call returned: with its duration under COLLCHECK_DURATIONS=1, else as
// one store without reading the clock again.
COLLCHECK_HOT void endRecord(Record *r, bool failed) {
  if (!r)
    return;
  format::storeDuration(*r, detail::measureDurations ? format::readTsc() - r->tscStart : 0, failed);
}

// Writes a CommCreate record and the CommMembers records of its member list (world ranks).
void recordCommCreate(const CommState &comm, uint64_t parentId, format::CommOrigin origin,
                      int64_t color, uint64_t ordinal, std::span<const int32_t> worldMembers,
                      uint8_t flags);
void recordCommRelease(const CommState &comm, format::CommReleaseHow how, uint8_t flags);

// Process identity, filled as it becomes known.
int32_t worldRank();
void setWorld(int32_t rank, int32_t size);
void setMpiInfo(const char *libraryVersion, int threadLevel);
void setNcclVersion(int version);
void markFinished();
// One ProcessSignal record, from a signal handler: no lock, no growth, no allocation.
void recordProcessSignal(int signal);

// NCCL group nesting on this thread: records inside a group carry its ordinal.
void groupStart();
void groupEnd();

// Annotation state.
void setWindow(uint32_t window);
uint32_t currentWindow();

} // namespace collcheck::tracer
