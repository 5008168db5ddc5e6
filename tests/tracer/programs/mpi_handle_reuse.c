/* Derived datatypes and user-defined operations freed and created again, each used between, so
 * that a later object that gets a freed one's handle (the allocator hands the same address back)
 * must not be recorded with the facts the tracer cached for the old one. Round r broadcasts one
 * element of a contiguous type of r + 2 ints, twice, and all-reduces one int with an operation of
 * its own, twice, then with MPI_SUM; then frees the type and the operation. Prints how many rounds
 * got the previous round's handles back, which the test requires to be at least one. */
#include <mpi.h>
#include <stdio.h>

static void add(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  for (int i = 0; i < *len; ++i)
    ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  enum { kRounds = 4 };
  MPI_Datatype previousType = MPI_DATATYPE_NULL;
  MPI_Op previousOp = MPI_OP_NULL;
  int typesReused = 0, opsReused = 0;
  int buffer[kRounds + 2] = {0}, in = 1, out = 0;
  for (int r = 0; r < kRounds; ++r) {
    MPI_Datatype type;
    MPI_Op op;
    MPI_Type_contiguous(r + 2, MPI_INT, &type);
    MPI_Type_commit(&type);
    MPI_Op_create(add, r % 2, &op);
    typesReused += type == previousType;
    opsReused += op == previousOp;
    for (int i = 0; i < 2; ++i)
      MPI_Bcast(buffer, 1, type, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 2; ++i)
      MPI_Allreduce(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    previousType = type;
    previousOp = op;
    MPI_Type_free(&type);
    MPI_Op_free(&op);
  }
  if (rank == 0)
    printf("handles reused: types %d ops %d\n", typesReused, opsReused);
  MPI_Finalize();
  return 0;
}
