// Collectives that some ranks do not reach: conditions on the rank or on a rank-local count, early
// exits, loops bounded by local data. Functions named tp_* must produce exactly the diagnostics
// marked `expect:`, tn_* none.
#include "c10d_lite.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cassert>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Issues a collective: a call of it is a collective for its callers.
void sync_counts(long *count, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, count, 1, MPI_LONG, MPI_SUM, comm);
}

struct Shard {
  std::vector<std::vector<float>> batches;
};

// Reports a corrupt input and ends the process.
[[noreturn]] void fail(const char *what);

// Ends the process when this rank has nothing to train on. A rank that ends its process ends the
// job (the launcher stops the others): that is no rank skipping a collective while the others
// wait, so its callers' later collectives are not findings.
void exit_when_empty(long n_valid) {
  if (n_valid == 0)
    std::exit(0);
}

// The same, one call further down.
void validate_batch(long n_valid) {
  exit_when_empty(n_valid);
}

// Leaves only itself on an empty batch: its callers go on.
void skip_when_empty(long n_valid, double *grad) {
  if (n_valid == 0)
    return;
  grad[0] /= n_valid;
}

// Throws on an empty batch: the exception leaves its callers too. Caught by a caller, the rank
// goes on without the collectives it skipped; caught by nobody, it ends the process.
void reject_empty(long n_valid) {
  if (n_valid <= 0)
    throw "empty batch";
}

// This rank's input pipeline: it runs out when this rank's shard does.
class Loader {
public:
  explicit Loader(int rank);
  bool next(std::vector<float> &batch);
};

// The communicator of this rank's group, MPI_COMM_NULL on ranks in no group.
MPI_Comm group_comm_for(int rank);

// Fills `all` with every rank's count (an all-gather behind an interface).
void gather_counts(std::vector<long> &all, MPI_Comm comm);

// The batches of this rank's shard, and the tokens of its batch at `step`.
std::vector<std::vector<float>> load_batches(int rank);
long tokens_in_step(const int *tokens, int step, int rank);

// This rank's valid items: the labels of its slice that are not padding. The slice depends on the
// rank, so the data flow shows a count that differs from rank to rank (a parameter merely named
// `n_valid` would be a guess, and a guess is no finding).
long count_valid(const int *labels, int len, int rank) {
  long n = 0;
  for (int i = rank * len; i < (rank + 1) * len; ++i)
    if (labels[i] != -100)
      ++n;
  return n;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

} // namespace

