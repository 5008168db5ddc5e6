// The per-rank data sets: which items (targets, valid or masked) a rank trains on in each
// update. The same definitions feed the distributed run and the single-process reference, so
// both see exactly the same item multiset.
#pragma once

#include "options.h"

#include <optional>
#include <vector>

namespace collcheck::example {

struct Item {
  double target; // component j of the parameter is pulled towards target + j
  bool valid;    // masked items (padding) are in the batch but not in the objective
};

// The batch of `rank` (of `ranks`) for update `window` (0-based); nullopt once the rank's input is
// exhausted (it has no batch at all, which is not the same as a batch of masked items).
std::optional<std::vector<Item>> batchFor(DataSet data, int ranks, int rank, int window);

// Micro-batch `index` of `count`: contiguous, as equal in length as possible.
std::vector<Item> microBatch(const std::vector<Item> &batch, int index, int count);

} // namespace collcheck::example
