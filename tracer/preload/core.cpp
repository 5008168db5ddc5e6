#include "tracer/preload/core.h"
#include "tracer/preload/call_site.h"
#include "tracer/preload/fatal_signal.h"

#include "format/clock.h"
#include "format/writer.h"
#include "tracer/preload/capture.h"
#include "tracer/preload/resolve.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <string>
#include <unistd.h>

namespace collcheck::tracer {

namespace detail {
std::atomic<int32_t> nextThreadIndex{0};
COLLCHECK_TLS int callDepth = 0;
COLLCHECK_TLS int32_t threadIndex = -1;
COLLCHECK_TLS int groupDepth = 0;
COLLCHECK_TLS uint16_t groupOrdinal = 0;
std::atomic<uint32_t> window{0};
RegistrySlot registry[kRegistrySlots];
// COLLCHECK_DURATIONS=1: a second timestamp when the call returns.
bool measureDurations = false;
std::atomic<format::Writer *> writerPtr{nullptr};

int32_t assignThreadIndex() {
  threadIndex = nextThreadIndex.fetch_add(1, std::memory_order_relaxed);
  return threadIndex;
}
} // namespace detail
using namespace detail;

namespace {

COLLCHECK_TLS uint16_t groupCounter = 0;

std::atomic<int32_t> knownWorldRank{-1};
// A forked child is not its parent's rank, though it inherits the launcher's variables: its file
// claims no world rank, or the job's files would claim the parent's rank twice (and the analyzer
// could check neither).
std::atomic<bool> forkedChild{false};

// --- the trace file -------------------------------------------------------------------------

enum class FileState : int { Unopened, Open, Disabled };
std::atomic<int> fileState{static_cast<int>(FileState::Unopened)};
std::mutex openMutex;
std::atomic<bool> growthWarned{false};

std::string readCommand() {
  std::string command;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return command;
  char buffer[256];
  ssize_t n = read(fd, buffer, sizeof buffer);
  close(fd);
  for (ssize_t i = 0; i < n; ++i)
    command.push_back(buffer[i] == '\0' ? ' ' : buffer[i]);
  while (!command.empty() && command.back() == ' ')
    command.pop_back();
  return command;
}

const char *firstEnv(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (const char *value = getenv(name); value && *value)
      return value;
  return nullptr;
}

int32_t worldRankFromEnvironment() {
  if (forkedChild.load(std::memory_order_relaxed))
    return -1;
  const char *value =
      firstEnv({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "RANK"});
  return value ? static_cast<int32_t>(strtol(value, nullptr, 10)) : -1;
}

void forgetAfterFork() {
  // The child must not append to its parent's file; it opens its own on its first recorded call.
  if (format::Writer *w = writerPtr.exchange(nullptr))
    w->abandon(); // the Writer object itself is leaked: its destructor would touch parent state
  forgetCallSitesAfterFork();
  fileState.store(static_cast<int>(FileState::Unopened));
  growthWarned.store(false);
  knownWorldRank.store(-1);
  forkedChild.store(true);
}

// Installed when the library is loaded, not when the first trace file opens: a child forked before
// its parent's first traced call (before MPI_Init, say) must not claim the parent's rank either.
[[gnu::constructor]] void installForkHook() { pthread_atfork(nullptr, nullptr, forgetAfterFork); }

void finishAtExit() {
  if (format::Writer *w = writerPtr.load(std::memory_order_acquire))
    w->finish();
}

format::Writer *openWriter() {
  std::lock_guard<std::mutex> lock(openMutex);
  if (format::Writer *w = writerPtr.load(std::memory_order_acquire))
    return w;
  if (fileState.load() == static_cast<int>(FileState::Disabled))
    return nullptr;
  const char *dir = getenv("COLLCHECK_OUTPUT");
  if (!dir || !*dir) {
    fileState.store(static_cast<int>(FileState::Disabled));
    return nullptr;
  }
  format::Writer::Identity identity;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  identity.host = host;
  identity.pid = static_cast<int>(getpid());
  if (const char *job = firstEnv({"COLLCHECK_JOB_ID", "SLURM_JOB_ID", "PMIX_NAMESPACE",
                                  "OMPI_MCA_ess_base_jobid", "TORCHELASTIC_RUN_ID"}))
    identity.jobId = job;
  identity.command = readCommand();
  std::string error;
  std::string stem = identity.host + "-" + std::to_string(identity.pid);
  auto writer = format::Writer::create(dir, stem, identity, error);
  if (!writer) {
    std::string message = error + "; this process is not traced";
    warn(message.c_str());
    fileState.store(static_cast<int>(FileState::Disabled));
    return nullptr;
  }
  const char *durations = getenv("COLLCHECK_DURATIONS");
  measureDurations = durations && *durations && *durations != '0';
  if (measureDurations)
    writer->header().flags |= format::kHeaderDurations;
  configureCapture();
  // The file grows on a thread of its own, ahead of the calls; where none can be started, the
  // calls grow it themselves (each page then faults when the first record reaches it).
  writer->startGrower();
  int32_t rank = knownWorldRank.load();
  writer->header().worldRank = rank >= 0 ? rank : worldRankFromEnvironment();
  static bool hooksInstalled = false;
  if (!hooksInstalled) {
    atexit(finishAtExit);
    installFatalSignalRecorder();
    hooksInstalled = true;
  }
  format::Writer *w = writer.release();
  writerPtr.store(w, std::memory_order_release);
  fileState.store(static_cast<int>(FileState::Open));
  return w;
}

inline format::Writer *writer() {
  format::Writer *w = writerPtr.load(std::memory_order_acquire);
  if (w) [[likely]]
    return w;
  if (fileState.load(std::memory_order_relaxed) == static_cast<int>(FileState::Disabled))
    return nullptr;
  return openWriter();
}

// --- the communicator registry --------------------------------------------------------------

constexpr uintptr_t kReleased = ~uintptr_t{0};
std::mutex registryMutex;
size_t slotOf(uintptr_t handle) { return registrySlotOf(handle); }

} // namespace

namespace detail {
Record *reserveFirstSlot() {
  format::Writer *w = writer();
  return w ? reserveIn(*w) : nullptr;
}

void warnGrowthFailure(format::Writer &w) {
  if (growthWarned.exchange(true))
    return;
  std::string message = w.failure() + "; later calls of this process are not recorded (the "
                                      "application continues)";
  warn(message.c_str());
}
} // namespace detail

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hashBytes(const void *data, size_t size, uint64_t seed) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  uint64_t h = mix64(seed ^ size);
  for (size_t i = 0; i < size; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, size - i < 8 ? size - i : 8);
    h = mix64(h ^ word);
  }
  return h;
}

