// Giving back the pages of trace files already read, so that what a reader keeps mapped does not
// grow with the trace (the merge: match/chunk_reader.h; the call-site pass; the Perfetto export).
#pragma once

#include "format/reader.h"

#include <sys/uio.h>
#include <vector>

namespace collcheck::analyzer {

// The whole pages of slots [first, first+count) of `reader`'s mapping (a page partly outside stays:
// its other slots may still be read); iov_len 0 when there is none.
iovec wholePages(const format::Reader &reader, uint64_t first, uint64_t count);
// Gives those pages back at once: for a single release; many go through a PageReleaser.
void releaseSlots(const format::Reader &reader, uint64_t first, uint64_t count);

// Gives mapped pages back (MADV_DONTNEED) in batches. A release must drop the pages from the TLB of
// every core that runs a thread of the process: one range at a time, each range interrupts those
// cores once (about 9 us a range here with a second thread running); one process_madvise call
// releases up to 1,024 ranges with one flush. Where the kernel refuses it for MADV_DONTNEED (before
// Linux 6.13), each range is released by madvise. A released page of a file's read-only mapping
// reads back from the page cache when touched again: releasing never changes what is read.
class PageReleaser {
public:
  PageReleaser() = default;
  PageReleaser(const PageReleaser &) = delete;
  PageReleaser &operator=(const PageReleaser &) = delete;
  ~PageReleaser() { flush(); }
  // Queues the whole pages of [first, first+count) slots of `reader` (a page partly outside stays:
  // its other slots are still to be read); releases the queue once it is full.
  void add(const format::Reader &reader, uint64_t first, uint64_t count);
  void flush();

private:
  std::vector<iovec> pending_;
};

} // namespace collcheck::analyzer
