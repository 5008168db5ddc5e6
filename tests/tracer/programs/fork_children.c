/* An MPI process that forks three times: before MPI_Init a child that makes one traced call (an
 * annotation); then a child that makes no traced call, and one that makes one and then execs a
 * program that makes none. The parent keeps issuing collectives. */
#include <collcheck/annotate.h>
#include <mpi.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  pid_t early = fork(); /* before the parent's first traced call */
  if (early == 0) {
    collcheck_annotate_window(5);
    _exit(0);
  }
  int status;
  waitpid(early, &status, 0);
  MPI_Init(&argc, &argv);
  double one = 1, sum = 0;
  for (int i = 0; i < 10; ++i)
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  pid_t quiet = fork();
  if (quiet == 0)
    _exit(0);
  pid_t busy = fork();
  if (busy == 0) {
    collcheck_annotate_window(7);
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  waitpid(quiet, &status, 0);
  waitpid(busy, &status, 0);
  for (int i = 0; i < 10; ++i)
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  printf("children %d %d\n", (int)quiet, (int)busy);
  MPI_Finalize();
  return 0;
}
