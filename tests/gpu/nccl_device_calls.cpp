// NCCL on device buffers, for the GPU check (tests/gpu/README.md): one process, a one-rank
// communicator, every kind of call the tracer records from NCCL jobs. Two modes:
//
//   nccl_device_calls results MANIFEST
//     runs the calls, writes one line per call to MANIFEST (what it asked NCCL for, in the names
//     `collcheck dump` uses) and prints the bytes of every result as hex on stdout, so that a
//     traced and an untraced run can be compared byte for byte;
//   nccl_device_calls cost CALLS
//     times CALLS host enqueues of ncclAllReduce as linked (the tracer's wrapper when it is
//     preloaded) against as many of NVIDIA's own entry point, in alternating batches between
//     stream synchronizations: 1,024 floats (a plain call) and 1 float (a count reduction, whose
//     values the tracer copies on the stream).
//
// Built with COLLCHECK_GPU_CHECK_ON_DOUBLES (tests/CMakeLists.txt), it runs against the NCCL test
// double and the CUDA driver test double, so that the suite checks this program and its checker
// on machines without a GPU; on a GPU machine tests/gpu/run.sh builds it against CUDA and NVIDIA's
// NCCL.
#include <nccl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

#ifdef COLLCHECK_GPU_CHECK_ON_DOUBLES
extern "C" void *collcheckTestDeviceAlloc(size_t bytes);
extern "C" void collcheckTestStreamDrain(void *stream);
#endif

namespace {

[[noreturn]] void die(const char *what, const char *why) {
  std::fprintf(stderr, "nccl_device_calls: %s: %s\n", what, why);
  std::exit(1);
}

void check(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    die(what, ncclGetErrorString(r));
}

// Device memory and one stream: CUDA's, or the driver double's host-memory stand-ins.
class Device {
public:
  Device() {
#ifdef COLLCHECK_GPU_CHECK_ON_DOUBLES
    stream_ = reinterpret_cast<cudaStream_t>(0x10);
#else
    cuda(cudaSetDevice(0), "cudaSetDevice");
    cuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
#endif
  }
  cudaStream_t stream() const { return stream_; }
  void *alloc(size_t bytes) {
#ifdef COLLCHECK_GPU_CHECK_ON_DOUBLES
    return collcheckTestDeviceAlloc(bytes);
#else
    void *p = nullptr;
    cuda(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
#endif
  }
  void put(void *device, const void *host, size_t bytes) {
    sync();
#ifdef COLLCHECK_GPU_CHECK_ON_DOUBLES
    std::memcpy(device, host, bytes);
#else
    cuda(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
#endif
  }
  void get(void *host, const void *device, size_t bytes) {
    sync();
#ifdef COLLCHECK_GPU_CHECK_ON_DOUBLES
    std::memcpy(host, device, bytes);
#else
    cuda(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
#endif
  }
  void sync() {
#ifdef COLLCHECK_GPU_CHECK_ON_DOUBLES
    collcheckTestStreamDrain(stream_);
#else
    cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
#endif
  }

private:
#ifndef COLLCHECK_GPU_CHECK_ON_DOUBLES
  static void cuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess)
      die(what, cudaGetErrorString(e));
  }
#endif
  cudaStream_t stream_{};
};

// A device buffer of `count` elements of `bytesEach`, filled from a pattern that differs per call.
struct Buffer {
  void *data;
  size_t count, bytesEach;
  char *at(size_t element) const { return static_cast<char *>(data) + element * bytesEach; }
};

class Calls {
public:
  Calls(Device &device, FILE *manifest) : device_(device), manifest_(manifest) {}

  Buffer floats(size_t count, float first, float step) {
    std::vector<float> host(count);
    for (size_t i = 0; i < count; ++i)
      host[i] = first + step * static_cast<float>(i);
    return upload(host);
  }
  template <typename T> Buffer upload(const std::vector<T> &host) {
    Buffer b{device_.alloc(host.size() * sizeof(T)), host.size(), sizeof(T)};
    device_.put(b.data, host.data(), host.size() * sizeof(T));
    return b;
  }
  Buffer zeros(size_t count, size_t bytesEach) {
    std::vector<char> host(count * bytesEach, 0);
    Buffer b{device_.alloc(host.size()), count, bytesEach};
    device_.put(b.data, host.data(), host.size());
    return b;
  }

