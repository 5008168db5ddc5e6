// The training step: each marked line misuses a function of sync.cpp or loss.cpp, which only a
// whole-project run can see (collcheck-lint -p BUILD); the unmarked ones are correct.
#include "sync.h"

float step_mean(const float *loss, const bool *valid, int n, MPI_Comm comm) {
  float sum = 0;
  int valid_items = 0;
  for (int i = 0; i < n; ++i)
    if (valid[i]) {
      sum += loss[i];
      ++valid_items;
    }
  float local = sum / valid_items;
  return sync_mean(local, comm); // expect: uncompensated-mean
}

float through_override(const Loss &objective, const float *loss, const bool *valid, int n,
                       MPI_Comm comm) {
  float local = objective.compute(loss, valid, n);
  average_in_place(&local, 1, comm); // expect: uncompensated-mean
  return local;
}

float through_a_base_with_a_body(const Metric &metric, const float *loss, const bool *valid, int n,
                                 MPI_Comm comm) {
  float local = metric.of(loss, valid, n);
  return sync_mean(local, comm); // expect: uncompensated-mean
}

float sum_then_size(const float *loss, const bool *valid, int n, MPI_Comm comm) {
  MaskedLoss masked;
  float local = masked.compute(loss, valid, n);
  return global_sum(local, comm) / world_size(comm); // expect: uncompensated-mean
}

float weighted(const float *loss, const bool *valid, int n, MPI_Comm comm) {
  float sum = 0, count = 0;
  for (int i = 0; i < n; ++i)
    if (valid[i]) {
      sum += loss[i];
      count += 1;
    }
  float total = global_sum(count, comm);
  return total > 0 ? global_sum(sum, comm) / total : 0;
}

void rank_zero_syncs(MPI_Comm comm) {
  if (world_rank(comm) == 0)
    sync_all(comm); // expect: collective-not-reached-by-all-ranks
}

void bad_input_ends_the_process(int n, MPI_Comm comm) {
  if (world_rank(comm) == 0 && n < 0)
    fatal("negative size");
  sync_all(comm);
}

// The first rank of each node sums over the nodes: the cross-node communicator holds exactly
// those ranks (sync.cpp), the world does not.
void node_leaders_sum(Nodes &nodes, float *x) {
  if (nodes.local_rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_FLOAT, MPI_SUM, nodes.cross_comm);
  if (nodes.local_rank == 0)
    MPI_Bcast(x, 1, MPI_FLOAT, 0, MPI_COMM_WORLD); // expect: collective-not-reached-by-all-ranks
}

// Whichever objective runs, a per-rank starting score averaged over the ranks: the squared
// error's is a local mean.
double start_score(const Objective *objective, MPI_Comm comm) {
  double score = objective != nullptr ? objective->start_score() : 0;
  return sync_mean(static_cast<float>(score), comm); // expect: uncompensated-mean
}
