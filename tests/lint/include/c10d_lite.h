// A small stand-in for the parts of libtorch the corpus uses: at::Tensor and the c10d process
// group API, spelled as in libtorch (c10d::ProcessGroup::allreduce, c10d::ReduceOp::AVG,
// c10d::AllreduceOptions, c10d::makeNCCLPreMulSum). Declarations only: the corpus is parsed, never
// linked.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace c10 {
template <class T> class intrusive_ptr {
public:
  T *operator->() const;
  T &operator*() const;
  T *get() const;
};
} // namespace c10

namespace at {

enum class ScalarType { Float, Double, Long, Bool };
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kLong = ScalarType::Long;

class Scalar {
public:
  Scalar(double value);
  Scalar(int value);
  Scalar(long value);
  Scalar(long long value);
};

class Tensor {
public:
  Tensor();
  Tensor sum() const;
  Tensor mean() const;
  Tensor to(ScalarType type) const;
  Tensor detach() const;
  Tensor clone() const;
  template <class T> T item() const;
  int64_t numel() const;
  int64_t size(int64_t dim) const;
  Tensor div(const Tensor &other) const;
  Tensor div(const Scalar &other) const;
  Tensor mul(const Tensor &other) const;
  Tensor mul(const Scalar &other) const;
  Tensor &div_(const Tensor &other);
  Tensor &div_(const Scalar &other);
  Tensor &mul_(const Tensor &other);
  Tensor &mul_(const Scalar &other);
  Tensor &zero_();
  Tensor clamp_min(const Scalar &min) const;
  Tensor &operator/=(const Tensor &other);
  Tensor &operator/=(const Scalar &other);
  Tensor &operator*=(const Tensor &other);
  Tensor &operator*=(const Scalar &other);
  void backward() const;
  Tensor grad() const;
};

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Scalar &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Scalar &b);
Tensor operator!=(const Tensor &a, const Scalar &b);
Tensor operator==(const Tensor &a, const Scalar &b);
Tensor operator>(const Tensor &a, const Scalar &b);

Tensor zeros(std::vector<int64_t> shape);
Tensor scalar_tensor(const Scalar &value);
Tensor cross_entropy(const Tensor &logits, const Tensor &targets); // per-item losses

} // namespace at

namespace torch {
using at::Tensor;
} // namespace torch

namespace c10d {

constexpr auto kUnsetTimeout = std::chrono::milliseconds(-1);

struct ReduceOp {
  enum RedOpType : uint8_t {
    SUM = 0,
    AVG = 1,
    PRODUCT = 2,
    MIN = 3,
    MAX = 4,
    BAND = 5,
    BOR = 6,
    BXOR = 7,
    PREMUL_SUM = 8,
    UNUSED = 9
  };
  ReduceOp() = default;
  ReduceOp(RedOpType op) : op_(op) {}
  RedOpType op_ = SUM;
};

template <typename T> ReduceOp makeNCCLPreMulSum(const T &factor);

struct AllreduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ReduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  int64_t rootRank = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct BroadcastOptions {
  int64_t rootRank = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ReduceScatterOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct AllgatherOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct BarrierOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

class Work {
public:
  virtual ~Work();
  virtual bool wait(std::chrono::milliseconds timeout = kUnsetTimeout);
};

class ProcessGroup {
public:
  virtual ~ProcessGroup();
  int getRank() const;
  int getSize() const;
  virtual c10::intrusive_ptr<Work> allreduce(std::vector<at::Tensor> &tensors,
                                             const AllreduceOptions &opts = AllreduceOptions());
  virtual c10::intrusive_ptr<Work> reduce(std::vector<at::Tensor> &tensors,
                                          const ReduceOptions &opts = ReduceOptions());
  virtual c10::intrusive_ptr<Work> broadcast(std::vector<at::Tensor> &tensors,
                                             const BroadcastOptions &opts = BroadcastOptions());
  virtual c10::intrusive_ptr<Work>
  reduce_scatter(std::vector<at::Tensor> &outputTensors,
                 std::vector<std::vector<at::Tensor>> &inputTensors,
                 const ReduceScatterOptions &opts = ReduceScatterOptions());
  virtual c10::intrusive_ptr<Work> allgather(std::vector<std::vector<at::Tensor>> &outputTensors,
                                             std::vector<at::Tensor> &inputTensors,
                                             const AllgatherOptions &opts = AllgatherOptions());
  virtual c10::intrusive_ptr<Work> barrier(const BarrierOptions &opts = BarrierOptions());
};

class ProcessGroupNCCL : public ProcessGroup {
public:
  c10::intrusive_ptr<Work> allreduce(std::vector<at::Tensor> &tensors,
                                     const AllreduceOptions &opts = AllreduceOptions()) override;
};

} // namespace c10d