  // One manifest line: kind count dtype op root-or-peer in_place [scalar].
  void expect(const char *kind, size_t count, const char *dtype, const char *op, int rootOrPeer,
              bool inPlace, const char *scalar = nullptr) {
    std::fprintf(manifest_, "%s %zu %s %s %d %d%s%s\n", kind, count, dtype, op, rootOrPeer,
                 inPlace ? 1 : 0, scalar ? " " : "", scalar ? scalar : "");
  }
  // Prints a result's bytes: the traced and the untraced run must print the same.
  void show(const char *label, const Buffer &b) {
    std::vector<unsigned char> host(b.count * b.bytesEach);
    device_.get(host.data(), b.data, host.size());
    std::printf("%s", label);
    for (size_t i = 0; i < host.size(); ++i)
      std::printf("%s%02x", i % 32 == 0 ? "\n  " : "", host[i]);
    std::printf("\n");
  }
  cudaStream_t stream() const { return device_.stream(); }

private:
  Device &device_;
  FILE *manifest_;
};

void results(Device &device, ncclComm_t comm, FILE *manifest) {
  Calls c(device, manifest);
  cudaStream_t s = c.stream();

  Buffer in = c.floats(1024, -100.0f, 0.5f), out = c.zeros(1024, 4);
  check(ncclAllReduce(in.data, out.data, 1024, ncclFloat32, ncclSum, comm, s), "sum");
  c.expect("allreduce", 1024, "float32", "sum", -1, false);
  c.show("allreduce sum float32", out);

  Buffer avg = c.floats(1024, 3.0f, 0.25f);
  check(ncclAllReduce(avg.data, avg.data, 1024, ncclFloat32, ncclAvg, comm, s), "avg");
  c.expect("allreduce", 1024, "float32", "avg", -1, true);
  c.show("allreduce avg float32 in place", avg);

  // PreMulSum with a host scalar: the tracer records the scalar.
  float quarter = 0.25f;
  ncclRedOp_t hostOp;
  check(ncclRedOpCreatePreMulSum(&hostOp, &quarter, ncclFloat32, ncclScalarHostImmediate, comm),
        "premulsum create (host scalar)");
  Buffer pre = c.zeros(1024, 4);
  check(ncclAllReduce(in.data, pre.data, 1024, ncclFloat32, hostOp, comm, s), "premulsum host");
  c.expect("allreduce", 1024, "float32", "premulsum", -1, false, "0.25");
  c.show("allreduce premulsum(0.25) float32", pre);
  check(ncclRedOpDestroy(hostOp, comm), "premulsum destroy (host scalar)");

  // PreMulSum with a device scalar: its value is not known on the host when the call is made.
  Buffer scalar = c.upload(std::vector<double>{2.0});
  ncclRedOp_t deviceOp;
  check(ncclRedOpCreatePreMulSum(&deviceOp, scalar.data, ncclFloat64, ncclScalarDevice, comm),
        "premulsum create (device scalar)");
  std::vector<double> doubles(256);
  for (size_t i = 0; i < doubles.size(); ++i)
    doubles[i] = 1.0 / static_cast<double>(i + 1);
  Buffer d = c.upload(doubles), dOut = c.zeros(256, 8);
  check(ncclAllReduce(d.data, dOut.data, 256, ncclFloat64, deviceOp, comm, s), "premulsum device");
  c.expect("allreduce", 256, "float64", "premulsum", -1, false, "unknown");
  c.show("allreduce premulsum(device 2.0) float64", dOut);
  check(ncclRedOpDestroy(deviceOp, comm), "premulsum destroy (device scalar)");

  std::vector<int32_t> ints(512);
  for (size_t i = 0; i < ints.size(); ++i)
    ints[i] = static_cast<int32_t>(i * 7919 % 1000) - 500;
  Buffer iv = c.upload(ints), iMax = c.zeros(512, 4);
  check(ncclAllReduce(iv.data, iMax.data, 512, ncclInt32, ncclMax, comm, s), "max");
  c.expect("allreduce", 512, "int32", "max", -1, false);
  c.show("allreduce max int32", iMax);

  Buffer bOut = c.zeros(512, 4);
  check(ncclBroadcast(iv.data, bOut.data, 512, ncclInt32, 0, comm, s), "broadcast");
  c.expect("broadcast", 512, "int32", "none", 0, false);
  c.show("broadcast int32 root 0", bOut);

  Buffer bytes = c.upload(std::vector<int8_t>(100, 42));
  check(ncclBcast(bytes.data, 100, ncclInt8, 0, comm, s), "bcast");
  c.expect("broadcast", 100, "int8", "none", 0, true);
  c.show("bcast int8 root 0 in place", bytes);

  Buffer r = c.upload(doubles), rOut = c.zeros(256, 8);
  check(ncclReduce(r.data, rOut.data, 256, ncclFloat64, ncclSum, 0, comm, s), "reduce");
  c.expect("reduce", 256, "float64", "sum", 0, false);
  c.show("reduce sum float64 root 0", rOut);

  // One rank: the gathered whole is this rank's block, and so is the scattered part.
  Buffer g = c.floats(256, 1.0f, 1.0f), gOut = c.zeros(256, 4);
  check(ncclAllGather(g.data, gOut.data, 256, ncclFloat32, comm, s), "allgather");
  c.expect("allgather", 256, "float32", "none", -1, false);
  c.show("allgather float32", gOut);
  Buffer gIn = c.floats(256, 9.0f, -1.0f);
  check(ncclAllGather(gIn.data, gIn.data, 256, ncclFloat32, comm, s), "allgather in place");
  c.expect("allgather", 256, "float32", "none", -1, true);
  c.show("allgather float32 in place", gIn);

  Buffer rs = c.floats(256, -3.0f, 0.125f), rsOut = c.zeros(256, 4);
  check(ncclReduceScatter(rs.data, rsOut.data, 256, ncclFloat32, ncclSum, comm, s),
        "reducescatter");
  c.expect("reduce_scatter", 256, "float32", "sum", -1, false);
  c.show("reduce_scatter sum float32", rsOut);
  check(ncclReduceScatter(rs.data, rs.data, 256, ncclFloat32, ncclMin, comm, s),
        "reducescatter in place");
  c.expect("reduce_scatter", 256, "float32", "min", -1, true);
  c.show("reduce_scatter min float32 in place", rs);

  // A group of two reductions in 16-bit types, then a send to and a receive from itself.
  Buffer h = c.upload(std::vector<uint16_t>(64, 0x3c00)),
         bf = c.upload(std::vector<uint16_t>(64, 0x3f80));
  check(ncclGroupStart(), "group start");
  check(ncclAllReduce(h.data, h.data, 64, ncclFloat16, ncclSum, comm, s), "float16 sum");
  check(ncclAllReduce(bf.data, bf.data, 64, ncclBfloat16, ncclProd, comm, s), "bfloat16 prod");
  check(ncclGroupEnd(), "group end");
  c.expect("allreduce", 64, "float16", "sum", -1, true);
  c.expect("allreduce", 64, "bfloat16", "prod", -1, true);
  c.show("allreduce sum float16 (grouped)", h);
  c.show("allreduce prod bfloat16 (grouped)", bf);

  Buffer sent = c.floats(128, 0.0f, 2.0f), received = c.zeros(128, 4);
  check(ncclGroupStart(), "group start");
  check(ncclSend(sent.data, 128, ncclFloat32, 0, comm, s), "send");
  check(ncclRecv(received.data, 128, ncclFloat32, 0, comm, s), "recv");
  check(ncclGroupEnd(), "group end");
  c.expect("send", 128, "float32", "none", 0, false);
  c.expect("recv", 128, "float32", "none", 0, false);
  c.show("recv float32 from self", received);

  // Count reductions: sums of at most four elements, whose values the tracer copies from device
  // memory on the stream (value_capture records, input and output).
  Buffer one = c.upload(std::vector<float>{37.0f}), oneOut = c.zeros(1, 4);
  check(ncclAllReduce(one.data, oneOut.data, 1, ncclFloat32, ncclSum, comm, s), "count float");
  c.expect("allreduce", 1, "float32", "sum", -1, false);
  c.show("count reduction float32", oneOut);
  Buffer two = c.upload(std::vector<double>{3.5, 8.0}), twoOut = c.zeros(2, 8);
  check(ncclAllReduce(two.data, twoOut.data, 2, ncclFloat64, ncclSum, comm, s), "count double");
  c.expect("allreduce", 2, "float64", "sum", -1, false);
  c.show("count reduction float64", twoOut);
  Buffer n = c.upload(std::vector<int64_t>{12}), nOut = c.zeros(1, 8);
  check(ncclAllReduce(n.data, nOut.data, 1, ncclInt64, ncclSum, comm, s), "count int64");
  c.expect("allreduce", 1, "int64", "sum", -1, false);
  c.show("count reduction int64", nOut);
  device.sync();
}

using AllReduceFunction = ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t,
                                           ncclRedOp_t, ncclComm_t, cudaStream_t);

// Nanoseconds per call of `f` over one batch of `calls` enqueues: the host's time in the calls,
// and the time until the stream has run them all (drained after the timed enqueues, so that the
// queue never fills and the first figure is the host's work alone).
struct BatchCost {
  double host, completion;
};
BatchCost batchCost(Device &device, AllReduceFunction f, ncclComm_t comm, const Buffer &in,
                    const Buffer &out, int calls) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i)
    check(f(in.data, out.data, in.count, ncclFloat32, ncclSum, comm, device.stream()), "allreduce");
  auto enqueued = std::chrono::steady_clock::now();
  device.sync();
  auto done = std::chrono::steady_clock::now();
  return {std::chrono::duration<double, std::nano>(enqueued - start).count() / calls,
          std::chrono::duration<double, std::nano>(done - start).count() / calls};
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

