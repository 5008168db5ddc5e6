// What reading the traces out of the page cache costs this machine, two ways: through a mapping
// (each page's first touch maps it, and releasing it unmaps it) and copied with pread into a
// buffer used again. The analysis matches in place, through the mappings, where a second thread
// does not copy ahead for it: on most machines no copy is cheaper. On some virtual machines a
// page's first touch costs several times what copying the page does (2.5-2.8 us against
// 0.3-0.4 us on one, docs/performance.md, *Reading by copy*), and there copying is faster.
#pragma once

#include "trace_set.h"

#include <cstdint>

namespace collcheck::analyzer {

struct ReadingCost {
  // Per page, in the cheapest of the files' regions (the machine's price, without interruptions):
  double mappedNsPerPage = 0; // a page mapped, each of its lines loaded, and unmapped
  double copiedNsPerPage = 0; // a page copied into a buffer used again, each of its lines loaded
  uint64_t pages = 0;         // measured each way; 0 when the files are too small to tell
};

// Measures both on a sample of the set's files (up to 16 files of at least 512 KiB of records,
// 256 KiB each way: milliseconds), each way on other pages of a file's start than the other, which
// the analysis reads afterwards anyway. Files not in the page cache make both ways cost the disk's
// time, and mapping is then kept.
ReadingCost measureReadingCost(const TraceSet &traces);

// Whether the chunks should be copied: a mapped page costs more than four copied ones. (Copying
// was about twice as fast where a mapped page cost 6-9 copied ones, and a third slower on earlier
// machines whose kernel mapped and released a page in about 0.25 us, near one copy: the cut lies
// between, away from both.)
bool copyingIsCheaper(const ReadingCost &cost);

} // namespace collcheck::analyzer
