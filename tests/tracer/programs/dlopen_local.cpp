// Loads a library that uses NCCL with dlopen(RTLD_NOW | RTLD_LOCAL) and calls it; the program
// itself links no NCCL. Exit status 0 when the library's collectives returned the right values.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  auto run = reinterpret_cast<int (*)(int)>(dlsym(library, "collcheck_user_allreduce"));
  int rc = run ? run(5) : 9;
  if (rc != 0)
    std::fprintf(stderr, "collcheck_user_allreduce failed: %d\n", rc);
  MPI_Finalize();
  return rc;
}
