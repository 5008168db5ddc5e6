// Reducers the lint knows only from the project's .collcheck-lint.json (next to this file):
// wrappers defined in another library, a fused reducer with its own argument order, a rank query,
// and a disabled rule. Functions named tp_* must produce exactly the diagnostics marked `expect:`,
// tn_* none.
#include <mpi.h>
#include <nccl.h>

void hvd_allreduce_average(float *value, int count);
void fused_allreduce(const float *send, float *recv, ncclDataType_t type, ncclRedOp_t op);
namespace train {
void allreduce_sum(float *value, int count);
}
int cluster_rank();
namespace app {
struct Net {
  static double average(double value);
};
struct MyNet {
  static double average(double value);
};
} // namespace app

void tp_config_wrapper(float loss_sum, int n_valid) {
  float mean = loss_sum / n_valid;
  hvd_allreduce_average(&mean, 1); // expect: note:uncompensated-mean
}

void tp_config_reducer_with_an_op_argument(float loss_sum, int n_valid, float *out) {
  float mean = loss_sum / n_valid;
  fused_allreduce(&mean, out, ncclFloat, ncclAvg); // expect: note:uncompensated-mean
}

void tp_config_rank_function(float *grad) {
  if (cluster_rank() == 0)
    hvd_allreduce_average(grad, 16); // expect: collective-not-reached-by-all-ranks
}

void tn_config_sum_wrapper(float loss_sum, int n_valid) {
  float mean = loss_sum / n_valid;
  train::allreduce_sum(&mean, 1); // a plain sum: not averaging
}

double tn_config_disabled_rule(double total, long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  return total / N; // unguarded-reduced-count-division is disabled in the config
}

// `Net::average` names the function in any enclosing namespace (`app::Net::average`), not a
// class whose name only ends the same way.
void tp_config_name_in_an_enclosing_namespace(float loss_sum, int n_valid) {
  double mean = loss_sum / n_valid;
  app::Net::average(mean); // expect: note:uncompensated-mean
}

void tn_config_name_of_another_class(float loss_sum, int n_valid) {
  double mean = loss_sum / n_valid;
  app::MyNet::average(mean);
}