// The host cost of ncclAllReduce as this program links it (the tracer's wrapper when the tracer
// is preloaded) against NVIDIA's own entry point looked up in libnccl itself, in alternating
// batches of one process: the paired differences are the tracer's cost per call. Without the
// tracer both are the same function, and the differences show the method's noise.
void compareCosts(Device &device, ncclComm_t comm, const char *label, const Buffer &in,
                  const Buffer &out, long calls, AllReduceFunction direct) {
  constexpr int kBatch = 50;
  AllReduceFunction linked = &ncclAllReduce;
  std::vector<double> linkedCost, directCost, difference, linkedDone, directDone;
  batchCost(device, linked, comm, in, out, kBatch); // warm-up
  batchCost(device, direct, comm, in, out, kBatch);
  for (long done = 0; done < calls; done += kBatch) {
    BatchCost l = batchCost(device, linked, comm, in, out, kBatch);
    BatchCost d = batchCost(device, direct, comm, in, out, kBatch);
    linkedCost.push_back(l.host);
    directCost.push_back(d.host);
    difference.push_back(l.host - d.host);
    linkedDone.push_back(l.completion);
    directDone.push_back(d.completion);
  }
  std::printf("%s: host time per call: linked %.1f ns, direct %.1f ns, difference median %.1f ns "
              "(10th-90th percentile %.1f to %.1f) over %zu batches of %d; until the stream ran "
              "them: linked %.1f ns, direct %.1f ns per call\n",
              label, percentile(linkedCost, 0.5), percentile(directCost, 0.5),
              percentile(difference, 0.5), percentile(difference, 0.1), percentile(difference, 0.9),
              difference.size(), kBatch, percentile(linkedDone, 0.5), percentile(directDone, 0.5));
}