void tp_rank_zero_only(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_local_count_condition(double loss_sum, const int *labels, int len, MPI_Comm comm) {
  long n_valid = count_valid(labels, len, rank_of(comm));
  double total = 0.0;
  if (n_valid > 0)
    MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_continue_before_the_collective(const int *labels, int num_steps, float *grad, int len,
                                       MPI_Comm comm) {
  for (int step = 0; step < num_steps; ++step) {
    long n_valid = count_valid(labels + step * len, len, rank_of(comm));
    if (n_valid == 0)
      continue;
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
  }
}

void tp_return_before_the_collective(float *grad, const int *labels, int len, ncclComm_t comm,
                                     cudaStream_t stream) {
  int rank = 0;
  ncclCommUserRank(comm, &rank);
  long count = count_valid(labels, len, rank);
  if (count == 0)
    return;
  ncclAllReduce(grad, grad, len, ncclFloat, ncclSum, comm, stream); // expect: collective-not-reached-by-all-ranks
}

void tp_break_leaves_the_loop_early(const int *tokens, int steps, float *grad, int len,
                                    MPI_Comm comm) {
  for (int step = 0; step < steps; ++step) {
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
    long n_tokens = tokens_in_step(tokens, step, rank_of(comm));
    if (n_tokens == 0)
      break;
  }
}

void tp_loop_bounded_by_local_batches(float *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::vector<std::vector<float>> batches = load_batches(rank);
  for (size_t b = 0; b < batches.size(); ++b)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_broadcast_on_the_root_only(float *weights, int len, int root, ncclComm_t comm,
                                   cudaStream_t stream) {
  int rank = 0;
  ncclCommUserRank(comm, &rank);
  if (rank == root)
    ncclBroadcast(weights, weights, len, ncclFloat, root, comm, stream); // expect: collective-not-reached-by-all-ranks
}

void tp_c10d_rank_condition(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() != 0)
    pg->allreduce(t)->wait(); // expect: collective-not-reached-by-all-ranks
}

void tp_helper_issuing_a_collective(long n, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank % 2 == 0)
    sync_counts(&n, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_switch_on_the_rank(float *buf, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  switch (rank) {
  case 0:
    MPI_Bcast(buf, len, MPI_FLOAT, 0, comm); // expect: collective-not-reached-by-all-ranks
    break;
  default:
    break;
  }
}

void tp_count_reduction_on_active_ranks_only(const int *labels, int len, MPI_Comm comm) {
  long n_valid = count_valid(labels, len, rank_of(comm));
  bool has_data = n_valid > 0;
  long N = 0;
  if (has_data)
    MPI_Allreduce(&n_valid, &N, 1, MPI_LONG, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_rank_from_the_environment(float *grad, int len, ncclComm_t comm, cudaStream_t stream) {
  int rank = std::atoi(std::getenv("RANK"));
  if (rank > 0)
    ncclAllReduce(grad, grad, len, ncclFloat, ncclSum, comm, stream); // expect: collective-not-reached-by-all-ranks
}

void tp_branches_in_a_different_order(float *a, float *b, int len, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank < size / 2) {
    MPI_Bcast(a, len, MPI_FLOAT, 0, comm); // expect: collective-not-reached-by-all-ranks
    MPI_Allreduce(MPI_IN_PLACE, b, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
  } else {
    MPI_Allreduce(MPI_IN_PLACE, b, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
    MPI_Bcast(a, len, MPI_FLOAT, 0, comm); // expect: collective-not-reached-by-all-ranks
  }
}

void tp_loop_until_this_ranks_loader_runs_out(float *grad, int len, MPI_Comm comm) {
  Loader loader(rank_of(comm));
  std::vector<float> batch;
  while (loader.next(batch))
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

// Nothing catches the exception: the throwing rank ends the process (std::terminate).
void tn_barrier_after_an_uncaught_throw(long n_valid, MPI_Comm comm) {
  if (n_valid < 0)
    throw "corrupt batch";
  MPI_Barrier(comm);
}

void tp_early_stop_on_a_reduced_loss_only_the_root_holds(float *grad, int len, MPI_Comm comm) {
  for (int step = 0; step < 100; ++step) {
    float local_loss = grad[0], total = 0.0f;
    MPI_Reduce(&local_loss, &total, 1, MPI_FLOAT, MPI_SUM, 0, comm); // expect: collective-not-reached-by-all-ranks
    if (total < 0.01f) // the others still hold 0: they stop, the root waits
      break;
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
  }
}

void tn_uncaught_throw_inside_a_helper_before_the_collective(long n_valid, double *grad, int len,
                                                             MPI_Comm comm) {
  reject_empty(n_valid);
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

// The caller catches what the helper throws on rank 0: that rank skips the barrier of the try
// block and goes on.
void tp_throw_inside_a_helper_caught_around_the_collective(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  try {
    reject_empty(rank);
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  } catch (const char *) {
  }
}

void tp_collective_after_a_throw_in_the_same_try_block(const int *labels, int len,
                                                        MPI_Comm comm) {
  long n_valid = count_valid(labels, len, rank_of(comm));
  try {
    if (n_valid < 0)
      throw "corrupt batch";
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  } catch (const char *) {
  }
}

// Paths that end the process (exit, abort, a [[noreturn]] function, a helper that exits) end the
// job: the ranks left behind are killed, not kept waiting at the next collective.
void tn_exit_before_the_collective(long n_valid, double *grad, int len, MPI_Comm comm) {
  if (n_valid == 0)
    std::exit(0);
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_abort_on_one_rank_before_the_barrier(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    std::fprintf(stderr, "rank 0 gives up\n");
    std::abort();
  }
  MPI_Barrier(comm);
}

void tn_noreturn_helper_before_the_collective(long n_valid, float *grad, int len,
                                              ncclComm_t comm, cudaStream_t stream) {
  if (n_valid < 0)
    fail("negative batch size");
  ncclAllReduce(grad, grad, len, ncclFloat, ncclSum, comm, stream);
}

void tn_exit_inside_a_helper_before_the_collective(long n_valid, double *grad, int len,
                                                   MPI_Comm comm) {
  exit_when_empty(n_valid);
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_exit_two_calls_down_before_the_barrier(long n_valid, MPI_Comm comm) {
  validate_batch(n_valid);
  MPI_Barrier(comm);
}

void tn_exit_inside_a_helper_in_a_loop(long n_valid, int steps, double *grad, int len,
                                       MPI_Comm comm) {
  for (int step = 0; step < steps; ++step) {
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
    exit_when_empty(n_valid);
  }
}

// A CUDA-style error check: the failing rank prints and exits. The status depends on how much
// this rank copies, but the path it guards ends the process.
void check_status(int status) {
  if (status != 0) {
    std::fprintf(stderr, "error %d\n", status);
    std::exit(1);
  }
}

// Copies this rank's shard; the status says whether it could.
int load_shard(double *dst, int len, int rank);

// Always ends the process, though not declared [[noreturn]].
void die(const char *what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

void tn_error_check_helper_before_the_collective(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  check_status(load_shard(grad, len, rank)); // fails on some ranks only, and then exits
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_helper_that_always_ends_before_the_collective(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && grad == nullptr)
    die("no gradients on the root");
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_failed_assert_before_the_collective(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    assert(grad != nullptr && "the root holds the gradients");
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_terminate_and_quick_exit_before_the_collective(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 1 && len < 0)
    std::terminate();
  if (rank == 2 && len < 0)
    std::quick_exit(3);
  if (rank == 3 && len < 0)
    std::_Exit(4);
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

// A rank-dependent return is still a skip, even beside a path that exits.
void tp_return_beside_an_exit(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && len < 0)
    std::exit(1);
  if (rank == 1)
    return;
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_range_for_over_this_ranks_batches(std::vector<float> &grads, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::vector<std::vector<float>> batches = load_batches(rank);
  for (const auto &batch : batches) {
    grads.assign(batch.begin(), batch.end());
    MPI_Allreduce(MPI_IN_PLACE, grads.data(), (int)grads.size(), MPI_FLOAT, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
  }
}

void tp_conditional_operator_on_the_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int status = rank == 0 ? MPI_Barrier(comm) : MPI_SUCCESS; // expect: collective-not-reached-by-all-ranks
  (void)status;
}

void tp_short_circuit_on_the_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  bool synced = rank != 0 || MPI_Barrier(comm) == MPI_SUCCESS; // expect: collective-not-reached-by-all-ranks
  (void)synced;
}

void tp_short_circuit_on_a_local_count(const int *labels, int len, MPI_Comm comm) {
  long n_valid = count_valid(labels, len, rank_of(comm));
  bool reduced = n_valid > 0 && MPI_Allreduce(MPI_IN_PLACE, &n_valid, 1, MPI_LONG, MPI_SUM, comm) == MPI_SUCCESS; // expect: collective-not-reached-by-all-ranks
  (void)reduced;
}

void tn_condition_every_rank_passes(double *grad, int len, MPI_Comm comm) {
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nprocs);
  if (rank < nprocs)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
  if (rank >= 0)
    MPI_Barrier(comm);
}

void tn_both_branches_issue_the_same_collective(const double *send, double *recv, int len,
                                                MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Reduce(MPI_IN_PLACE, recv, len, MPI_DOUBLE, MPI_SUM, 0, comm);
  else
    MPI_Reduce(send, nullptr, len, MPI_DOUBLE, MPI_SUM, 0, comm);
}

void tn_condition_on_the_all_reduced_count(double loss_sum, long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  double total = 0.0;
  if (N > 0) // every rank sees the same N
    MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_condition_on_the_world_size(float *grad, int len, ncclComm_t comm, cudaStream_t stream) {
  int nranks = 1;
  ncclCommCount(comm, &nranks);
  if (nranks > 1)
    ncclAllReduce(grad, grad, len, ncclFloat, ncclSum, comm, stream);
}

void tn_rank_condition_without_collectives(double loss_sum, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double total = 0.0;
  MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  if (rank == 0)
    std::printf("loss %f\n", total);
}

void tn_zero_contribution_instead_of_skipping(double grad, long n_valid, MPI_Comm comm) {
  double contribution = n_valid > 0 ? grad : 0.0;
  double total = 0.0;
  MPI_Allreduce(&contribution, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_continue_after_issuing_the_same_collective(const std::vector<int> &valid_per_step,
                                                   int num_steps, float *grad, float *zeros,
                                                   int len, MPI_Comm comm) {
  for (int step = 0; step < num_steps; ++step) {
    int n_valid = valid_per_step[step];
    if (n_valid == 0) {
      MPI_Allreduce(MPI_IN_PLACE, zeros, len, MPI_FLOAT, MPI_SUM, comm);
      continue;
    }
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm);
  }
}

void tn_loop_over_a_uniform_step_count(float *grad, int len, int num_steps, MPI_Comm comm) {
  for (int step = 0; step < num_steps; ++step)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm);
}

void tn_one_all_reduce_per_parameter(std::vector<std::vector<float>> &parameter_grads,
                                     MPI_Comm comm) {
  for (size_t p = 0; p < parameter_grads.size(); ++p) // the same model on every rank
    MPI_Allreduce(MPI_IN_PLACE, parameter_grads[p].data(), parameter_grads[p].size(), MPI_FLOAT,
                  MPI_SUM, comm);
  int buckets = 0;
  for (auto &grad : parameter_grads)
    if (!grad.empty())
      ++buckets;
  if (buckets > 0)
    MPI_Barrier(comm);
}

void tn_collective_on_the_split_communicator(float *grad, int len) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  if (rank % 2 == 0) // exactly the members of `half` for colour 0
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, half);
}

void tn_loop_exit_decided_together(const int *tokens, float *grad, int len, MPI_Comm comm) {
  for (int step = 0;; ++step) {
    int local_done = tokens[step] == 0;
    int all_done = 0;
    MPI_Allreduce(&local_done, &all_done, 1, MPI_INT, MPI_LAND, comm);
    if (all_done)
      break;
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm);
  }
}

void tn_else_if_chain_issues_one_collective_on_every_path(float *buf, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    std::printf("root\n");
    MPI_Bcast(buf, len, MPI_FLOAT, 0, comm);
  } else if (rank % 2 == 1) {
    MPI_Bcast(buf, len, MPI_FLOAT, 0, comm);
  } else {
    MPI_Bcast(buf, len, MPI_FLOAT, 0, comm);
  }
}

int tn_error_return_after_collectives(float *grad, int len, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank >= size)
    return 1; // impossible: every rank goes on
  float total = 0.0f;
  MPI_Allreduce(grad, &total, 1, MPI_FLOAT, MPI_SUM, comm);
  for (int i = 0; i < len; ++i)
    if (total != static_cast<float>(size * i)) // compares the all-reduced value
      return 2;
  MPI_Barrier(comm);
  return 0;
}

void tn_range_for_over_the_model_parameters(std::vector<std::vector<float>> &parameter_grads,
                                            MPI_Comm comm) {
  for (auto &grad : parameter_grads) // the same model on every rank
    MPI_Allreduce(MPI_IN_PLACE, grad.data(), (int)grad.size(), MPI_FLOAT, MPI_SUM, comm);
}

void tn_both_arms_of_a_rank_conditional_issue_it(float *buf, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int status = rank == 0 ? MPI_Reduce(MPI_IN_PLACE, buf, len, MPI_FLOAT, MPI_SUM, 0, comm)
                         : MPI_Reduce(buf, nullptr, len, MPI_FLOAT, MPI_SUM, 0, comm);
  (void)status;
}

void tn_short_circuit_on_the_world_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  bool synced = size == 1 || MPI_Barrier(comm) == MPI_SUCCESS; // the same on every rank
  (void)synced;
}

void tn_skip_window_on_every_rank(double loss_sum, long n, MPI_Comm comm) {
  long N = n;
  sync_counts(&N, comm);
  if (N == 0)
    return; // the same decision everywhere
  double total = 0.0;
  MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_exit_on_every_rank_when_alone(double *grad, int len, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size == 1)
    std::exit(0); // the same decision everywhere
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_exit_after_the_collective(long n_valid, double *grad, int len, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
  if (n_valid == 0)
    std::exit(0);
}

void tn_return_inside_a_helper_before_the_collective(long n_valid, double *grad, int len,
                                                     MPI_Comm comm) {
  skip_when_empty(n_valid, grad); // leaves the helper only
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_exit_inside_a_helper_decided_together(long n_valid, double *grad, int len,
                                              MPI_Comm comm) {
  long total = n_valid;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, comm);
  exit_when_empty(total); // the same decision everywhere
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_exit_inside_a_helper_after_the_collective(long n_valid, double *grad, int len,
                                                  MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
  exit_when_empty(n_valid);
}

void tn_early_stop_on_a_reduced_loss_broadcast_first(float *grad, int len, MPI_Comm comm) {
  for (int step = 0; step < 100; ++step) {
    float local_loss = grad[0], total = 0.0f;
    MPI_Reduce(&local_loss, &total, 1, MPI_FLOAT, MPI_SUM, 0, comm);
    MPI_Bcast(&total, 1, MPI_FLOAT, 0, comm); // every rank now holds the root's total
    if (total < 0.01f)
      break;
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm);
  }
}

void tn_throw_caught_before_the_broadcast(int *ok, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  *ok = 1;
  try {
    if (rank == 0 && std::getenv("CHECKPOINT") == nullptr)
      throw "missing checkpoint";
  } catch (const char *) {
    *ok = 0; // every rank goes on to the broadcast
  }
  MPI_Bcast(ok, 1, MPI_INT, 0, comm);
}

void tn_throw_inside_a_helper_caught_by_the_caller(long n_valid, double *grad, int len,
                                                   MPI_Comm comm) {
  try {
    reject_empty(n_valid);
  } catch (const char *) {
    grad[0] = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_mpi_abort_before_the_collective(long n_valid, double *grad, int len, MPI_Comm comm) {
  if (n_valid < 0)
    MPI_Abort(comm, 1); // ends every rank's process: nobody is left waiting
  MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm);
}

void tp_rank_from_the_environment_as_a_string(double *x, MPI_Comm comm) {
  std::string rank = std::getenv("RANK");
  if (rank == "0")
    MPI_Bcast(x, 1, MPI_DOUBLE, 0, comm); // expect: collective-not-reached-by-all-ranks
}

void tp_rank_from_the_environment_through_stoi(double *x, MPI_Comm comm) {
  int rank = std::stoi(std::getenv("OMPI_COMM_WORLD_RANK"));
  if (rank == 0)
    MPI_Bcast(x, 1, MPI_DOUBLE, 0, comm); // expect: collective-not-reached-by-all-ranks
}

// An exclusive prefix sum is 0 on the first rank only, like a rank.
void tp_condition_on_an_exclusive_scan(double *x, int n_valid, MPI_Comm comm) {
  int before = 0;
  MPI_Exscan(&n_valid, &before, 1, MPI_INT, MPI_SUM, comm);
  if (before == 0)
    MPI_Bcast(x, 1, MPI_DOUBLE, 0, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_condition_on_a_broadcast_value(double *x, int flag, MPI_Comm comm) {
  MPI_Bcast(&flag, 1, MPI_INT, 0, comm);
  if (flag == 0)
    MPI_Bcast(x, 1, MPI_DOUBLE, 0, comm);
}

// Each rank receives its own count: dividing by it forms a local mean, like any local count.
double tp_scattered_counts_divide_a_local_sum(double loss_sum, const int *counts, MPI_Comm comm) {
  int n_here = 0;
  MPI_Scatter(counts, 1, MPI_INT, &n_here, 1, MPI_INT, 0, comm);
  double mean = loss_sum / n_here, total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

// Names alone are guesses, and a guess is no finding: a size parameter named `count` is the same
// on every rank in a benchmark that runs one message size everywhere.
void tn_size_parameter_named_count(float *buf, size_t count, ncclComm_t comm, cudaStream_t s) {
  if (count == 0)
    return;
  ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, s);
}

// Every rank compares every gathered count with its own: the flag is true everywhere or nowhere.
void tn_agreement_on_gathered_counts(std::vector<long> &mine_and_all, int ranks, MPI_Comm comm) {
  long local_count = mine_and_all[0];
  gather_counts(mine_and_all, comm);
  bool agree = true;
  for (int r = 0; r < ranks; ++r) {
    long peer_count = mine_and_all[r];
    if (peer_count != local_count)
      agree = false;
  }
  if (agree)
    MPI_Barrier(comm);
}

// A membership guard: the ranks the test keeps out are no members of `group`, and a collective on
// `group` involves its members only.
void tn_membership_guard_before_a_collective_on_that_communicator(double *x, MPI_Comm world) {
  MPI_Comm group = group_comm_for(rank_of(world));
  if (group == MPI_COMM_NULL)
    return;
  MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, group);
}

void tn_membership_guard_around_a_collective_on_that_communicator(double *x, MPI_Comm world) {
  MPI_Comm group = group_comm_for(rank_of(world));
  if (group != MPI_COMM_NULL)
    MPI_Bcast(x, 1, MPI_DOUBLE, 0, group);
}

// The ranks outside `group` still skip what the whole job issues after the guard.
void tp_membership_guard_before_a_collective_on_another_communicator(double *x, MPI_Comm world) {
  MPI_Comm group = group_comm_for(rank_of(world));
  if (group == MPI_COMM_NULL)
    return;
  MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, world); // expect: collective-not-reached-by-all-ranks
}

// Branches that together issue the same collective on every rank: the root sends its buffer, the
// others receive into theirs.
void tn_branches_that_together_issue_the_broadcast(double *mine, double *staging, int len,
                                                    MPI_Comm comm) {
  if (rank_of(comm) == 0)
    MPI_Bcast(mine, len, MPI_DOUBLE, 0, comm);
  else
    MPI_Bcast(staging, len, MPI_DOUBLE, 0, comm);
}

// The node leaders talk on the communicator split by the local rank (filled by another function):
// every member of `cross` has the same local rank, so the condition is uniform over its members.
struct Topology {
  MPI_Comm world, node, cross;
  int local_rank;
};

void build_topology(Topology &t) {
  MPI_Comm_split_type(t.world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &t.node);
  MPI_Comm_rank(t.node, &t.local_rank);
  int rank = 0;
  MPI_Comm_rank(t.world, &rank);
  MPI_Comm_split(t.world, t.local_rank, rank, &t.cross);
}

void tn_leaders_on_the_communicator_split_by_local_rank(Topology &t, double *x) {
  if (t.local_rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, t.cross);
}

void tp_leaders_only_on_the_node_communicator(Topology &t, double *x) {
  if (t.local_rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, t.node); // expect: collective-not-reached-by-all-ranks
}

// The status of a runtime call says whether it failed, not what the rank is, even when the rank is
// one of its arguments: checked and returned up to main (nccl-tests' NCCLCHECK), it is error
// handling, which fails the run, not a rank that silently skips what follows.
#define STATUS_CHECK(cmd)                                                                          \
  do {                                                                                             \
    ncclResult_t status = cmd;                                                                     \
    if (status != ncclSuccess)                                                                     \
      return status;                                                                               \
  } while (0)

ncclResult_t tn_status_of_a_call_given_the_rank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                                float *grad, cudaStream_t stream) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  STATUS_CHECK(ncclCommInitRank(comm, nranks, id, rank));
  if (cudaSetDevice(rank % 8) != cudaSuccess)
    return ncclUnhandledCudaError;
  STATUS_CHECK(ncclAllReduce(grad, grad, 1, ncclFloat, ncclSum, *comm, stream));
  return ncclSuccess;
}

// What a runtime call computes from the rank is still the rank's.
void tp_data_from_the_rank_still_varies(float *grad, ncclComm_t comm, cudaStream_t stream) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int device = abs(rank - 1);
  if (device == 0)
    ncclAllReduce(grad, grad, 1, ncclFloat, ncclSum, comm, stream); // expect: collective-not-reached-by-all-ranks
}

// A communicator variable first set to MPI_COMM_WORLD, then split by a colour the guard repeats
// (MPICH's coll4 test): the split makes a new communicator; the world is left as it was.
void tn_split_after_assigning_the_world(int *row) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  int participants = size;
  if (size > 4) {
    participants = 4;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 4, rank, &comm);
  } else {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  }
  if (rank < participants)
    MPI_Bcast(row, 4, MPI_INT, 0, comm);
}

// A project's own status, checked on one rank and returned up to main (nccl-tests' TESTCHECK
// inside `if (proc == 0)`): the rank that returns has failed, and the run fails with it.
enum RunStatus { runSuccess, runDeviceError };
RunStatus open_device(int rank);
#define RUN_CHECK(cmd)                                                                             \
  do {                                                                                             \
    RunStatus run_status = cmd;                                                                    \
    if (run_status != runSuccess)                                                                  \
      return run_status;                                                                           \
  } while (0)

RunStatus tn_status_returned_up_on_one_rank(int *id) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    RUN_CHECK(open_device(rank));
  }
  MPI_Bcast(id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return runSuccess;
}

// A plain return on one rank is still a skip.
int tp_plain_return_on_one_rank(int *id) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && *id < 0)
    return 1;
  MPI_Bcast(id, 1, MPI_INT, 0, MPI_COMM_WORLD); // expect: collective-not-reached-by-all-ranks
  return 0;
}

