! Collectives through MPI's Fortran bindings (`use mpi`): the tracer must record them as it records
! the C calls of mpi_all_collectives.c. mpi_fortran_test.cpp checks the records call by call.
program mpi_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, half, sub, request, i, n7, line, sendmix(2), recvmix(2)
  integer(kind=MPI_ADDRESS_KIND) :: at(2)
  double precision :: out2(2), in2(2)
  character(len=16) :: bug
  double precision :: d3(3), d5(5), total5(5)
  real :: r7(7), max7(7)
  integer :: i2(2), gathered(64), counts(64), block(64), ones(64), bytes(64), types(64)
  integer(kind=8) :: i8(4), sum8(4)

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  d3 = rank
  d5 = rank
  r7 = rank
  i2 = rank
  i8 = rank
  n7 = 7
  call get_command_argument(1, bug)
  if (bug == 'count' .and. rank == 1) n7 = 6 ! the bug the analyzer must find

  call mpi_barrier(MPI_COMM_WORLD, ierr)
  call mpi_bcast(d3, 3, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, ierr)
  call mpi_reduce(d5, total5, 5, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(r7, max7, n7, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(MPI_IN_PLACE, d3, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_allgather(i2, 2, MPI_INTEGER, gathered, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    counts(i) = i
  end do
  block = 0
  call mpi_reduce_scatter(block, gathered, counts, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call mpi_iallreduce(i8, sum8, 4, MPI_INTEGER8, MPI_MAX, MPI_COMM_WORLD, request, ierr)
  call mpi_wait(request, MPI_STATUS_IGNORE, ierr)
  if (sum8(1) /= nprocs - 1) error stop "wrong iallreduce result"
  do i = 1, nprocs
    ones(i) = 1
    bytes(i) = (i - 1) * 4
    types(i) = MPI_INTEGER
  end do
  call mpi_alltoallw(gathered, ones, bytes, types, block, ones, bytes, types, MPI_COMM_WORLD, ierr)

  ! A periodic line of the processes, two neighbors each: a neighborhood all-gather, and an
  ! all-to-all of an integer to the left and a double precision value to the right (one datatype
  ! per neighbor, displacements in bytes).
  call mpi_cart_create(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., line, ierr)
  call mpi_neighbor_allgather(i2, 2, MPI_INTEGER, gathered, 2, MPI_INTEGER, line, ierr)
  at = [0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND]
  sendmix = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  recvmix = [MPI_DOUBLE_PRECISION, MPI_INTEGER]
  out2 = rank
  call mpi_neighbor_alltoallw(out2, [1, 1], at, sendmix, in2, [1, 1], at, recvmix, line, ierr)
  call mpi_comm_free(line, ierr)

  half = mod(rank, 2)
  call mpi_comm_split(MPI_COMM_WORLD, half, rank, sub, ierr)
  call mpi_allreduce(MPI_IN_PLACE, d3, 2, MPI_DOUBLE_PRECISION, MPI_SUM, sub, ierr)
  call mpi_comm_free(sub, ierr)
  call mpi_finalize(ierr)
end program mpi_fortran
