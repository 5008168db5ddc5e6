#include "dataset.h"

namespace collcheck::example {
namespace {

std::vector<Item> repeated(int count, double target, bool valid = true) {
  return std::vector<Item>(static_cast<std::size_t>(count), Item{target, valid});
}

// Rank r holds 1 + 2r items of target 9 - r: unequal counts and unequal means.
std::vector<Item> unevenBatch(int rank) { return repeated(1 + 2 * rank, 9.0 - rank); }

} // namespace

std::optional<std::vector<Item>> batchFor(DataSet data, int ranks, int rank, int window) {
  switch (data) {
  case DataSet::seed: // the seed document: rank 0 targets [9, 9], rank 1 six targets of 7
    return rank == 0 ? repeated(2, 9) : repeated(6, 7);
  case DataSet::uneven:
    return unevenBatch(rank);
  case DataSet::masked: {
    // Six items on every rank, 2 + 4r mod 5 of them valid (2, 6, 5, 4): equal lengths, unequal
    // counts. Padding targets 0 would move w if they were counted.
    const int validItems = 2 + (4 * rank) % 5;
    std::vector<Item> batch = repeated(validItems, 9.0 - 2 * rank);
    batch.resize(6, Item{0, false});
    return batch;
  }
  case DataSet::zeroRank: // the last rank's batch is all padding in every update
    if (rank == ranks - 1)
      return repeated(4, 0, false);
    return unevenBatch(rank);
  case DataSet::zeroWindow: // update 2 has no valid item on any rank
    if (window == 1)
      return repeated(1 + 2 * rank, 0, false);
    return unevenBatch(rank);
  case DataSet::exhausted: // the last rank has input for update 1 only
    if (rank == ranks - 1 && window > 0)
      return std::nullopt;
    return unevenBatch(rank);
  }
  return std::nullopt;
}

std::vector<Item> microBatch(const std::vector<Item> &batch, int index, int count) {
  const std::size_t size = batch.size();
  const std::size_t begin = size * std::size_t(index) / std::size_t(count);
  const std::size_t end = size * std::size_t(index + 1) / std::size_t(count);
  return std::vector<Item>(batch.begin() + long(begin), batch.begin() + long(end));
}

} // namespace collcheck::example
