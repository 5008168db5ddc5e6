// MPI: MPI_SUM followed by a division by the communicator size is an averaging reducer; local
// means must not reach it. Functions named tp_* must produce exactly the diagnostics marked
// `expect:`, tn_* none.
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

struct Batch {
  double loss_sum;
  int count; // valid items of this rank
};

// SUM then divide by the size: averages its argument across ranks.
void allreduce_average(double *value, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  *value /= size;
}

// Sums only: the caller divides by the size, which makes the pair an average.
void allreduce_sum(double *value, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_SUM, comm);
}

} // namespace

double tp_mpi_sum_then_divide_by_size(const std::vector<double> &losses, MPI_Comm comm) {
  double sum = 0.0;
  for (double l : losses)
    sum += l;
  double mean = sum / losses.size();
  double total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

void tp_mpi_in_place_then_loop_divide(std::vector<float> &grad, const std::vector<float> &grad_sum,
                                      int n_valid, MPI_Comm comm) {
  for (size_t i = 0; i < grad.size(); ++i)
    grad[i] = grad_sum[i] / n_valid;
  MPI_Allreduce(MPI_IN_PLACE, grad.data(), grad.size(), MPI_FLOAT, MPI_SUM, comm); // expect: note:uncompensated-mean
  int world = 1;
  MPI_Comm_size(comm, &world);
  for (float &g : grad)
    g /= world;
}

double tp_mpi_multiply_by_inverse_size(double loss_sum, long n_tokens, MPI_Comm comm) {
  double mean = loss_sum / n_tokens;
  double total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: note:uncompensated-mean
  int nprocs = 1;
  MPI_Comm_size(comm, &nprocs);
  return total * (1.0 / nprocs);
}

double tp_mpi_reduce_to_root_then_divide(double loss_sum, int n_valid, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double mean = loss_sum / n_valid;
  double total = 0.0;
  MPI_Reduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, 0, comm); // expect: note:uncompensated-mean
  if (rank == 0)
    total /= size;
  return total;
}

double tp_mpi_struct_field_count(const Batch &batch, MPI_Comm comm) {
  double mean = batch.loss_sum / batch.count;
  double avg = 0.0;
  MPI_Allreduce(&mean, &avg, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: note:uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  avg /= size;
  return avg;
}

double tp_mpi_through_a_wrapper(double loss_sum, int n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid;
  allreduce_average(&mean, comm); // expect: note:uncompensated-mean
  return mean;
}

double tp_mpi_wrapper_sums_and_the_caller_divides(double loss_sum, long n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid;
  allreduce_sum(&mean, comm); // expect: note:uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return mean / size;
}

double tn_mpi_wrapper_sums_local_sums_and_counts(double loss_sum, long n_valid, MPI_Comm comm) {
  double total = loss_sum, count = static_cast<double>(n_valid);
  allreduce_sum(&total, comm);
  allreduce_sum(&count, comm);
  return count > 0 ? total / count : 0.0; // the global item mean
}

double tp_mpi_nonblocking_allreduce(double loss_sum, int n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid, total = 0.0;
  MPI_Request request;
  MPI_Iallreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm, &request); // expect: note:uncompensated-mean
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

double tp_mpi_counted_in_a_loop(const double *loss, const bool *keep, int len, MPI_Comm comm) {
  double sum = 0.0;
  int kept = 0;
  for (int i = 0; i < len; ++i)
    if (keep[i]) {
      sum += loss[i];
      kept++;
    }
  double mean = sum / kept;
  int size = 1;
  MPI_Comm_size(comm, &size);
  double total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: uncompensated-mean
  double average = total / size;
  return average;
}

// Divided by the size first, then summed: the same average as summing, then dividing.
double tp_mpi_divide_by_size_before_sum(double loss_sum, int n_valid, MPI_Comm comm) {
  int world_size = 1;
  MPI_Comm_size(comm, &world_size);
  double loss = loss_sum / n_valid;
  loss /= world_size;
  MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: note:uncompensated-mean
  return loss;
}

double tn_mpi_sum_of_sums_divided_by_all_reduced_count(const std::vector<double> &losses,
                                                       MPI_Comm comm) {
  double local[2] = {0.0, static_cast<double>(losses.size())};
  for (double l : losses)
    local[0] += l;
  double global[2] = {0.0, 0.0};
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
  return global[1] > 0 ? global[0] / global[1] : 0.0;
}

double tn_mpi_local_mean_scaled_before_average(double loss_sum, long n, MPI_Comm comm) {
  double mean = loss_sum / n;
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (N == 0)
    return 0.0;
  double weighted = mean * size * n / N; // P * n / N
  double total = 0.0;
  MPI_Allreduce(&weighted, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total / size;
}

double tn_mpi_weight_by_n_over_N_after_reducing_counts(double local_mean, int n, MPI_Comm comm) {
  int N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_INT, MPI_SUM, comm);
  double weight = N > 0 ? static_cast<double>(n) / N : 0.0;
  double contribution = local_mean * weight, global = 0.0;
  MPI_Allreduce(&contribution, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
  return global;
}

// Weighted by the global count before the SUM: the global mean, whatever each rank holds.
double tn_mpi_local_sum_over_global_count_before_sum(double loss_sum, long n_valid, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n_valid, &N, 1, MPI_LONG, MPI_SUM, comm);
  double loss = N > 0 ? loss_sum / N : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, comm);
  return loss;
}