uint64_t childCommId(uint64_t parentId, uint64_t ordinal, format::CommOrigin origin, int64_t color,
                     std::span<const int32_t> worldMembers) {
  uint64_t h = mix64(parentId ^ mix64(ordinal + 1));
  h = mix64(h ^ (static_cast<uint64_t>(origin) << 56) ^ static_cast<uint64_t>(color));
  if (!worldMembers.empty())
    h = hashBytes(worldMembers.data(), worldMembers.size_bytes(), h);
  return h == 0 ? 1 : h; // 0 means "no communicator" in a record
}

CommState *registerComm(uintptr_t handle, uint64_t id, int32_t rank, int32_t size,
                        int32_t remoteSize) {
  auto *state = new CommState();
  state->id = id;
  state->rank = rank;
  state->size = size;
  state->remoteSize = remoteSize;
  std::lock_guard<std::mutex> lock(registryMutex);
  size_t i = slotOf(handle);
  size_t reusable = kRegistrySlots;
  for (size_t probe = 0; probe < kRegistrySlots; ++probe, i = (i + 1) & (kRegistrySlots - 1)) {
    uintptr_t key = registry[i].handle.load(std::memory_order_relaxed);
    if (key == handle) {
      // A handle value reused after release, or registered twice: the new state wins. The old
      // state is leaked on purpose, a reader on another thread may still hold it.
      registry[i].state.store(state, std::memory_order_release);
      return state;
    }
    if (key == kReleased && reusable == kRegistrySlots)
      reusable = i;
    if (key == 0) {
      if (reusable == kRegistrySlots)
        reusable = i;
      break;
    }
  }
  if (reusable == kRegistrySlots) {
    warn("more than 16384 live communicators; new ones are not traced");
    delete state;
    return nullptr;
  }
  registry[reusable].state.store(state, std::memory_order_release);
  registry[reusable].handle.store(handle, std::memory_order_release);
  return state;
}

