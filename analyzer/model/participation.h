// The participation picture: per communicator, ranks by position, with what each rank did. Only a
// bounded sample of positions is kept (the start, the neighbourhood of every divergence, the end),
// so a trace of any length gives a picture a person reads at a glance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace collcheck::analyzer {

enum class Cell : uint8_t {
  Matched,    // issued the call every other rank issued
  Mismatch,   // issued a call with another signature
  Reordered,  // issued it in another order
  Missing,    // did not issue it (skipped, or exited without it)
  Extra,      // issued a call the other ranks did not
  NotReached, // the process was stopped before reaching it
  Stuck,      // issued it and it never returned
  Unknown,    // no trace of this rank here
  Absent,     // not a participant of this column (an extra call of other ranks)
};
std::string_view cellName(Cell c);

struct PictureColumn {
  uint64_t seq = 0; // reference sequence number
  std::string call; // "allreduce(1024 x float32, sum)"
  bool divergent = false;
  bool gapBefore = false;  // positions were left out before this column
  std::vector<Cell> cells; // per comm rank; empty: every rank Matched
};

struct CommPicture {
  uint64_t commId = 0;
  std::string label;
  std::vector<int32_t> worldRanks; // per comm rank
  uint64_t positions = 0;
  std::vector<PictureColumn> columns;
};

} // namespace collcheck::analyzer
