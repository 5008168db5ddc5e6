// The trainer's gradient step written out plainly, once wrong and once right, for code review with
// collcheck-lint (scripts/demo lints this file). Squared error 1/2 (w - y)^2 per valid item; the
// ranks hold different numbers of valid items n_r. See examples/README.md for the numbers.
#include <mpi.h>
#include <nccl.h>

#include <cstddef>

// Sum over this rank's valid items of d/dw 1/2 (w - y)^2.
static double localGradientSum(double w, const double *targets, const bool *valid, size_t n,
                               double &count) {
  double sum = 0;
  count = 0;
  for (size_t i = 0; i < n; ++i)
    if (valid[i]) {
      sum += w - targets[i];
      count += 1;
    }
  return sum;
}

// Wrong: a local mean (divided by this rank's own count) averaged across ranks by ncclAvg. A token
// on a rank with 2 valid items weighs three times a token on a rank with 6.
double updateWrong(double w, const double *targets, const bool *valid, size_t n, double lr,
                   double *deviceGradient, ncclComm_t comm, cudaStream_t stream) {
  double count;
  double localMean = localGradientSum(w, targets, valid, n, count) / count;
  *deviceGradient = localMean;
  ncclAllReduce(deviceGradient, deviceGradient, 1, ncclFloat64, ncclAvg, comm, stream);
  return w - lr * *deviceGradient;
}

// Right: all-reduce the count first, then scale the local mean by P * n_r / N before the
// averaging reducer, so that the reducer yields the mean over all N items.
double updateRight(double w, const double *targets, const bool *valid, size_t n, double lr,
                   double *deviceGradient, ncclComm_t comm, cudaStream_t stream) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  double count;
  double localSum = localGradientSum(w, targets, valid, n, count);
  double globalCount = 0;
  MPI_Allreduce(&count, &globalCount, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (globalCount <= 0)
    return w;                                       // every rank skips the same empty update
  *deviceGradient = localSum * ranks / globalCount; // = (local mean) * P * n_r / N
  ncclAllReduce(deviceGradient, deviceGradient, 1, ncclFloat64, ncclAvg, comm, stream);
  return w - lr * *deviceGradient;
}