// A local mean scaled by P n / N, then divided by the size before the SUM: weights cancel.
double tn_mpi_scaled_mean_divided_by_size_before_sum(double loss_sum, long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (N == 0)
    return 0.0;
  double weighted = loss_sum / n * size * n / N;
  weighted /= size;
  MPI_Allreduce(MPI_IN_PLACE, &weighted, 1, MPI_DOUBLE, MPI_SUM, comm);
  return weighted;
}

double tn_mpi_per_token_losses_with_sum(const std::vector<double> &token_losses, MPI_Comm comm) {
  double sum = 0.0;
  for (double l : token_losses)
    sum += l;
  double total = 0.0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total;
}

double tn_mpi_global_mean_averaged_again(double loss_sum, long n, MPI_Comm comm) {
  double total = 0.0;
  long N = 0;
  MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  double global_mean = N > 0 ? total / N : 0.0;
  double again = 0.0; // already rank-uniform: averaging it changes nothing
  MPI_Allreduce(&global_mean, &again, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return again / size;
}

double tn_mpi_max_of_local_means(double loss_sum, int n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid, worst = 0.0;
  MPI_Allreduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  return worst;
}

void tn_mpi_local_mean_only_logged(double loss_sum, int n_valid) {
  std::printf("local loss %f\n", loss_sum / n_valid);
}

double tn_mpi_uniform_constant_batch(const double *loss, MPI_Comm comm) {
  const int batch = 64; // every rank holds exactly `batch` items
  double sum = 0.0;
  for (int i = 0; i < batch; ++i)
    sum += loss[i];
  double mean = sum / batch, total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

// Model dimensions divide values without counting this rank's items: the same on every rank.
double tn_mpi_divided_by_the_number_of_classes(double score_sum, int num_classes, MPI_Comm comm) {
  double mean = score_sum / num_classes, total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

struct ModelConfig {
  int vocab_size;
  int hidden_size;
};

double tn_mpi_divided_by_config_dimensions(double logit_sum, const ModelConfig &config,
                                           MPI_Comm comm) {
  double mean = logit_sum / config.vocab_size / config.hidden_size;
  allreduce_average(&mean, comm);
  return mean;
}

// A batch size of unknown origin is this rank's count of items (its last batch may be short).
double tp_mpi_divided_by_a_batch_size_parameter(double loss_sum, int batch_size, MPI_Comm comm) {
  double mean = loss_sum / batch_size;
  allreduce_average(&mean, comm); // expect: uncompensated-mean
  return mean;
}

// The model's gradients are as many on every rank, whatever data name is part of theirs.
double tn_mpi_mean_square_of_embedding_gradients(const std::vector<double> &token_embedding_grads,
                                                 MPI_Comm comm) {
  double sum = 0.0;
  for (double g : token_embedding_grads)
    sum += g * g;
  double mean = sum / token_embedding_grads.size();
  allreduce_average(&mean, comm);
  return mean;
}

double tp_mpi_mean_of_this_ranks_token_losses(const std::vector<double> &token_losses,
                                              MPI_Comm comm) {
  double sum = 0.0;
  for (double l : token_losses)
    sum += l;
  double mean = sum / token_losses.size();
  allreduce_average(&mean, comm); // expect: note:uncompensated-mean
  return mean;
}

// Classified items are no classes: their count still forms a local mean.
double tp_mpi_mean_over_classified_items(double loss_sum, int n_classified, MPI_Comm comm) {
  double mean = loss_sum / n_classified;
  allreduce_average(&mean, comm); // expect: uncompensated-mean
  return mean;
}

// The count reaches the division through a real: `double total = n` hides no count. With weights
// the total is their sum, a local weight as much as a count is.
struct Labels {
  const float *label = nullptr;
  const float *weight = nullptr;
  int num_data = 0;
};

double tp_mpi_count_copied_into_a_real(const Labels &data, MPI_Comm comm) {
  double sum = 0, total = 0;
  if (data.weight != nullptr) {
    for (int i = 0; i < data.num_data; ++i) {
      sum += data.label[i] * data.weight[i];
      total += data.weight[i];
    }
  } else {
    total = static_cast<double>(data.num_data);
    for (int i = 0; i < data.num_data; ++i)
      sum += data.label[i];
  }
  double mean = sum / total;
  allreduce_average(&mean, comm); // expect: uncompensated-mean
  return mean;
}

double tn_mpi_copied_count_reduced_first(const Labels &data, MPI_Comm comm) {
  double sum = 0;
  double total = data.num_data;
  for (int i = 0; i < data.num_data; ++i)
    sum += data.label[i];
  allreduce_sum(&sum, comm);
  allreduce_sum(&total, comm);
  return total > 0 ? sum / total : 0;
}
