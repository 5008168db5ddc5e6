// Hierarchical collectives: the first rank of each node (its rank in a node-local communicator is
// 0) talks to the other nodes' first ranks on a cross-node communicator, which another file builds
// (typically split by that same local rank). Which ranks are members of that communicator is not
// visible here, so a guard on the local rank is no finding for its collectives; it still is for a
// collective on the world, or on the communicator the local rank was read from.
// Functions named tp_* must produce exactly the diagnostics marked `expect:`, tn_* none.
#include <mpi.h>

#include <vector>

enum class Scope { Global, Local, Cross };

// The communicators, built in another file.
struct Communicators {
  MPI_Comm global_comm;
  MPI_Comm local_comm;
  MPI_Comm cross_comm;
  MPI_Comm of(Scope scope) const; // defined in another file
};

class Controller {
public:
  explicit Controller(Communicators &comms) : comms_(comms) {
    MPI_Comm_rank(comms_.local_comm, &local_rank_);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  }

  void tn_leaders_reduce_on_the_cross_communicator(std::vector<float> &grads) {
    if (local_rank_ == 0)
      MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT,
                    MPI_SUM, comms_.cross_comm);
  }

  void tn_leaders_gather_on_a_communicator_a_getter_returns(float *shared, int *counts,
                                                             int *displs, bool homogeneous) {
    if (homogeneous || local_rank_ == 0)
      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, shared, counts, displs, MPI_FLOAT,
                     comms_.of(Scope::Cross));
  }

  void tp_leaders_alone_on_the_world(std::vector<float> &grads) {
    if (local_rank_ == 0)
      MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); // expect: collective-not-reached-by-all-ranks
  }

  void tp_leader_alone_on_its_own_node(float *x) {
    if (local_rank_ == 0)
      MPI_Bcast(x, 1, MPI_FLOAT, 0, comms_.local_comm); // expect: collective-not-reached-by-all-ranks
  }

  void tp_world_rank_guards_the_cross_communicator(float *x) {
    if (world_rank_ == 0)
      MPI_Bcast(x, 1, MPI_FLOAT, 0, comms_.cross_comm); // expect: collective-not-reached-by-all-ranks
  }

  void tp_rank_read_through_the_getter_it_guards(float *x) {
    int node_rank = 0;
    MPI_Comm_rank(comms_.of(Scope::Local), &node_rank);
    if (node_rank == 0)
      MPI_Bcast(x, 1, MPI_FLOAT, 0, comms_.of(Scope::Local)); // expect: collective-not-reached-by-all-ranks
  }

private:
  Communicators &comms_;
  int local_rank_ = 0;
  int world_rank_ = 0;
};