// Separate ifs whose conditions split the ranks: the first stage of a pipeline, the last, and the
// stages between each synchronise once. A one-stage pipeline (first == last) takes the first if
// only, so every rank reaches exactly one barrier whatever `first` and `last` are.
void tn_separate_ifs_that_split_the_ranks(float *activations, int len, int first, int last,
                                          MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == first) {
    for (int i = 0; i < len; ++i)
      activations[i] = 0.0f;
    MPI_Barrier(comm);
  }
  std::printf("stage %d ready\n", rank);
  if (last == rank) {
    if (rank != first)
      MPI_Barrier(comm);
    activations[0] = 1.0f;
  }
  if (!(rank == first || rank == last))
    MPI_Barrier(comm);
}

// The root and the other ranks broadcast in two separate ifs.
void tn_root_and_the_others_in_separate_ifs(float *weights, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Bcast(weights, len, MPI_FLOAT, 0, comm);
  if (rank != 0)
    MPI_Bcast(weights, len, MPI_FLOAT, 0, comm);
}

// The lower and the upper half, and an else that tests again what the if left.
void tn_halves_in_separate_ifs(float *grad, int len, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int half = size / 2;
  if (rank < half)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm);
  if (rank >= half)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_FLOAT, MPI_SUM, comm);
  if (rank == 0)
    MPI_Barrier(comm);
  else if (rank > 0)
    MPI_Barrier(comm);
}

