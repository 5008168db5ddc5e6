// Reads each trace file's chunks where the file is mapped and classifies them, and gives the pages
// read before each chunk back, in batches, and all it read when it is done: the pages kept mapped
// are the chunk of every file being read and what the kernel maps around a fault, not the trace's
// length. Measured against copying each chunk out with pread into a buffer per file (the way read
// until 2026-12-07), on 1,024 ranks x 100,000 collectives: 0.76-0.83 s against 1.04-1.40 s, 1.4-1.6
// s of CPU against 1.9-2.2 s (docs/performance.md, *Analyzer*; bench/README.md).
#pragma once

#include "analyzer/load/page_release.h"
#include "format/reader.h"
#include "format/record.h"

#include <memory>
#include <vector>

namespace collcheck::analyzer {

// How a chunk starts: with a run of one member stream's consecutive calls (the common case: a
// process issuing collectives on one communicator), which the merge can match in place; `length`
// 0 when its first slot is not such a call.
struct ChunkRun {
  uint64_t length = 0; // the leading slots that are one stream's consecutive calls
  uint64_t commId = 0;
  int32_t commRank = -1;
  uint64_t firstSeq = 0;
};

// Classifies `count` slots and says how many of the first are one stream's run.
void classifyChunk(const format::Record *records, uint64_t count, format::SlotState *states,
                   ChunkRun &run);
// The run that starts `count` slots already classified (the rest of a chunk read in two parts).
ChunkRun leadingRun(const format::Record *records, const format::SlotState *states, uint64_t count);

class ChunkReader {
public:
  // `readers`: one per trace (null: none); `chunk`: records per read.
  ChunkReader(std::vector<const format::Reader *> readers, size_t chunk);
  ~ChunkReader();
  ChunkReader(const ChunkReader &) = delete;
  ChunkReader &operator=(const ChunkReader &) = delete;
  // Records [first, first+count) of `file`, count <= chunk, the state of each and whether they
  // are one stream's run; null when the file has no such slots. The records stay valid while the
  // reader lives; the states until the file's next read. The pages of the slots before `first`
  // may be given back: reading them again costs a page fault, never a wrong record.
  const format::Record *read(int file, uint64_t first, uint64_t count,
                             const format::SlotState *&states, ChunkRun *run = nullptr);

private:
  std::vector<const format::Reader *> readers_;
  size_t chunk_;
  std::vector<uint64_t> releasedUpTo_; // per file: the pages before this slot were given back
  std::vector<uint64_t> readEnd_;      // per file: the end of the last chunk read
  std::unique_ptr<format::SlotState[]> states_; // chunk states per file
  PageReleaser released_;
};

} // namespace collcheck::analyzer
