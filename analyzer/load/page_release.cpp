#include "analyzer/load/page_release.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace collcheck::analyzer {

namespace {

constexpr size_t kBatch = 1024; // IOV_MAX: the most ranges one process_madvise takes

// Set once the kernel refused process_madvise(MADV_DONTNEED) on this process: not asked again.
std::atomic<bool> batchRefused{false};

// A pidfd of this process, opened once per process (a forked child opens its own).
int selfPidfd() {
#ifdef SYS_pidfd_open
  static std::mutex mutex;
  static int fd = -1;
  static pid_t owner = 0;
  std::lock_guard lock(mutex);
  if (owner != getpid()) {
    owner = getpid();
    fd = static_cast<int>(syscall(SYS_pidfd_open, owner, 0));
  }
  return fd;
#else
  return -1;
#endif
}

// True when the kernel released every range in one call.
bool releaseBatched(const std::vector<iovec> &ranges) {
#ifdef SYS_process_madvise
  if (batchRefused.load(std::memory_order_relaxed))
    return false;
  const int fd = selfPidfd();
  if (fd < 0) {
    batchRefused.store(true, std::memory_order_relaxed);
    return false;
  }
  size_t bytes = 0;
  for (const iovec &r : ranges)
    bytes += r.iov_len;
  const long done =
      syscall(SYS_process_madvise, fd, ranges.data(), ranges.size(), MADV_DONTNEED, 0U);
  if (done < 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM || errno == EBADF))
    batchRefused.store(true, std::memory_order_relaxed);
  return done >= 0 && static_cast<size_t>(done) == bytes;
#else
  (void)ranges;
  return false;
#endif
}

} // namespace

iovec wholePages(const format::Reader &reader, uint64_t first, uint64_t count) {
  if (count == 0 || first >= reader.slotCount())
    return {};
  count = std::min(count, reader.slotCount() - first);
  static const auto pageSize = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(&reader.slot(first));
  auto end = begin + count * format::kRecordSize;
  begin = (begin + pageSize - 1) & ~(pageSize - 1);
  end &= ~(pageSize - 1);
  if (end <= begin)
    return {};
  return {reinterpret_cast<void *>(begin), end - begin};
}

void releaseSlots(const format::Reader &reader, uint64_t first, uint64_t count) {
  const iovec pages = wholePages(reader, first, count);
  if (pages.iov_len)
    madvise(pages.iov_base, pages.iov_len, MADV_DONTNEED);
}

void PageReleaser::add(const format::Reader &reader, uint64_t first, uint64_t count) {
  const iovec pages = wholePages(reader, first, count);
  if (!pages.iov_len)
    return;
  pending_.push_back(pages);
  if (pending_.size() >= kBatch)
    flush();
}

void PageReleaser::flush() {
  if (pending_.empty())
    return;
  // What a refused or partial batch left, or all of it: releasing a range twice is harmless.
  if (!releaseBatched(pending_))
    for (const iovec &r : pending_)
      madvise(r.iov_base, r.iov_len, MADV_DONTNEED);
  pending_.clear();
}

} // namespace collcheck::analyzer
