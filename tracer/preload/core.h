// The tracer's one core: every wrapper hands its call here. It owns the trace file (created on the
// first recorded call, so a process that makes none leaves nothing), the communicator registry, the
// thread index, the current window and the NCCL group state. Hot path: no lock, no allocation, no
// syscall; the slow paths (first call, new communicator, file growth) are marked.
#pragma once

#include "record.h"

#include <atomic>
#include <cstdint>
#include <span>

namespace collcheck::tracer {

using format::Kind;
using format::Record;

// One communicator as this process sees it through one handle. Several handles may share an id
// (ncclCommInitAll gives one process several ranks of one communicator); each has its own sequence.
struct CommState {
  uint64_t id = 0;
  int32_t rank = -1;
  int32_t size = -1;
  std::atomic<uint64_t> nextSeq{0};
  std::atomic<uint64_t> creations{0}; // communicators created from this one, in call order
};

// Looks up a live communicator by its handle (MPI_Comm or ncclComm_t value). Lock-free.
CommState *findComm(uintptr_t handle);
// Slow path: registers a new handle (replacing a released one with the same value).
CommState *registerComm(uintptr_t handle, uint64_t id, int32_t rank, int32_t size);
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
class CallScope {
public:
  CallScope();
  ~CallScope();
  bool outermost() const { return outermost_; }

private:
  bool outermost_;
};

// A slot filled with the fields every record has (kind, thread, window, group, timestamp), or null
// when tracing is off or the file is full. The caller fills the rest and calls publish().
Record *beginRecord(Kind kind);
inline void publish(Record *r) {
  if (r)
    format::publish(*r);
}
// Records that a published call returned, with its duration.
void endRecord(Record *r, bool failed);

// Sequenced call on a communicator: begins the record and stamps comm id, rank and sequence.
Record *beginCall(Kind kind, CommState *comm);

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

// NCCL group nesting on this thread: records inside a group carry its ordinal.
void groupStart();
void groupEnd();

// Annotation state.
void setWindow(uint32_t window);
uint32_t currentWindow();

} // namespace collcheck::tracer