void releaseComm(uintptr_t handle) {
  std::lock_guard<std::mutex> lock(registryMutex);
  size_t i = slotOf(handle);
  for (size_t probe = 0; probe < kRegistrySlots; ++probe, i = (i + 1) & (kRegistrySlots - 1)) {
    uintptr_t key = registry[i].handle.load(std::memory_order_relaxed);
    if (key == handle) {
      registry[i].handle.store(kReleased, std::memory_order_release);
      return;
    }
    if (key == 0)
      return;
  }
}

void recordCommCreate(const CommState &comm, uint64_t parentId, format::CommOrigin origin,
                      int64_t color, uint64_t ordinal, std::span<const int32_t> worldMembers,
                      uint8_t flags) {
  Record rec = stampMeta(Kind::CommCreate);
  rec.commId = comm.id;
  rec.commRank = comm.rank;
  rec.count = static_cast<uint64_t>(comm.size);
  rec.aux = parentId;
  rec.peer = static_cast<int32_t>(color);
  rec.op = static_cast<uint8_t>(origin);
  rec.flags = flags;
  rec.setSeqThread(ordinal, rec.thread());
  if (Record *r = writeRecord(rec))
    endRecord(r, false);
  for (size_t first = 0; first < worldMembers.size(); first += format::kMembersPerRecord) {
    Record members = stampMeta(Kind::CommMembers);
    // The member payload overlays bytes 24..59 (timestamp to window): the total is in CommCreate.
    members.commId = comm.id;
    members.setSeqThread(first, members.thread());
    members.flags = flags;
    for (int i = 0; i < format::kMembersPerRecord; ++i)
      format::setMemberAt(members, i,
                          first + i < worldMembers.size() ? worldMembers[first + i] : -1);
    Record *r = writeRecord(members);
    if (!r)
      return;
    endRecord(r, false);
  }
}

void recordCommRelease(const CommState &comm, format::CommReleaseHow how, uint8_t flags) {
  Record rec = stampMeta(Kind::CommRelease);
  rec.commId = comm.id;
  rec.commRank = comm.rank;
  rec.op = static_cast<uint8_t>(how);
  rec.flags = flags;
  if (Record *r = writeRecord(rec))
    endRecord(r, false);
}

int32_t worldRank() {
  int32_t rank = knownWorldRank.load(std::memory_order_relaxed);
  return rank >= 0 ? rank : worldRankFromEnvironment();
}

void setWorld(int32_t rank, int32_t size) {
  knownWorldRank.store(rank);
  if (format::Writer *w = writer()) {
    w->header().worldRank = rank;
    w->header().worldSize = size;
  }
}

void setMpiInfo(const char *libraryVersion, int threadLevel) {
  if (format::Writer *w = writer()) {
    format::FileHeader &h = w->header();
    std::snprintf(h.mpiVersion, sizeof h.mpiVersion, "%s", libraryVersion);
    h.threadLevel = static_cast<uint32_t>(threadLevel);
  }
}

void setNcclVersion(int version) {
  if (format::Writer *w = writer())
    w->header().ncclVersion = version;
}

void markFinished() {
  if (format::Writer *w = writerPtr.load(std::memory_order_acquire))
    w->finish();
}

// Not through stamp(): in a signal handler, where a thread without an index gets none (assigning
// one is not async-signal-safe) and only the mapped part of the file may be written.
void recordProcessSignal(int signal) {
  format::Writer *w = writerPtr.load(std::memory_order_acquire);
  Record *r = w ? w->reserveMapped() : nullptr;
  if (!r)
    return;
  r->tscStart = format::readTsc();
  r->kind = static_cast<uint8_t>(Kind::ProcessSignal);
  r->window = window.load(std::memory_order_relaxed);
  r->setSeqThread(0, static_cast<uint16_t>(threadIndex < 0 ? 0 : threadIndex));
  r->commRank = -1;
  r->peer = -1;
  r->count = static_cast<uint64_t>(signal);
  format::publish(*r);
}

void groupStart() {
  if (groupDepth++ == 0) {
    groupCounter = static_cast<uint16_t>(groupCounter + 1);
    if (groupCounter == 0)
      groupCounter = 1; // 0 means "not in a group"
    groupOrdinal = groupCounter;
  }
}

void groupEnd() {
  if (groupDepth > 0)
    --groupDepth;
}

void setWindow(uint32_t value) { window.store(value, std::memory_order_relaxed); }
uint32_t currentWindow() { return window.load(std::memory_order_relaxed); }

} // namespace collcheck::tracer
