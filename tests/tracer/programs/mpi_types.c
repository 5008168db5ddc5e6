/* Broadcasts one element of every named datatype the tracer maps, in three passes (in order, in
 * order again, in reverse), so that after the first pass every mapping comes from the tracer's
 * handle cache and consecutive calls never share a handle. The tracer test checks each record's
 * datatype against the list in the same order (tests/tracer/mpi_types_test.cpp). */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype types[] = {MPI_CHAR,
                          MPI_SIGNED_CHAR,
                          MPI_UNSIGNED_CHAR,
                          MPI_BYTE,
                          MPI_SHORT,
                          MPI_UNSIGNED_SHORT,
                          MPI_INT,
                          MPI_UNSIGNED,
                          MPI_LONG,
                          MPI_UNSIGNED_LONG,
                          MPI_LONG_LONG,
                          MPI_UNSIGNED_LONG_LONG,
                          MPI_FLOAT,
                          MPI_DOUBLE,
                          MPI_LONG_DOUBLE,
                          MPI_INT8_T,
                          MPI_UINT8_T,
                          MPI_INT16_T,
                          MPI_UINT16_T,
                          MPI_INT32_T,
                          MPI_UINT32_T,
                          MPI_INT64_T,
                          MPI_UINT64_T,
                          MPI_C_BOOL,
                          MPI_WCHAR,
                          MPI_AINT,
                          MPI_OFFSET,
                          MPI_COUNT,
                          MPI_FLOAT_INT,
                          MPI_DOUBLE_INT,
                          MPI_LONG_INT,
                          MPI_2INT,
                          MPI_SHORT_INT,
                          MPI_LONG_DOUBLE_INT,
                          MPI_C_FLOAT_COMPLEX,
                          MPI_C_DOUBLE_COMPLEX,
                          MPI_C_LONG_DOUBLE_COMPLEX,
                          MPI_COMPLEX,
                          MPI_DOUBLE_COMPLEX};
  enum { kTypes = sizeof types / sizeof types[0] };
  long double buffer[4] = {0};
  for (int pass = 0; pass < 3; ++pass)
    for (int i = 0; i < kTypes; ++i)
      MPI_Bcast(buffer, 1, types[pass == 2 ? kTypes - 1 - i : i], 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