void cost(Device &device, ncclComm_t comm, long calls) {
  void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  auto direct =
      library ? reinterpret_cast<AllReduceFunction>(dlsym(library, "ncclAllReduce")) : nullptr;
  if (!direct)
    die("libnccl.so.2", "ncclAllReduce not found in the loaded library");
  std::printf("ncclAllReduce is %s\n", direct == &ncclAllReduce
                                           ? "NCCL's own (nothing preloaded)"
                                           : "interposed (the tracer is preloaded)");
  Calls c(device, nullptr);
  Buffer big = c.floats(1024, 1.0f, 0.0f), bigOut = c.zeros(1024, 4);
  Buffer one = c.floats(1, 1.0f, 0.0f), oneOut = c.zeros(1, 4);
  compareCosts(device, comm, "allreduce of 1024 floats", big, bigOut, calls, direct);
  compareCosts(device, comm, "allreduce of 1 float (a count reduction)", one, oneOut, calls,
               direct);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3 || (std::strcmp(argv[1], "results") != 0 && std::strcmp(argv[1], "cost") != 0)) {
    std::fprintf(stderr, "usage: nccl_device_calls results MANIFEST | cost CALLS\n");
    return 2;
  }
  int version = 0;
  check(ncclGetVersion(&version), "ncclGetVersion");
  std::fprintf(stderr, "nccl_device_calls: NCCL version code %d\n", version);
  Device device;
  ncclComm_t comm;
  int devices[] = {0};
  check(ncclCommInitAll(&comm, 1, devices), "ncclCommInitAll");
  if (std::strcmp(argv[1], "results") == 0) {
    FILE *manifest = std::fopen(argv[2], "w");
    if (!manifest)
      die(argv[2], std::strerror(errno));
    results(device, comm, manifest);
    std::fclose(manifest);
  } else {
    cost(device, comm, std::atol(argv[2]));
  }
  check(ncclCommDestroy(comm), "ncclCommDestroy");
  return 0;
}
