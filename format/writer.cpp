#include "format/writer.h"

#include "format/clock.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
// (microseconds: 64 records per page). Taking those faults here, on the slow path, keeps them off
// the recording path.
void prefaultForWrite(void *map) {
#ifdef MADV_POPULATE_WRITE
  if (madvise(map, kChunkBytes, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  auto *bytes = static_cast<volatile unsigned char *>(map);
  for (uint64_t offset = 0; offset < kChunkBytes; offset += 4096)
    bytes[offset] = 0; // nothing is published in a fresh chunk yet
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
  if (Record *base = chunks_[chunk].load(std::memory_order_acquire))
    return base;
  if (failed_.load(std::memory_order_relaxed) || abandoned_)
    return nullptr;
  // Chunks are mapped in order, so a thread that reserved far ahead waits for the ones before it.
  for (uint64_t c = 0; c <= chunk; ++c) {
    if (chunks_[c].load(std::memory_order_relaxed))
      continue;
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
    prefaultForWrite(map);
    chunks_[c].store(static_cast<Record *>(map), std::memory_order_release);
  }
  header_->tscCalibration = readTsc();
  header_->monoCalibration = monotonicNs();
  header_->tscTicksPerNs = ticksPerNs(header_->tscAtCreate, header_->createdMonotonicNs,
                                      header_->tscCalibration, header_->monoCalibration);
  return chunks_[chunk].load(std::memory_order_relaxed);
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
