#include "format/writer.h"

#include "format/clock.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace collcheck::format {
namespace {

constexpr uint64_t kChunkBytes = Writer::kChunkRecords * kRecordSize;

void copyField(char *dst, size_t size, const std::string &src) {
  size_t n = std::min(size - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

std::string errnoText(const char *what, const std::string &path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// Opens (creating when missing) the trace folder without following a symlink at its last component.
int openFolder(const std::string &dir, std::string &error) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    error = errnoText("cannot create trace folder", dir);
    return -1;
  }
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    error = errno == ELOOP || errno == ENOTDIR
                ? "trace folder " + dir + " is a symlink or not a folder; refusing to follow it"
                : errnoText("cannot open trace folder", dir);
  return fd;
}

// A shared file mapping is write-protected until each page's first write, which then faults
// (microseconds: 64 records per page). MADV_POPULATE_WRITE takes those faults in the kernel, in
// one call. On a hypervisor that shadows the guest's page tables that is not enough: the first
// write from user space through each new page-table entry still exits to the hypervisor (measured
// 3-5 us per page on the development VM, every 64th record, on tmpfs as on disk; docs/
// performance.md), so each page is then written once from user space too. The write is an atomic
// OR of zero into the check of the page's first record: it changes no byte, and a record being
// written and published in that page by another thread at the same moment is not disturbed.
void prefaultForWrite(void *map, uint64_t bytes) {
#ifdef MADV_POPULATE_WRITE
  madvise(map, bytes, MADV_POPULATE_WRITE);
#endif
  for (uint64_t offset = 0; offset < bytes; offset += 4096)
    __atomic_fetch_or(reinterpret_cast<volatile uint16_t *>(static_cast<char *>(map) + offset), 0,
                      __ATOMIC_RELAXED);
}

long futex(std::atomic<uint32_t> &word, int op, uint32_t value, const timespec *timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), op, value, timeout, nullptr, 0);
}

} // namespace

std::unique_ptr<Writer> Writer::create(const std::string &dir, const std::string &stem,
                                       const Identity &identity, std::string &error) {
  int dirFd = openFolder(dir, error);
  if (dirFd < 0)
    return nullptr;
  std::unique_ptr<Writer> w(new Writer());
  std::string name;
  for (int attempt = 0; attempt < 1000 && w->fd_ < 0; ++attempt) {
    name = attempt == 0 ? stem + kFileSuffix : stem + "." + std::to_string(attempt) + kFileSuffix;
    w->fd_ = openat(dirFd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->fd_ < 0 && errno != EEXIST)
      break;
  }
  close(dirFd);
  w->path_ = dir + "/" + name;
  if (w->fd_ < 0) {
    error = errnoText("cannot create trace file", w->path_);
    return nullptr;
  }
  int rc = posix_fallocate(w->fd_, 0, kHeaderSize);
  if (rc != 0) {
    errno = rc;
    error = errnoText("cannot reserve space for trace file", w->path_);
    unlinkat(AT_FDCWD, w->path_.c_str(), 0);
    return nullptr;
  }
  void *map = mmap(nullptr, kHeaderSize, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd_, 0);
  if (map == MAP_FAILED) {
    error = errnoText("cannot map trace file", w->path_);
    unlinkat(AT_FDCWD, w->path_.c_str(), 0);
    return nullptr;
  }
  w->chunks_.reset(new std::atomic<Record *>[kMaxChunks]());
  auto *h = static_cast<FileHeader *>(map);
  w->header_ = h;
  std::memcpy(h->magic, kMagic, sizeof kMagic);
  h->version = kVersion;
  h->headerSize = kHeaderSize;
  h->recordSize = kRecordSize;
  h->endianTag = kEndianTag;
  h->pid = identity.pid;
  copyField(h->host, sizeof h->host, identity.host);
  copyField(h->jobId, sizeof h->jobId, identity.jobId);
  copyField(h->tracerVersion, sizeof h->tracerVersion, COLLCHECK_VERSION);
  copyField(h->command, sizeof h->command, identity.command);
  h->worldRank = -1;
  h->worldSize = -1;
  h->threadLevel = 0xffffffffu;
  // A short calibration so that a trace cut off early still converts ticks to time; finish() and
  // every extension refine it over a longer interval.
  h->createdRealtimeNs = realtimeNs();
  h->createdMonotonicNs = monotonicNs();
  h->tscAtCreate = readTsc();
  uint64_t mono1 = h->createdMonotonicNs, tsc1 = h->tscAtCreate;
  while (!kTscIsMonotonicNs && mono1 - h->createdMonotonicNs < 200000) {
    mono1 = monotonicNs();
    tsc1 = readTsc();
  }
  h->tscTicksPerNs = ticksPerNs(h->tscAtCreate, h->createdMonotonicNs, tsc1, mono1);
  h->tscCalibration = tsc1;
  h->monoCalibration = mono1;
  return w;
}