// Ranks 0 and 1 call the barrier, ranks 2 and above never do.
void tp_separate_ifs_that_leave_ranks_out(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  if (rank == 1)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

// Every rank takes one of the two ifs, but a rank equal to both `src` and `dest` takes both.
void tp_separate_ifs_that_overlap(float *buf, int len, int src, int dest, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == src)
    MPI_Bcast(buf, len, MPI_FLOAT, src, comm); // expect: collective-not-reached-by-all-ranks
  if (rank != src || rank == dest)
    MPI_Bcast(buf, len, MPI_FLOAT, src, comm); // expect: collective-not-reached-by-all-ranks
}

// The ifs split the ranks, but the root broadcasts where the others wait at a barrier.
void tp_separate_ifs_that_issue_different_collectives(float *buf, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Bcast(buf, len, MPI_FLOAT, 0, comm); // expect: collective-not-reached-by-all-ranks
  if (rank != 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

// The ifs split the ranks, but their barriers are on different communicators.
void tp_separate_ifs_on_different_communicators(MPI_Comm comm, MPI_Comm other) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  if (rank != 0)
    MPI_Barrier(other); // expect: collective-not-reached-by-all-ranks
}

// The second if tests the rank after the first changed it.
void tp_separate_ifs_around_a_write_of_the_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
    rank = 1;
  }
  if (rank != 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

// The ifs split the ranks, but the root reaches its barrier before the broadcast and the others
// after it.
void tp_separate_ifs_around_another_collective(float *buf, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  MPI_Bcast(buf, len, MPI_FLOAT, 0, comm);
  if (rank != 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

namespace {

// Adds the squared norm of `grads` to `out[0]`, which it zeroes first when `reset` is set.
void norm_squared_into(float *out, const float *grads, int len, bool reset) {
  if (reset)
    std::memset(out, 0, sizeof(float));
  for (int i = 0; i < len; ++i)
    out[0] = out[0] + grads[i] * grads[i];
}

} // namespace

// The norm of the all-reduced gradients lands in a buffer that held this rank's activations, zeroed
// first: every rank holds the same norm, and takes the same side of the test.
void tn_norm_in_a_reused_buffer_zeroed_first(float *grads, float *scratch, int len, MPI_Comm comm) {
  scratch[0] = static_cast<float>(rank_of(comm));
  MPI_Allreduce(MPI_IN_PLACE, grads, len, MPI_FLOAT, MPI_SUM, comm);
  norm_squared_into(scratch, grads, len, /*reset=*/true);
  if (scratch[0] < 1e6f)
    MPI_Barrier(comm);
}

// Not zeroed, the buffer still holds this rank's value under the norm.
void tp_norm_added_to_this_ranks_value(float *grads, float *scratch, int len, MPI_Comm comm) {
  scratch[0] = static_cast<float>(rank_of(comm));
  MPI_Allreduce(MPI_IN_PLACE, grads, len, MPI_FLOAT, MPI_SUM, comm);
  norm_squared_into(scratch, grads, len, /*reset=*/false);
  if (scratch[0] < 1e6f)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

// `offset < 1u` compares -1 as the largest unsigned value: on rank 0 (offset -1) neither if holds.
void tp_separate_ifs_that_compare_a_negative_value_as_unsigned(MPI_Comm comm) {
  const int offset = rank_of(comm) - 1;
  if (offset < 1u)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  if (offset >= 1)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

// `(char)rank` is 0 on rank 256 too, which then takes neither if.
void tp_separate_ifs_on_a_narrowed_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if ((char)rank)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
  if (rank == 0)
    MPI_Barrier(comm); // expect: collective-not-reached-by-all-ranks
}

// A conversion to bool tests what it converts: `static_cast<bool>(rank)` is `rank != 0`.
void tn_separate_ifs_on_the_rank_as_a_truth_value(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (static_cast<bool>(rank))
    MPI_Barrier(comm);
  if (!rank)
    MPI_Barrier(comm);
}
