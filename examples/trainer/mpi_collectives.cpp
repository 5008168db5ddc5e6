#include "collectives.h"

#include <mpi.h>

#include <stdexcept>

namespace collcheck::example {
namespace {

class MpiCollectives final : public Collectives {
public:
  MpiCollectives() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::int64_t sumCounts(std::int64_t localCount) override { return sum(localCount, MPI_INT64_T); }
  double sumFloatCounts(double localCount) override { return sum(localCount, MPI_DOUBLE); }

  void reduceGradient(std::vector<double> &gradient, Reducer reducer, double) override {
    if (reducer == Reducer::preMulSum)
      throw std::invalid_argument("MPI has no PreMulSum reduction");
    MPI_Allreduce(MPI_IN_PLACE, gradient.data(), int(gradient.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    // MPI has no average: avg and sum-then-divide are the same SUM followed by a division by P.
    if (reducer != Reducer::sum)
      for (double &component : gradient)
        component /= size_;
  }

private:
  // One rank's count, summed over the ranks.
  template <typename T> static T sum(T local, MPI_Datatype type) {
    T global = 0;
    MPI_Allreduce(&local, &global, 1, type, MPI_SUM, MPI_COMM_WORLD);
    return global;
  }

  int rank_ = 0;
  int size_ = 1;
};

} // namespace

std::unique_ptr<Collectives> makeMpiCollectives() { return std::make_unique<MpiCollectives>(); }

} // namespace collcheck::example
