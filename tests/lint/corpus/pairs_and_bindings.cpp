// Values that travel in a std::pair or a plain struct, and come out through `.first`, std::get or
// a structured binding: each field is followed on its own, so a rank and a communicator size
// returned together stay apart, and a local count returned beside its sum still forms a mean.
// Functions named tp_* must produce exactly the diagnostics marked `expect:`, tn_* none.
#include <mpi.h>

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace {

std::pair<int, int> rank_and_size(MPI_Comm comm) {
  int r = 0;
  int s = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &s);
  return {r, s};
}

std::pair<int, int> made_rank_and_size(MPI_Comm comm) {
  int r = 0;
  int s = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &s);
  return std::make_pair(r, s);
}

struct Placement {
  int process;
  int processes;
};

Placement placement(MPI_Comm comm) {
  Placement p;
  MPI_Comm_rank(comm, &p.process);
  MPI_Comm_size(comm, &p.processes);
  return p;
}

std::pair<double, long> loss_and_items(const std::vector<double> &losses) {
  double s = 0.0;
  for (double l : losses)
    s += l;
  return {s, static_cast<long>(losses.size())};
}

struct LossSum {
  double sum;
  long items;
};

LossSum loss_sum(const std::vector<double> &losses) {
  double s = 0.0;
  for (double l : losses)
    s += l;
  return LossSum{s, static_cast<long>(losses.size())};
}

// This rank's count and the count summed over the ranks, returned together.
struct ItemCounts {
  long local;
  long global;
};

ItemCounts count_items(const std::vector<double> &losses, MPI_Comm comm) {
  long n = static_cast<long>(losses.size());
  long total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG, MPI_SUM, comm);
  return {n, total};
}

double average_over_ranks(double value, MPI_Comm comm) {
  double total = 0.0;
  MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

} // namespace

void tp_binding_rank_guard(double *v, MPI_Comm comm) {
  auto [rank, size] = rank_and_size(comm);
  if (rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_binding_size_guard(double *v, MPI_Comm comm) {
  auto [rank, size] = rank_and_size(comm);
  if (size > 1)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tp_struct_binding_early_return(double *v, MPI_Comm comm) {
  const auto [process, processes] = placement(comm);
  if (process != 0)
    return;
  MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_struct_binding_size_guard(double *v, MPI_Comm comm) {
  const auto [process, processes] = placement(comm);
  if (processes < 2)
    return;
  MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tp_reference_binding(double *v, MPI_Comm comm) {
  std::pair<int, int> where = made_rank_and_size(comm);
  const auto &[rank, size] = where;
  if (rank > 0)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_pair_second_guard(double *v, MPI_Comm comm) {
  std::pair<int, int> where = rank_and_size(comm);
  if (where.second > 1)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_get_size_guard(double *v, MPI_Comm comm) {
  auto where = made_rank_and_size(comm);
  if (std::get<1>(where) > 1)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tp_get_rank_guard(double *v, MPI_Comm comm) {
  auto where = made_rank_and_size(comm);
  if (std::get<0>(where) == 0)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_returned_pair_size(double *v, MPI_Comm comm) {
  if (rank_and_size(comm).second > 1)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_assigned_pair_size(double *v, MPI_Comm comm) {
  std::pair<int, int> where;
  where = rank_and_size(comm);
  if (where.second > 1)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

// A tuple's elements are not followed: the binding's name alone says it is the rank, a guess,
// and a guess is no participation finding.
void tn_tuple_binding_named_rank(double *v, MPI_Comm comm) {
  int r = 0;
  int s = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &s);
  auto [rank, size] = std::make_tuple(r, s);
  if (rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

void tn_tuple_binding_named_size(double *v, MPI_Comm comm) {
  int r = 0;
  int s = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &s);
  auto [rank, size] = std::make_tuple(r, s);
  if (size > 1)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, comm);
}

double tp_pair_second_is_the_count(const std::vector<double> &losses, MPI_Comm comm) {
  std::pair<double, long> stats = loss_and_items(losses);
  double mean = stats.first / stats.second;
  return average_over_ranks(mean, comm); // expect: uncompensated-mean
}

double tp_struct_binding_mean(const std::vector<double> &losses, MPI_Comm comm) {
  auto [sum, items] = loss_sum(losses);
  return average_over_ranks(sum / items, comm); // expect: uncompensated-mean
}

double tn_struct_binding_global_mean(const std::vector<double> &losses, MPI_Comm comm) {
  auto [sum, items] = loss_sum(losses);
  long total_items = 0;
  MPI_Allreduce(&items, &total_items, 1, MPI_LONG, MPI_SUM, comm);
  double total = 0.0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total / std::max(total_items, 1L);
}

double tn_pair_sum_averaged(const std::vector<double> &losses, MPI_Comm comm) {
  auto stats = loss_and_items(losses);
  double sum_over_ranks = average_over_ranks(stats.first, comm);
  return sum_over_ranks;
}

double tn_binding_of_the_global_count_guarded(const std::vector<double> &losses, MPI_Comm comm) {
  auto [n, total_items] = count_items(losses, comm);
  double sum = 0.0;
  for (double l : losses)
    sum += l;
  double share = total_items > 0 ? sum / total_items : 0.0;
  double loss = 0.0;
  MPI_Allreduce(&share, &loss, 1, MPI_DOUBLE, MPI_SUM, comm);
  return loss;
}

double tp_field_of_the_global_count_unguarded(const std::vector<double> &losses, MPI_Comm comm) {
  ItemCounts counts = count_items(losses, comm);
  double sum = 0.0;
  for (double l : losses)
    sum += l;
  double share = sum / counts.global; // expect: unguarded-reduced-count-division
  double loss = 0.0;
  MPI_Allreduce(&share, &loss, 1, MPI_DOUBLE, MPI_SUM, comm);
  return loss;
}

double tp_binding_of_the_local_count(const std::vector<double> &losses, MPI_Comm comm) {
  auto [n, total_items] = count_items(losses, comm);
  double sum = 0.0;
  for (double l : losses)
    sum += l;
  return average_over_ranks(sum / n, comm); // expect: uncompensated-mean
}
