/* MPI matches a collective's datatypes by their type signature (the sequence of basic types), not
 * by the handle: the ranks here pass the same data through different types. argv[1]:
 * - "equal": every pair is legal MPI (contiguous against basic, a vector of one-element blocks
 *   against a contiguous type, two structs of two ints against 4 x MPI_INT, a struct of an int and
 * a float twice against a contiguous pair of it, v-collectives counted in the other side's type);
 *   the analyzer must report nothing;
 * - "float": rank 1 broadcasts one contiguous(4, MPI_INT) where the others pass 4 x MPI_FLOAT (a
 *   datatype mismatch of equal byte counts);
 * - "count": rank 1 broadcasts one contiguous(4, MPI_INT) where the others pass 3 x MPI_INT;
 * - "mixed": rank 1 all-gathers one struct {int, float} where the others pass {float, int}.
 * MPI may complete or fail on the mismatches: errors return, and the test analyzes the traces. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static MPI_Datatype commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

static MPI_Datatype pairOf(MPI_Datatype first, MPI_Datatype second) {
  int lengths[2] = {1, 1};
  MPI_Aint displacements[2] = {0, 4};
  MPI_Datatype types[2] = {first, second}, t;
  MPI_Type_create_struct(2, lengths, displacements, types, &t);
  return commit(t);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char *mode = argc > 1 ? argv[1] : "equal";
  int odd = rank % 2;
  MPI_Datatype four, vector, twoInts, intFloat, floatInt, twoIntFloat, triple;
  MPI_Type_contiguous(4, MPI_INT, &four);
  four = commit(four);
  MPI_Type_vector(4, 1, 2, MPI_INT, &vector); /* four ints, every other one */
  vector = commit(vector);
  twoInts = pairOf(MPI_INT, MPI_INT);
  intFloat = pairOf(MPI_INT, MPI_FLOAT);
  floatInt = pairOf(MPI_FLOAT, MPI_INT);
  MPI_Type_contiguous(2, intFloat, &twoIntFloat);
  twoIntFloat = commit(twoIntFloat);
  MPI_Type_contiguous(3, MPI_INT, &triple);
  triple = commit(triple);
  int buffer[64] = {0};
  int *all = calloc((size_t)size * 16, sizeof(int));
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(mode, "equal")) {
    /* The case: 4 x MPI_INT against 1 x contiguous(4, MPI_INT). */
    if (odd)
      MPI_Bcast(buffer, 1, four, 0, MPI_COMM_WORLD);
    else
      MPI_Bcast(buffer, 4, MPI_INT, 0, MPI_COMM_WORLD);
    /* A vector of one-element blocks against a contiguous type: the layout differs, the
     * signature (4 ints) does not. */
    MPI_Bcast(buffer, 1, odd ? vector : four, 0, MPI_COMM_WORLD);
    /* Two structs of two ints against 4 x MPI_INT (a broadcast: MPI's predefined reductions take
     * no derived types). */
    if (odd)
      MPI_Bcast(buffer, 2, twoInts, 0, MPI_COMM_WORLD);
    else
      MPI_Bcast(buffer, 4, MPI_INT, 0, MPI_COMM_WORLD);
    /* Indexed blocks of 1 and 3 ints, a struct {int, int[2], int} and a 2 x 2 subarray of a 4 x 4
     * grid of ints: 4 ints each, against a contiguous type of 4. */
    int lengths[3] = {1, 2, 1}, offsets[3] = {0, 2, 6}, grid[2] = {4, 4}, part[2] = {2, 2},
        start[2] = {1, 1};
    MPI_Aint places[4] = {0, 4, 12, 16};
    MPI_Datatype indexed, spread, subarray, ints[3] = {MPI_INT, MPI_INT, MPI_INT};
    int blocks[2] = {1, 3};
    MPI_Type_indexed(2, blocks, offsets, MPI_INT, &indexed);
    indexed = commit(indexed);
    MPI_Type_create_struct(3, lengths, places, ints, &spread);
    spread = commit(spread);
    MPI_Type_create_subarray(2, grid, part, start, MPI_ORDER_C, MPI_INT, &subarray);
    subarray = commit(subarray);
    MPI_Datatype shapes[4] = {four, indexed, spread, subarray};
    for (int i = 0; i < 4; ++i)
      MPI_Bcast(buffer, 1, shapes[(i + rank) % 4], 0, MPI_COMM_WORLD);
    MPI_Type_free(&indexed);
    MPI_Type_free(&spread);
    MPI_Type_free(&subarray);
    /* A flat struct {int, float, int, float} against 2 x {int, float}: one signature, built
     * differently. */
    int ones[4] = {1, 1, 1, 1};
    MPI_Datatype flat, alternating[4] = {MPI_INT, MPI_FLOAT, MPI_INT, MPI_FLOAT};
    MPI_Type_create_struct(4, ones, places, alternating, &flat);
    flat = commit(flat);
    if (odd)
      MPI_Bcast(buffer, 1, flat, 0, MPI_COMM_WORLD);
    else
      MPI_Bcast(buffer, 2, intFloat, 0, MPI_COMM_WORLD);
    MPI_Type_free(&flat);
    /* Mixed signatures: 2 x {int, float} against 1 x contiguous(2, {int, float}). */
    MPI_Allgather(buffer, odd ? 1 : 2, odd ? twoIntFloat : intFloat, all, 2, intFloat,
                  MPI_COMM_WORLD);
    /* A v-collective counted in the other side's type: each rank sends 3 ints, the root
     * receives one triple from each. */
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; ++i) {
      counts[i] = 1;
      displs[i] = i;
    }
    if (odd)
      MPI_Gatherv(buffer, 1, triple, all, counts, displs, triple, 0, MPI_COMM_WORLD);
    else
      MPI_Gatherv(buffer, 3, MPI_INT, all, counts, displs, triple, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
  } else if (!strcmp(mode, "float")) {
    if (rank == 1)
      MPI_Bcast(buffer, 1, four, 0, MPI_COMM_WORLD);
    else
      MPI_Bcast(buffer, 4, MPI_FLOAT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "count")) {
    if (rank == 1)
      MPI_Bcast(buffer, 1, four, 0, MPI_COMM_WORLD);
    else
      MPI_Bcast(buffer, 3, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "mixed")) {
    MPI_Allgather(buffer, 1, rank == 1 ? intFloat : floatInt, all, 1,
                  rank == 1 ? intFloat : floatInt, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&four);
  MPI_Type_free(&vector);
  MPI_Type_free(&twoInts);
  MPI_Type_free(&intFloat);
  MPI_Type_free(&floatInt);
  MPI_Type_free(&twoIntFloat);
  MPI_Type_free(&triple);
  free(all);
  MPI_Finalize();
  return 0;
}
