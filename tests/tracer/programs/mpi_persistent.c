/* Persistent collectives on 4 processes (MPI-4's MPI_<name>_init, or Open MPI 4's MPIX_<name>_init
 * where the library is older): between two barriers, an all-reduce of one int, a broadcast of 2
 * doubles from rank 1 and a barrier are initialized, each started twice, and freed. With the
 * argument "count", every process then initializes one more all-reduce, rank 3 with a count of 2
 * where the others pass 1: erroneous, so it is never started, only freed. With "shim", the
 * all-reduce is initialized through MPI_Allreduce_init, which on an older library only the
 * program's own stand-in defines (persistent_shim.c). Exits 1 where an initialization fails. */
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <string.h>

#if MPI_VERSION >= 4
#define INIT(name) MPI_##name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define INIT(name) MPIX_##name##_init
#else
#error "this MPI library has no persistent collectives"
#endif

#if MPI_VERSION < 4
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int value = rank, sum = 0;
  double pair[2] = {1.0, 2.0};
  MPI_Request requests[3];
  const int shim = argc > 1 && strcmp(argv[1], "shim") == 0;
  int failed = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  failed |= (shim ? MPI_Allreduce_init : INIT(Allreduce))(&value, &sum, 1, MPI_INT, MPI_SUM,
                                                          MPI_COMM_WORLD, MPI_INFO_NULL,
                                                          &requests[0]) != MPI_SUCCESS;
  failed |= INIT(Bcast)(pair, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[1]) !=
            MPI_SUCCESS;
  failed |= INIT(Barrier)(MPI_COMM_WORLD, MPI_INFO_NULL, &requests[2]) != MPI_SUCCESS;
  if (failed)
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (int round = 0; round < 2; ++round) {
    MPI_Startall(3, requests);
    MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
  }
  for (int i = 0; i < 3; ++i)
    MPI_Request_free(&requests[i]);
  if (argc > 1 && strcmp(argv[1], "count") == 0) {
    int values[2] = {rank, rank}, sums[2];
    MPI_Request unused;
    INIT(Allreduce)
    (values, sums, rank == 3 ? 2 : 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &unused);
    MPI_Request_free(&unused);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
