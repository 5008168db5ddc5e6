// Collectives over the NCCL API. Built against the collcheck NCCL test double in the test tree
// (host memory, no GPU); with COLLCHECK_EXAMPLE_CUDA the buffers live in device memory and the
// trainer runs against NVIDIA's NCCL on a GPU machine.
#include "collectives.h"

#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef COLLCHECK_EXAMPLE_CUDA
#include <cuda_runtime.h>
#endif

namespace collcheck::example {
namespace {

#ifdef COLLCHECK_EXAMPLE_CUDA
void checkCuda(cudaError_t result, const char *what) {
  if (result != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(result));
}

// `count` elements of T in device memory, copied in and out around each collective.
template <typename T> class DeviceBuffer {
public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    checkCuda(cudaMalloc(&device_, count * sizeof(T)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(device_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  T *data() { return device_; }
  void upload(const T *host, cudaStream_t stream) {
    checkCuda(cudaMemcpyAsync(device_, host, count_ * sizeof(T), cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync");
  }
  void download(T *host, cudaStream_t stream) {
    checkCuda(cudaMemcpyAsync(host, device_, count_ * sizeof(T), cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync");
    checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }

private:
  std::size_t count_;
  T *device_ = nullptr;
};
#else
// Without CUDA the "device" buffer is the host memory itself: the test double reads host memory.
template <typename T> class DeviceBuffer {
public:
  explicit DeviceBuffer(std::size_t count) : host_(count) {}
  T *data() { return host_.data(); }
  void upload(const T *host, cudaStream_t) { std::copy(host, host + host_.size(), host_.begin()); }
  void download(T *host, cudaStream_t) { std::copy(host_.begin(), host_.end(), host); }

private:
  std::vector<T> host_;
};
#endif

class NcclCollectives final : public Collectives {
public:
  NcclCollectives() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
#ifdef COLLCHECK_EXAMPLE_CUDA
    selectLocalDevice();
    checkCuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
#endif
    ncclUniqueId id;
    if (rank_ == 0)
      check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    check(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ~NcclCollectives() override {
    ncclCommDestroy(comm_);
#ifdef COLLCHECK_EXAMPLE_CUDA
    cudaStreamDestroy(stream_);
#endif
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::int64_t sumCounts(std::int64_t localCount) override { return sum(localCount, ncclInt64); }
  double sumFloatCounts(double localCount) override { return sum(localCount, ncclFloat64); }

  void reduceGradient(std::vector<double> &gradient, Reducer reducer,
                      double preMulSumFactor) override {
    DeviceBuffer<double> buffer(gradient.size());
    buffer.upload(gradient.data(), stream_);
    ncclRedOp_t op = reducer == Reducer::average ? ncclAvg : ncclSum;
    if (reducer == Reducer::preMulSum)
      check(ncclRedOpCreatePreMulSum(&op, &preMulSumFactor, ncclFloat64, ncclScalarHostImmediate,
                                     comm_),
            "ncclRedOpCreatePreMulSum");
    check(ncclAllReduce(buffer.data(), buffer.data(), gradient.size(), ncclFloat64, op, comm_,
                        stream_),
          "ncclAllReduce of the gradient");
    if (reducer == Reducer::preMulSum)
      check(ncclRedOpDestroy(op, comm_), "ncclRedOpDestroy");
    buffer.download(gradient.data(), stream_);
    if (reducer == Reducer::sumThenDivide)
      for (double &component : gradient)
        component /= size_;
  }

private:
  // One rank's count, summed over the ranks.
  template <typename T> T sum(T local, ncclDataType_t type) {
    DeviceBuffer<T> value(1);
    value.upload(&local, stream_);
    check(ncclAllReduce(value.data(), value.data(), 1, type, ncclSum, comm_, stream_),
          "ncclAllReduce of the valid count");
    T global = 0;
    value.download(&global, stream_);
    return global;
  }

  void check(ncclResult_t result, const char *what) const {
    if (result != ncclSuccess)
      throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(result) + " (" +
                               ncclGetLastError(comm_) + ")");
  }
#ifdef COLLCHECK_EXAMPLE_CUDA
  void selectLocalDevice() {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    int localRank = 0, devices = 0;
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_free(&node);
    checkCuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    checkCuda(cudaSetDevice(localRank % devices), "cudaSetDevice");
  }
#endif

  int rank_ = 0;
  int size_ = 1;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr; // the double ignores streams
};

} // namespace

std::unique_ptr<Collectives> makeNcclCollectives() { return std::make_unique<NcclCollectives>(); }

} // namespace collcheck::example
