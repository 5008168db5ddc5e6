// Releasing the pages of trace files already read, in batches. A release (MADV_DONTNEED) must
// drop the pages from the TLB of every core that runs a thread of the process; released one range
// at a time, each range interrupts those cores once (on a virtual machine about 9 us a range with
// a second thread running, against 1 us batched: docs/performance.md). One process_madvise call
// releases up to 1,024 ranges with one flush. Where the kernel refuses process_madvise, or this
// advice through it (older kernels accept only non-destructive advice there), each range is
// released by madvise, as before.
#pragma once

#include "reader.h"

#include <cstdint>
#include <sys/uio.h>
#include <vector>

namespace collcheck::analyzer {

class PageReleaser {
public:
  PageReleaser() = default;
  PageReleaser(const PageReleaser &) = delete;
  PageReleaser &operator=(const PageReleaser &) = delete;
  ~PageReleaser() { flush(); }

  // Queues the whole pages of [first, first+count) slots of `reader` (a page partly outside
  // stays: its other slots are read still); releases the queue once it is full.
  void add(const format::Reader &reader, uint64_t first, uint64_t count);
  // Releases what is queued.
  void flush();

private:
  std::vector<iovec> pending_;
};

} // namespace collcheck::analyzer
