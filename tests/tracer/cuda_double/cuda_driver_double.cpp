// A test double of the four CUDA driver entry points the tracer's device capture uses, for tests
// only, on machines without a GPU. "Device memory" is host memory allocated through
// collcheckTestDeviceAlloc; each stream is a worker thread that runs its operations in order, later
// than they were enqueued (so a caller that read the buffer synchronously, or waited, would be
// caught). It is not CUDA and is never installed.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::mutex allocationsMutex;
std::map<uintptr_t, size_t> deviceAllocations; // start -> bytes

bool isDevice(uintptr_t pointer) {
  std::lock_guard<std::mutex> lock(allocationsMutex);
  auto it = deviceAllocations.upper_bound(pointer);
  if (it == deviceAllocations.begin())
    return false;
  --it;
  return pointer < it->first + it->second;
}

class Stream {
public:
  Stream() : worker_([this] { run(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }
  void enqueue(std::function<void()> operation) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(operation));
      ++enqueued_;
    }
    wake_.notify_all();
  }
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return completed_ == enqueued_; });
  }

private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      std::function<void()> operation = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the "GPU" is behind the host
      operation();
      lock.lock();
      ++completed_;
      done_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<std::function<void()>> queue_;
  uint64_t enqueued_ = 0, completed_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

std::mutex streamsMutex;
std::map<void *, Stream *> streams;

Stream &streamOf(void *handle) {
  std::lock_guard<std::mutex> lock(streamsMutex);
  Stream *&stream = streams[handle];
  if (!stream)
    stream = new Stream(); // lives until exit: host functions may run during teardown
  return *stream;
}

} // namespace

EXPORT void *collcheckTestDeviceAlloc(size_t bytes) {
  void *memory = std::calloc(1, bytes);
  std::lock_guard<std::mutex> lock(allocationsMutex);
  deviceAllocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  return memory;
}

EXPORT void collcheckTestStreamDrain(void *stream) { streamOf(stream).drain(); }

// CU_POINTER_ATTRIBUTE_MEMORY_TYPE (2) only: CU_MEMORYTYPE_DEVICE (2) for test device memory,
// CUDA_ERROR_INVALID_VALUE (1) for memory the "driver" does not know, as the real one answers.
EXPORT int cuPointerGetAttribute(void *data, int attribute, uintptr_t pointer) {
  if (attribute != 2)
    return 1;
  if (!isDevice(pointer))
    return 1;
  *static_cast<unsigned *>(data) = 2;
  return 0;
}

EXPORT int cuMemHostAlloc(void **pointer, size_t bytes, unsigned) {
  *pointer = std::calloc(1, bytes);
  return *pointer ? 0 : 2;
}

EXPORT int cuMemcpyDtoHAsync_v2(void *dst, uintptr_t src, size_t bytes, void *stream) {
  if (!isDevice(src))
    return 1;
  streamOf(stream).enqueue([=] { std::memcpy(dst, reinterpret_cast<const void *>(src), bytes); });
  return 0;
}

std::atomic<int> hostFunctions{0};

EXPORT int cuLaunchHostFunc(void *stream, void (*fn)(void *), void *userData) {
  hostFunctions.fetch_add(1, std::memory_order_relaxed);
  streamOf(stream).enqueue([=] { fn(userData); });
  return 0;
}

// How many host functions were enqueued: each one holds a real stream until the host has run it.
EXPORT int collcheckTestHostFunctions() { return hostFunctions.load(std::memory_order_relaxed); }
