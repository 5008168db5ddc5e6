// A communicator as the traces describe it: built from the CommCreate and CommMembers records of
// every member's file while the traces are read.
#pragma once

#include "format/record.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collcheck::analyzer {

struct Communicator {
  uint64_t id = 0;
  uint32_t index = 0; // place in the report: by the first record naming it (slot, then file)
  int32_t size = -1;  // -1 until a CommCreate record says
  format::CommOrigin origin = format::CommOrigin::Unknown;
  uint64_t parentId = 0;
  int32_t color = -1;
  bool nccl = false;
  std::vector<int32_t> worldRankOf; // per comm rank, -1 while unknown
  std::vector<int> fileOf;          // per comm rank: index in TraceSet::files, -1 while unknown
  std::string label;                // "world", "split(color=1) of world [3fa2b7c1]", ...

  // The world rank to name in a finding for a comm rank (the comm rank itself when unknown).
  int32_t nameOf(int32_t commRank) const {
    if (commRank >= 0 && static_cast<size_t>(commRank) < worldRankOf.size() &&
        worldRankOf[static_cast<size_t>(commRank)] >= 0)
      return worldRankOf[static_cast<size_t>(commRank)];
    return commRank;
  }
};

// Short, stable, human name of a communicator id.
std::string shortCommId(uint64_t id);
std::string hexCommId(uint64_t id);

} // namespace collcheck::analyzer
