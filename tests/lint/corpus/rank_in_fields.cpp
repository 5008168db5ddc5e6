// The rank kept in a field or a global by one function and read by another: a trainer's
// constructor fills `rank_`, a method branches on it; a setup function fills a global. The method
// is walked on its own, so what the field holds comes from the write found anywhere in the file.
// Functions named tp_* must produce exactly the diagnostics marked `expect:`, tn_* none.
#include <mpi.h>

#include <vector>

namespace {

int g_process = 0;   // filled by setup_globals: the rank, whatever its name
int g_processes = 1; // the communicator size

void setup_globals(MPI_Comm comm) {
  MPI_Comm_rank(comm, &g_process);
  MPI_Comm_size(comm, &g_processes);
}

} // namespace

class Trainer {
public:
  explicit Trainer(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &me_);
    MPI_Comm_size(comm_, &peers_);
  }

  void tp_field_filled_in_constructor(std::vector<float> &grads) {
    if (me_ == 0) // the rank, though the name does not say so
      MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT, MPI_SUM, comm_); // expect: collective-not-reached-by-all-ranks
  }

  void tn_field_size_guard(std::vector<float> &grads) {
    if (peers_ > 1)
      MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT, MPI_SUM, comm_);
  }

  void tn_field_rank_only_chooses_what_to_print(std::vector<float> &grads) {
    MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT, MPI_SUM, comm_);
    if (me_ == 0)
      logged_ = true;
  }

private:
  MPI_Comm comm_;
  int me_ = 0;
  int peers_ = 1;
  bool logged_ = false;
};

class Evaluator {
public:
  void attach(MPI_Comm comm) {
    comm_ = comm;
    MPI_Comm_rank(comm, &leader_index_);
  }

  double tp_field_filled_in_another_method(double metric) {
    if (leader_index_ != 0)
      return metric;
    double total = 0.0;
    MPI_Reduce(&metric, &total, 1, MPI_DOUBLE, MPI_SUM, 0, comm_); // expect: collective-not-reached-by-all-ranks
    return total;
  }

private:
  MPI_Comm comm_ = MPI_COMM_WORLD;
  int leader_index_ = 0;
};

void tp_global_filled_by_setup(double *value, MPI_Comm comm) {
  if (g_process == 0)
    MPI_Bcast(value, 1, MPI_DOUBLE, 0, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_global_size_guard(double *value, MPI_Comm comm) {
  if (g_processes > 1)
    MPI_Bcast(value, 1, MPI_DOUBLE, 0, comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  setup_globals(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}

// A configuration struct built field by field and stored whole in a global (llm.c's
// multi_gpu_config): its rank field is the rank's, its other fields are not.
struct RunConfig {
  int process_rank;
  int num_processes;
  int zero_stage;
};

RunConfig run_config_init(int zero_stage) {
  RunConfig c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.process_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.num_processes);
  c.zero_stage = zero_stage;
  return c;
}

RunConfig run_config;

void tn_stage_field_of_a_config_holding_the_rank(float *grad) {
  run_config = run_config_init(1);
  const RunConfig *config = &run_config;
  if (config->zero_stage == 1)
    MPI_Allreduce(MPI_IN_PLACE, grad, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

void tp_rank_field_of_the_same_config(float *grad) {
  run_config = run_config_init(1);
  const RunConfig *config = &run_config;
  if (config->process_rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, grad, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); // expect: collective-not-reached-by-all-ranks
}
