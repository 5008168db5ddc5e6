// Reads each trace file's chunks with pread into a buffer of its own, and classifies them: the
// records are copied out of the page cache, never faulted in through the files' mappings (a mapped
// page's first touch cost this machine several copied ones: docs/performance.md, *Analyzer*), and
// the memory stays ranks x chunk.
#pragma once

#include "reader.h"
#include "record.h"

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
  // `fds`: one open file per trace (-1: none); `chunk`: records per read.
  ChunkReader(const std::vector<int> &fds, size_t chunk);
  // Records [first, first+count) of `file`, count <= chunk, the state of each and whether they
  // are one stream's run; null when they could not be read (no descriptor, or a file shorter than
  // its reader saw). They stay in the file's buffer until its next read.
  const format::Record *read(int file, uint64_t first, uint64_t count,
                             const format::SlotState *&states, ChunkRun *run = nullptr);

private:
  const std::vector<int> &fds_;
  size_t chunk_;
  // Every buffer in one mapping asked for in huge pages: the buffers of thousands of files are
  // tens of MiB that each round touches once, and in 4 KiB pages every round misses the TLB on
  // every buffer.
  struct Arena {
    void *base = nullptr;
    size_t bytes = 0;
    ~Arena();
  } arena_;
  format::Record *data_ = nullptr;              // chunk records per file, in arena_
  std::unique_ptr<format::SlotState[]> states_; // chunk states per file
};

} // namespace collcheck::analyzer
