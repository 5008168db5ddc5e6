/* MPI_THREAD_MULTIPLE: each of several threads issues collectives on its own duplicate of
 * MPI_COMM_WORLD at the same time. The tracer must lose and corrupt no record. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 4, CALLS = 2000 };
static MPI_Comm comms[THREADS];
static int failures;

static void *work(void *arg) {
  int t = (int)(long)arg, size;
  MPI_Comm_size(comms[t], &size);
  for (int i = 0; i < CALLS; ++i) {
    long value = t + i, sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, comms[t]);
    if (sum != (long)size * (t + i))
      __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (int t = 0; t < THREADS; ++t)
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  pthread_t threads[THREADS];
  for (long t = 0; t < THREADS; ++t)
    pthread_create(&threads[t], NULL, work, (void *)t);
  for (int t = 0; t < THREADS; ++t)
    pthread_join(threads[t], NULL);
  for (int t = 0; t < THREADS; ++t)
    MPI_Comm_free(&comms[t]);
  MPI_Finalize();
  return failures ? 1 : 0;
}