Writer::~Writer() {
  if (abandoned_)
    return;
  if (growerStarted_) {
    growerStop_.store(true);
    growerEpoch_.fetch_add(1);
    futex(growerEpoch_, FUTEX_WAKE_PRIVATE, 1, nullptr);
    pthread_join(static_cast<pthread_t>(growerThread_), nullptr);
  }
  finish();
  for (uint64_t i = 0; i < kMaxChunks; ++i) {
    Record *base = chunks_ ? chunks_[i].load() : nullptr;
    if (!base)
      break;
    munmap(base, kChunkBytes);
  }
  if (header_)
    munmap(header_, kHeaderSize);
  if (fd_ >= 0)
    close(fd_);
}

Record *Writer::grow(uint64_t chunk) {
  std::lock_guard<std::mutex> lock(growMutex_);
  // Chunks are mapped in order, so a thread that reserved far ahead waits for the ones before it.
  // Mapped here, on a recording thread, a chunk is not write-faulted in advance: its pages fault
  // one by one as records reach them, a few microseconds each, rather than all in one call.
  Record *base = nullptr;
  for (uint64_t c = 0; c <= chunk; ++c)
    if (!(base = mapChunk(c)))
      return nullptr;
  return base;
}

Record *Writer::mapChunk(uint64_t c) {
  if (Record *base = chunks_[c].load(std::memory_order_acquire))
    return base;
  if (failed_.load(std::memory_order_relaxed) || abandoned_)
    return nullptr;
  off_t offset = static_cast<off_t>(kHeaderSize + c * kChunkBytes);
  int rc = posix_fallocate(fd_, offset, static_cast<off_t>(kChunkBytes));
  if (rc != 0) {
    errno = rc;
    failure_ = errnoText("cannot extend trace file", path_);
    failed_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  void *map = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, offset);
  if (map == MAP_FAILED) {
    failure_ = errnoText("cannot map trace file", path_);
    failed_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  chunks_[c].store(static_cast<Record *>(map), std::memory_order_release);
  header_->tscCalibration = readTsc();
  header_->monoCalibration = monotonicNs();
  header_->tscTicksPerNs = ticksPerNs(header_->tscAtCreate, header_->createdMonotonicNs,
                                      header_->tscCalibration, header_->monoCalibration);
  return static_cast<Record *>(map);
}

bool Writer::startGrower() {
  if (growerStarted_ || abandoned_)
    return growerStarted_;
  // Every signal blocked in the new thread (it inherits the mask), so that a process-directed
  // signal is delivered to one of the application's threads, as without the tracer.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  int rc = pthread_create(&thread, nullptr, growerMain, this);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (rc != 0)
    return false;
  growerThread_ = static_cast<unsigned long>(thread);
  growerStarted_ = true;
  return true;
}

void Writer::wakeGrower() {
  growerEpoch_.fetch_add(1, std::memory_order_seq_cst);
  if (growerWaiting_.load(std::memory_order_seq_cst)) [[unlikely]]
    futex(growerEpoch_, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

void *Writer::growerMain(void *self) {
  auto *w = static_cast<Writer *>(self);
  pthread_setname_np(pthread_self(), "collcheck-grow");
  while (!w->growerStop_.load()) {
    uint32_t epoch = w->growerEpoch_.load(std::memory_order_seq_cst);
    w->growAhead();
    // Sleep until reserve() moves on (a lost wake-up costs at most the timeout).
    w->growerWaiting_.store(true, std::memory_order_seq_cst);
    if (w->growerEpoch_.load(std::memory_order_seq_cst) == epoch && !w->growerStop_.load()) {
      timespec timeout{0, 100 * 1000 * 1000};
      futex(w->growerEpoch_, FUTEX_WAIT_PRIVATE, epoch, &timeout);
    }
    w->growerWaiting_.store(false, std::memory_order_relaxed);
  }
  return nullptr;
}

// Maps the chunks up to kChunksAhead past the one in use, then write-faults their pages from the
// first one no record has reached yet. Each chunk is mapped under the mutex (a recording thread
// that found its chunk missing waits for that one chunk at most); the faulting takes no lock.
void Writer::growAhead() {
  constexpr uint64_t kPageRecords = 4096 / kRecordSize;
  uint64_t inUse = next_.load(std::memory_order_relaxed) / kChunkRecords;
  uint64_t last = std::min(inUse + kChunksAhead, kMaxChunks - 1);
  for (; grownChunks_ <= last && !growerStop_.load(std::memory_order_relaxed); ++grownChunks_) {
    if (chunks_[grownChunks_].load(std::memory_order_acquire))
      continue;
    std::lock_guard<std::mutex> lock(growMutex_);
    if (!mapChunk(grownChunks_))
      break;
  }
  // In slices of 16 pages, so that the recording threads' position is read again often: pages
  // that records have reached are faulted already, the grower skips them.
  constexpr uint64_t kSliceRecords = 16 * kPageRecords;
  while (!growerStop_.load(std::memory_order_relaxed)) {
    uint64_t from = std::max(touchedUpTo_, next_.load(std::memory_order_relaxed));
    from = (from + kPageRecords - 1) / kPageRecords * kPageRecords;
    uint64_t c = from / kChunkRecords;
    Record *base = c <= last ? chunks_[c].load(std::memory_order_acquire) : nullptr;
    if (!base)
      return;
    uint64_t end = std::min((c + 1) * kChunkRecords, (from / kSliceRecords + 1) * kSliceRecords);
    prefaultForWrite(base + (from - c * kChunkRecords), (end - from) * kRecordSize);
    touchedUpTo_ = end;
  }
}

Record *Writer::drop() {
  if (header_)
    std::atomic_ref<uint32_t>(header_->droppedRecords).fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

std::string Writer::failure() const {
  if (!failed_.load(std::memory_order_relaxed))
    return {};
  std::lock_guard<std::mutex> lock(const_cast<std::mutex &>(growMutex_));
  return failure_;
}

void Writer::finish() {
  if (!header_ || abandoned_)
    return;
  std::lock_guard<std::mutex> lock(growMutex_); // the grower refines the calibration too
  uint64_t tsc = readTsc(), mono = monotonicNs();
  if (mono > header_->monoCalibration) {
    header_->tscCalibration = tsc;
    header_->monoCalibration = mono;
    header_->tscTicksPerNs =
        ticksPerNs(header_->tscAtCreate, header_->createdMonotonicNs, tsc, mono);
  }
  // Before `finished`: a reader that sees the trace finished sees the count too. A record reserved
  // after this lands on the first slot past the count, which the reader checks (reader.h).
  std::atomic_ref<uint64_t>(header_->slotsAtFinish)
      .store(next_.load(std::memory_order_seq_cst), std::memory_order_relaxed);
  std::atomic_ref<uint32_t>(header_->finished).store(1, std::memory_order_release);
}

void Writer::abandon() {
  // The child shares the parent's file and offsets: writing would corrupt it. Unmapping in the
  // child leaves the parent's mapping untouched.
  abandoned_ = true;
  for (uint64_t i = 0; i < kMaxChunks; ++i) {
    Record *base = chunks_[i].exchange(nullptr);
    if (!base)
      break;
    munmap(base, kChunkBytes);
  }
  munmap(header_, kHeaderSize);
  header_ = nullptr;
  close(fd_);
  fd_ = -1;
}

} // namespace collcheck::format
