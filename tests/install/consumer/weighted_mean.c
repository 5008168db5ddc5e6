/* One gradient step of the seed example (examples/README.md) over MPI, annotated for collcheck:
 * rank 0 has 2 valid items of gradient 1, every other rank 6 items of gradient 3, and the ranks
 * average their contributions (MPI_SUM, then / P). Averaging local means weighs an item of rank 0
 * three times an item of rank 1 (gradient 2 with 2 ranks): `collcheck analyze` reports
 * uncompensated-mean on the trace, collcheck-lint on this file. With --compensate each rank scales
 * its mean by P n_r / N first and the average is the global item mean (2.5 with 2 ranks). */
#include <collcheck/annotate.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* SUM, then the division by the communicator size: a mean reducer. */
static double average(double value) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  collcheck_annotate_reducer_scale(1.0 / size);
  double sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum / size;
}

/* Wrong: the local mean goes into the mean reducer as it is. */
static double local_mean_step(double gradient_sum, long count) {
  collcheck_annotate_normalization(COLLCHECK_NORM_LOCAL_MEAN, 0);
  return average(gradient_sum / (double)count);
}

/* Right: the local mean scaled by P n_r / N, so that each item weighs 1/N after the reducer. */
static double compensated_step(double gradient_sum, long count) {
  long total = 0;
  MPI_Allreduce(&count, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total <= 0)
    return 0; /* every rank skips the same empty update */
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  collcheck_annotate_normalization(COLLCHECK_NORM_MULTIPLIER, (double)size / (double)total);
  return average(gradient_sum * size / (double)total);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* Loss 1/2 (w - y)^2 per valid item at w = 10: rank 0 has two valid items, both of target 9
   * (gradient 1), every other rank six of target 7 (gradient 3). */
  const double w = 10;
  double targets[6];
  int valid[6];
  for (int i = 0; i < 6; ++i) {
    targets[i] = rank == 0 ? 9 : 7;
    valid[i] = rank != 0 || i < 2;
  }
  double gradient_sum = 0;
  long count = 0;
  for (int i = 0; i < 6; ++i)
    if (valid[i]) {
      gradient_sum += w - targets[i];
      count += 1;
    }

  collcheck_annotate_window(0);
  collcheck_annotate_valid_count((double)count);
  double gradient = argc > 1 && strcmp(argv[1], "--compensate") == 0
                        ? compensated_step(gradient_sum, count)
                        : local_mean_step(gradient_sum, count);
  if (rank == 0)
    printf("gradient %g\n", gradient);
  MPI_Finalize();
  return 0;
}
