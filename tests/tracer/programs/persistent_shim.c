/* A program's own stand-in for MPI-4's MPI_Allreduce_init, as a program written for MPI-4 carries
 * it to an MPI library that has only Open MPI 4's MPIX_Allreduce_init: a shared library loaded
 * after the tracer's, which defines the name the library lacks. */
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#if MPI_VERSION < 4 && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return MPIX_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}
#endif
