// The two collectives a training step needs, over MPI or over the NCCL API.
#pragma once

#include "options.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace collcheck::example {

class Collectives {
public:
  virtual ~Collectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The sum of every rank's valid count: an int64 SUM all-reduce.
  virtual std::int64_t sumCounts(std::int64_t localCount) = 0;
  // The same as a float64 SUM all-reduce.
  virtual double sumFloatCounts(double localCount) = 0;
  // Reduces `gradient` in place across ranks with `reducer` (avg, sum-then-divide and premulsum
  // with a factor of 1/P all yield the mean across ranks). `preMulSumFactor` is this rank's
  // PreMulSum scalar and is used by Reducer::preMulSum only.
  virtual void reduceGradient(std::vector<double> &gradient, Reducer reducer,
                              double preMulSumFactor) = 0;
};

// Both expect MPI to be initialized: NCCL's unique id travels by MPI_Bcast.
std::unique_ptr<Collectives> makeMpiCollectives();
std::unique_ptr<Collectives> makeNcclCollectives();

} // namespace collcheck::example
