// libtorch c10d: ReduceOp::AVG, a PreMulSum by 1/P, or SUM followed by a division by the world
// size average across ranks. Functions named tp_* must produce exactly the diagnostics marked
// `expect:`, tn_* none.
#include "c10d_lite.h"

#include <vector>

using c10d::ProcessGroup;

void tp_c10d_avg_option(c10::intrusive_ptr<ProcessGroup> pg, const at::Tensor &token_losses,
                        int64_t n_valid) {
  at::Tensor loss = token_losses.sum() / n_valid;
  std::vector<at::Tensor> tensors{loss};
  pg->allreduce(tensors, c10d::AllreduceOptions{c10d::ReduceOp::AVG})->wait(); // expect: note:uncompensated-mean
}

void tp_c10d_options_variable(c10::intrusive_ptr<ProcessGroup> pg, const at::Tensor &token_losses,
                              const at::Tensor &mask) {
  at::Tensor count = (mask != 0).sum();
  at::Tensor loss = token_losses.sum() / count;
  c10d::AllreduceOptions opts;
  opts.reduceOp = c10d::ReduceOp::AVG;
  std::vector<at::Tensor> tensors = {loss};
  pg->allreduce(tensors, opts)->wait(); // expect: uncompensated-mean
}

void tp_c10d_gradients_of_a_mean_loss(c10::intrusive_ptr<ProcessGroup> pg, const at::Tensor &logits,
                                      const at::Tensor &targets, at::Tensor &weight) {
  at::Tensor loss = at::cross_entropy(logits, targets).mean(); // this rank's items only
  loss.backward();
  std::vector<at::Tensor> grads{weight.grad()};
  pg->allreduce(grads, {c10d::ReduceOp::AVG})->wait(); // expect: uncompensated-mean
}

void tp_c10d_sum_then_divide_by_world_size(c10::intrusive_ptr<ProcessGroup> pg,
                                           const at::Tensor &token_losses, int64_t n_tokens) {
  at::Tensor loss = token_losses.sum() / n_tokens;
  std::vector<at::Tensor> tensors{loss};
  pg->allreduce(tensors)->wait(); // expect: note:uncompensated-mean
  loss.div_(pg->getSize());
}

// DDP's default communication hook: each rank divides by the world size, then SUM.
void tp_c10d_ddp_hook_divides_by_world_size_before_sum(c10::intrusive_ptr<ProcessGroup> pg,
                                                       at::Tensor logits, at::Tensor targets) {
  at::Tensor loss = at::cross_entropy(logits, targets).mean();
  loss.backward();
  at::Tensor grad = loss.grad();
  grad.div_(pg->getSize());
  std::vector<at::Tensor> tensors{grad};
  pg->allreduce(tensors)->wait(); // expect: uncompensated-mean
}

void tp_c10d_masked_count(c10::intrusive_ptr<ProcessGroup> pg, const at::Tensor &token_losses,
                          const at::Tensor &targets) {
  at::Tensor valid = (targets != -100).sum();
  at::Tensor loss = token_losses.sum() / valid;
  std::vector<at::Tensor> tensors{loss};
  c10d::AllreduceOptions average{c10d::ReduceOp::AVG};
  pg->allreduce(tensors, average); // expect: uncompensated-mean
}

void tp_c10d_premul_sum_by_inverse_world_size(c10::intrusive_ptr<ProcessGroup> pg,
                                              const at::Tensor &token_losses, long n_valid) {
  int world_size = pg->getSize();
  at::Tensor loss = token_losses.sum() / n_valid;
  c10d::AllreduceOptions opts;
  opts.reduceOp = c10d::makeNCCLPreMulSum(1.0 / world_size);
  std::vector<at::Tensor> tensors{loss};
  pg->allreduce(tensors, opts)->wait(); // expect: note:uncompensated-mean
}

void tp_c10d_derived_process_group(c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl,
                                   const at::Tensor &token_losses) {
  at::Tensor loss = token_losses.mean();
  std::vector<at::Tensor> tensors{loss};
  nccl->allreduce(tensors, c10d::AllreduceOptions{c10d::ReduceOp::AVG}); // expect: uncompensated-mean
}

void tn_c10d_sum_divided_by_all_reduced_count(c10::intrusive_ptr<ProcessGroup> pg,
                                              const at::Tensor &token_losses,
                                              const at::Tensor &targets) {
  at::Tensor loss_sum = token_losses.sum();
  at::Tensor count = (targets != -100).sum();
  std::vector<at::Tensor> sums{loss_sum, count};
  pg->allreduce(sums)->wait(); // SUM
  long N = count.item<long>();
  at::Tensor loss = loss_sum / (N > 0 ? N : 1);
  loss.backward();
}

void tn_c10d_local_mean_scaled_by_p_n_over_N(c10::intrusive_ptr<ProcessGroup> pg,
                                             const at::Tensor &token_losses,
                                             const at::Tensor &targets) {
  at::Tensor n = (targets != -100).sum();
  at::Tensor local_mean = token_losses.sum() / n;
  at::Tensor N = n.clone();
  std::vector<at::Tensor> counts{N};
  pg->allreduce(counts)->wait();
  int world_size = pg->getSize();
  at::Tensor scale = n * world_size / N.clamp_min(1); // P * n / N
  at::Tensor weighted = local_mean * scale;
  std::vector<at::Tensor> tensors{weighted};
  pg->allreduce(tensors, c10d::AllreduceOptions{c10d::ReduceOp::AVG})->wait();
}

void tn_c10d_per_token_sum_with_sum_reducer(c10::intrusive_ptr<ProcessGroup> pg,
                                            const at::Tensor &token_losses) {
  at::Tensor loss_sum = token_losses.sum();
  std::vector<at::Tensor> tensors{loss_sum};
  pg->allreduce(tensors, c10d::AllreduceOptions{c10d::ReduceOp::SUM})->wait();
}

void tn_c10d_global_value_averaged_again(c10::intrusive_ptr<ProcessGroup> pg,
                                         const at::Tensor &token_losses) {
  at::Tensor loss_sum = token_losses.sum();
  std::vector<at::Tensor> sums{loss_sum};
  pg->allreduce(sums)->wait();
  std::vector<at::Tensor> again{loss_sum}; // already the same on every rank
  pg->allreduce(again, c10d::AllreduceOptions{c10d::ReduceOp::AVG})->wait();
}

void tn_c10d_broadcast_from_root(c10::intrusive_ptr<ProcessGroup> pg,
                                 const at::Tensor &token_losses) {
  at::Tensor loss = token_losses.mean();
  std::vector<at::Tensor> tensors{loss};
  pg->broadcast(tensors)->wait();
}

void tn_c10d_local_sum_over_global_count_divided_by_world_size(
    c10::intrusive_ptr<ProcessGroup> pg, const at::Tensor &token_losses,
    const at::Tensor &targets) {
  at::Tensor N = (targets != -100).sum();
  std::vector<at::Tensor> counts{N};
  pg->allreduce(counts)->wait();
  int world_size = pg->getSize();
  at::Tensor loss = token_losses.sum() * world_size / N.clamp_min(1); // P / N
  loss.div_(world_size);                                             // then 1/P: 1/N in all
  std::vector<at::Tensor> tensors{loss};
  pg->allreduce(tensors)->wait();
}
