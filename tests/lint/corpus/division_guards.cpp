// Divisions by the all-reduced count N, which is zero in a window where no rank has a valid item,
// and the guards that make them safe. Functions named tp_* must produce exactly the diagnostics
// marked `expect:`, tn_* none.
#include "c10d_lite.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace {

long all_reduced_count(long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  return N;
}

} // namespace

double tn_guarded_by_mpi_abort(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  if (N == 0)
    MPI_Abort(comm, 1); // ends every rank: the division below never sees zero
  return total / N;
}

double tp_unguarded_mpi(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  return total / N; // expect: unguarded-reduced-count-division
}

float tp_unguarded_after_a_device_copy(float total, int n_valid, int *d_count, ncclComm_t comm,
                                       cudaStream_t stream) {
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  int N = 0;
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  return total / N; // expect: unguarded-reduced-count-division
}

at::Tensor tp_unguarded_c10d(c10::intrusive_ptr<c10d::ProcessGroup> pg, const at::Tensor &loss_sum,
                             const at::Tensor &mask) {
  at::Tensor N = mask.sum();
  std::vector<at::Tensor> counts{N};
  pg->allreduce(counts)->wait();
  return loss_sum / N; // expect: unguarded-reduced-count-division
}

double tp_guard_on_the_local_count_instead(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  double loss = 0.0;
  if (n > 0) // guards this rank's n, not the global N
    loss = total / N; // expect: unguarded-reduced-count-division
  return loss;
}

double tp_guard_after_the_division(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  double loss = total / N; // expect: unguarded-reduced-count-division
  if (N == 0)
    return 0.0;
  return loss;
}

void tp_unguarded_in_place(std::vector<double> &grad, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  for (double &g : grad)
    g /= N; // expect: unguarded-reduced-count-division
}

double tn_guard_positive(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  if (N > 0)
    return total / N;
  return 0.0;
}

double tn_guard_std_max(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  return total / std::max(N, 1L);
}

double tn_guard_clamp(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  return total / std::clamp(N, 1L, 1L << 40);
}

double tn_guard_early_return(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  if (N == 0)
    return 0.0;
  return total / N;
}

double tn_guard_continue(const std::vector<double> &totals, const std::vector<long> &counts,
                         MPI_Comm comm) {
  double loss = 0.0;
  for (size_t window = 0; window < totals.size(); ++window) {
    long N = all_reduced_count(counts[window], comm);
    if (N == 0)
      continue;
    loss += totals[window] / N;
  }
  return loss;
}

double tn_guard_ternary(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  return N > 0 ? total / N : 0.0;
}

double tn_guard_plus_one(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  return total / (N + 1);
}

double tn_guard_assert(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  assert(N > 0);
  return total / N;
}

double tn_guard_not_equal_zero(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  double loss = 0.0;
  if (N != 0 && total > 0)
    loss = total / N;
  return loss;
}

double tn_guard_throw(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  if (N <= 0)
    throw std::runtime_error("empty window on every rank");
  return total / N;
}

double tn_guard_clamp_by_assignment(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  if (N < 1)
    N = 1;
  return total / N;
}

at::Tensor tn_guard_tensor_clamp(c10::intrusive_ptr<c10d::ProcessGroup> pg,
                                 const at::Tensor &loss_sum, const at::Tensor &mask) {
  at::Tensor N = mask.sum();
  std::vector<at::Tensor> counts{N};
  pg->allreduce(counts)->wait();
  return loss_sum / N.clamp_min(1);
}

double tn_divide_by_the_world_size(double total, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size); // never zero
  return total / size;
}

double tn_guarded_by_a_named_test(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  const bool empty = N == 0;
  if (empty)
    return 0.0;
  return total / N;
}

namespace {

void require(bool ok, const char *what) {
  if (!ok)
    throw std::runtime_error(what);
}

void note_unless(bool ok, const char *what) {
  if (!ok)
    std::fprintf(stderr, "%s\n", what);
}

} // namespace

double tn_guarded_by_a_throwing_check(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  require(N > 0, "no rank has a valid item");
  return total / N;
}

double tp_a_check_that_only_logs_is_no_guard(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  note_unless(N > 0, "no rank has a valid item");
  return total / N; // expect: unguarded-reduced-count-division
}

double tp_a_named_test_of_something_else_is_no_guard(double total, long n, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  const bool none_here = n == 0;
  if (none_here)
    return 0.0;
  return total / N; // expect: unguarded-reduced-count-division
}

namespace {

// Throws unless either holds: returning says nothing about `ok` alone.
void require_any(bool ok, bool fallback, const char *what) {
  ok = ok || fallback;
  if (!ok)
    throw std::runtime_error(what);
}

} // namespace

double tp_a_check_that_widens_its_argument_is_no_guard(double total, long n, bool resume,
                                                       MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  require_any(N > 0, resume, "nothing to do");
  return total / N; // expect: unguarded-reduced-count-division
}

double tp_a_named_test_of_a_count_reduced_again_since(double total, long n, long m,
                                                      MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  const bool empty = N == 0;
  N = all_reduced_count(m, comm);
  if (empty)
    return 0.0;
  return total / N; // expect: unguarded-reduced-count-division
}

namespace {

void widen(bool &ok, bool fallback) { ok = ok || fallback; }

// Throws unless either holds, through a helper that takes the flag by reference.
void require_either(bool ok, bool fallback, const char *what) {
  widen(ok, fallback);
  if (!ok)
    throw std::runtime_error(what);
}

} // namespace

double tp_a_check_that_widens_its_argument_by_reference_is_no_guard(double total, long n,
                                                                    bool resume, MPI_Comm comm) {
  long N = all_reduced_count(n, comm);
  require_either(N > 0, resume, "nothing to do");
  return total / N; // expect: unguarded-reduced-count-division
}
