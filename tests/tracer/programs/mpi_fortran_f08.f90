! The same calls as mpi_fortran.f90 through `use mpi_f08`, whose bindings reach MPI through
! another path (mpi_allreduce_f08 and Open MPI's ompi_allreduce_f).
program mpi_fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, half, i, n7
  character(len=16) :: bug
  type(MPI_Comm) :: sub, line
  type(MPI_Datatype) :: sendmix(2), recvmix(2)
  integer(kind=MPI_ADDRESS_KIND) :: at(2)
  double precision :: out2(2), in2(2)
  type(MPI_Request) :: request
  double precision :: d3(3), d5(5), total5(5)
  real :: r7(7), max7(7)
  integer :: i2(2), gathered(64), counts(64), block(64), ones(64), bytes(64)
  type(MPI_Datatype) :: types(64)
  integer(kind=8) :: i8(4), sum8(4)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  d3 = rank
  d5 = rank
  r7 = rank
  i2 = rank
  i8 = rank
  n7 = 7
  call get_command_argument(1, bug)
  if (bug == 'count' .and. rank == 1) n7 = 6 ! the bug the analyzer must find

  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Bcast(d3, 3, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD)
  call MPI_Reduce(d5, total5, 5, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  call MPI_Allreduce(r7, max7, n7, MPI_REAL, MPI_MAX, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, d3, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allgather(i2, 2, MPI_INTEGER, gathered, 2, MPI_INTEGER, MPI_COMM_WORLD)
  do i = 1, nprocs
    counts(i) = i
  end do
  block = 0
  call MPI_Reduce_scatter(block, gathered, counts, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  call MPI_Iallreduce(i8, sum8, 4, MPI_INTEGER8, MPI_MAX, MPI_COMM_WORLD, request)
  call MPI_Wait(request, MPI_STATUS_IGNORE)
  if (sum8(1) /= nprocs - 1) error stop "wrong iallreduce result"
  do i = 1, nprocs
    ones(i) = 1
    bytes(i) = (i - 1) * 4
    types(i) = MPI_INTEGER
  end do
  call MPI_Alltoallw(gathered, ones, bytes, types, block, ones, bytes, types, MPI_COMM_WORLD)

  call MPI_Cart_create(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., line)
  call MPI_Neighbor_allgather(i2, 2, MPI_INTEGER, gathered, 2, MPI_INTEGER, line)
  at = [0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND]
  sendmix = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  recvmix = [MPI_DOUBLE_PRECISION, MPI_INTEGER]
  out2 = rank
  call MPI_Neighbor_alltoallw(out2, [1, 1], at, sendmix, in2, [1, 1], at, recvmix, line)
  call MPI_Comm_free(line)

  half = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, half, rank, sub)
  call MPI_Allreduce(MPI_IN_PLACE, d3, 2, MPI_DOUBLE_PRECISION, MPI_SUM, sub)
  call MPI_Comm_free(sub)
  call MPI_Finalize()
end program mpi_fortran_f08
