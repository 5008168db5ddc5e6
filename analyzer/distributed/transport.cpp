#include "transport.h"

#include "clock.h"
#include "launcher_environment.h"
#include "mpi_plugin_abi.h"

#include <dlfcn.h>

#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace collcheck::analyzer::distributed {

namespace {

constexpr const char *kPluginName = "libcollcheck_mpi.so";

struct Plugin {
  decltype(&collcheck_mpi_abi_version) abiVersion = nullptr;
  decltype(&collcheck_mpi_init) init = nullptr;
  decltype(&collcheck_mpi_rank) rank = nullptr;
  decltype(&collcheck_mpi_size) size = nullptr;
  decltype(&collcheck_mpi_gather) gather = nullptr;
  decltype(&collcheck_mpi_broadcast) broadcast = nullptr;
  decltype(&collcheck_mpi_send) send = nullptr;
  decltype(&collcheck_mpi_probe) probe = nullptr;
  decltype(&collcheck_mpi_receive) receive = nullptr;
  decltype(&collcheck_mpi_barrier_start) barrierStart = nullptr;
  decltype(&collcheck_mpi_barrier_test) barrierTest = nullptr;
  decltype(&collcheck_mpi_finalize) finalize = nullptr;
  decltype(&collcheck_mpi_abort) abort = nullptr;
  decltype(&collcheck_mpi_last_error) lastError = nullptr;
};

template <typename Function>
bool bind(void *handle, const char *name, Function &function, std::string &missing) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (!function)
    missing += missing.empty() ? name : std::string(", ") + name;
  return function != nullptr;
}

struct Collected {
  std::vector<std::string> parts;
  std::exception_ptr error;
};

// Called from the plugin (C), so nothing may escape; the first failure is rethrown afterwards.
void *place(void *ctx, int rank, uint64_t bytes) noexcept {
  auto &collected = *static_cast<Collected *>(ctx);
  if (collected.error || rank < 0 || static_cast<size_t>(rank) >= collected.parts.size() ||
      bytes == 0)
    return nullptr;
  try {
    std::string &part = collected.parts[static_cast<size_t>(rank)];
    part.resize(bytes);
    return part.data();
  } catch (...) {
    collected.error = std::current_exception();
    return nullptr;
  }
}

// One thread makes every MPI call, from MPI_Init to MPI_Finalize (MPI wants both on one thread).
// MPI_Init takes a few tenths of a second; started first, it runs while this process reads its
// share, which needs only the rank and size its launcher already put in the environment.
class MpiThread {
public:
  explicit MpiThread(Plugin plugin) : plugin_(plugin), thread_([this] { work(); }) {}
  ~MpiThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  // Runs `task` on the MPI thread once MPI is initialized; false when initialization failed.
  bool run(const std::function<void()> &task) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return initialized_; });
    if (initRc_ != 0)
      return false;
    task_ = &task;
    wake_.notify_all();
    done_.wait(lock, [&] { return task_ == nullptr; });
    return true;
  }
  // Whether MPI_Init has returned, and succeeded, without waiting for it.
  bool initializedNow() {
    std::lock_guard<std::mutex> lock(mutex_);
    return initialized_ && initRc_ == 0;
  }
  int initRc() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return initialized_; });
    return initRc_;
  }

private:
  void work() {
    int rc = plugin_.init();
    std::unique_lock<std::mutex> lock(mutex_);
    initRc_ = rc;
    initialized_ = true;
    done_.notify_all();
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || task_ != nullptr; });
      if (task_) {
        (*task_)();
        task_ = nullptr;
        done_.notify_all();
        continue;
      }
      break;
    }
  }
  Plugin plugin_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void()> *task_ = nullptr;
  bool initialized_ = false, stopping_ = false;
  int initRc_ = 0;
  std::thread thread_;
};

class MpiTransport final : public Transport {
public:
  MpiTransport(Plugin plugin, std::string loaded, int rank, int size)
      : plugin_(plugin), loaded_(std::move(loaded)), rank_(rank), size_(size), mpi_(plugin) {}

  // After a failed collective the other processes may wait in it forever, and MPI_Finalize
  // would wait with them: end the whole job instead.
  ~MpiTransport() override {
    mpi_.run([&] {
      if (broken_)
        plugin_.abort(1);
      else
        plugin_.finalize();
    });
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> gather(std::span<const std::string_view> mine) override {
    Collected collected;
    collected.parts.resize(rank_ == 0 ? size_ : 0);
    std::vector<collcheck_mpi_part> parts;
    for (std::string_view part : mine)
      parts.push_back({part.data(), part.size()});
    int rc = 0;
    call([&] { rc = plugin_.gather(parts.data(), parts.size(), &place, &collected); });
    check(rc, "gather");
    if (collected.error)
      std::rethrow_exception(collected.error);
    return std::move(collected.parts);
  }

  int64_t broadcast(int64_t value) override {
    int rc = 0;
    call([&] { rc = plugin_.broadcast(&value); });
    check(rc, "broadcast");
    return value;
  }

  bool started() override { return mpi_.initializedNow(); }

  void send(int dest, int tag, const std::string &bytes) override {
    int rc = 0;
    call([&] { rc = plugin_.send(dest, tag, bytes.data(), bytes.size()); });
    check(rc, "send");
  }

  std::optional<std::pair<int, std::string>> poll(int tag) override {
    int rc = 0, found = 0, source = -1;
    std::string bytes;
    call([&] {
      uint64_t length = 0;
      rc = plugin_.probe(tag, &found, &source, &length);
      if (rc == 0 && found) {
        bytes.resize(length);
        rc = plugin_.receive(source, tag, bytes.data(), length);
      }
    });
    check(rc, "probe or receive");
    if (!found)
      return std::nullopt;
    return std::make_pair(source, std::move(bytes));
  }

  void enterBarrier() override {
    int rc = 0;
    call([&] { rc = plugin_.barrierStart(); });
    check(rc, "barrier");
  }

  bool barrierDone() override {
    int rc = 0, done = 0;
    call([&] { rc = plugin_.barrierTest(&done); });
    check(rc, "barrier");
    return done != 0;
  }

  double transportCpuSeconds() override {
    double seconds = -1;
    call([&] { seconds = format::cpuSeconds(CLOCK_THREAD_CPUTIME_ID); });
    return seconds;
  }

  // Waits for MPI_Init; false with `error` when it failed or disagrees with the environment.
  bool ready(std::string &error) {
    if (mpi_.initRc() != 0) {
      error = "cannot initialize MPI (through " + loaded_ + "): " + plugin_.lastError();
      return false;
    }
    int rank = -1, size = -1;
    mpi_.run([&] {
      rank = plugin_.rank();
      size = plugin_.size();
    });
    if (rank_ < 0) {
      rank_ = rank;
      size_ = size;
    } else if (rank != rank_ || size != size_) {
      error = "MPI says rank " + std::to_string(rank) + " of " + std::to_string(size) +
              ", the launcher's environment rank " + std::to_string(rank_) + " of " +
              std::to_string(size_);
      broken_ = true;
      return false;
    }
    return true;
  }

private:
  void call(const std::function<void()> &task) {
    std::string error;
    if (!checked_ && !(checked_ = ready(error)))
      throw std::runtime_error(error);
    mpi_.run(task);
  }
  void check(int rc, const char *what) {
    if (rc == 0)
      return;
    broken_ = true;
    throw std::runtime_error(std::string("MPI ") + what + " failed: " + plugin_.lastError());
  }

  Plugin plugin_;
  std::string loaded_;
  int rank_;
  int size_;
  bool broken_ = false, checked_ = false;
  MpiThread mpi_;
};

// This process's rank and the job's size as its launcher set them; false when it did not.
bool launcherRank(int &rank, int &size) {
  const std::pair<const char *, const char *> names[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
      {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"}};
  for (const auto &[rankName, sizeName] : names) {
    const char *text = std::getenv(rankName);
    long n = launcherCount(sizeName);
    if (!text || !*text || n <= 0)
      continue;
    char *end = nullptr;
    long r = std::strtol(text, &end, 10);
    if (*end != '\0' || r < 0 || r >= n)
      continue;
    rank = static_cast<int>(r);
    size = static_cast<int>(n);
    return true;
  }
  return false;
}

std::vector<std::string> pluginCandidates(std::string &problem) {
  if (const char *path = std::getenv("COLLCHECK_MPI_PLUGIN"); path && *path)
    return {path};
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    problem = "cannot find the running executable (/proc/self/exe: " + ec.message() + ")";
    return {};
  }
  // The build tree (build/lib), an installed prefix (lib/collcheck), or beside the executable.
  std::filesystem::path dir = exe.parent_path();
  return {(dir / ".." / "lib" / kPluginName).lexically_normal().string(),
          (dir / ".." / "lib" / "collcheck" / kPluginName).lexically_normal().string(),
          (dir / kPluginName).string()};
}

} // namespace

bool launchedAsMpiJob() {
  // Open MPI's mpirun/prterun, PMI launchers (MPICH and Intel MPI's Hydra, srun --mpi=pmi2) and
  // MVAPICH. PMIx has no size variable of its own; its launchers set one of these or Slurm's.
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (launcherCount(name) > 1)
      return true;
  // srun: the step's task count. Not SLURM_NTASKS: a batch script, which runs once, has it too.
  return std::getenv("SLURM_PROCID") && launcherCount("SLURM_STEP_NUM_TASKS") > 1;
}

std::unique_ptr<Transport> connect(std::string &error) {
  std::string problem;
  std::vector<std::string> candidates = pluginCandidates(problem);
  if (candidates.empty()) {
    error = "cannot load the MPI plugin " + std::string(kPluginName) + ": " + problem;
    return nullptr;
  }
  // The plugin is never dlclose'd: libmpi does not support being unloaded (its exit handlers
  // would point into unmapped code).
  void *handle = nullptr;
  std::string loaded;
  std::string tried;
  for (const std::string &path : candidates) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      loaded = path;
      break;
    }
    const char *why = dlerror(); // glibc's message starts with the path
    tried += "\n  " + (why ? std::string(why) : path + ": cannot load");
  }
  if (!handle) {
    error = "cannot load the MPI plugin " + std::string(kPluginName) +
            (candidates.size() == 1 ? " named by COLLCHECK_MPI_PLUGIN"
                                    : " (COLLCHECK_MPI_PLUGIN may name its path)") +
            "; tried:" + tried;
    return nullptr;
  }

  Plugin plugin;
  std::string missing;
  if (!bind(handle, "collcheck_mpi_abi_version", plugin.abiVersion, missing)) {
    error = loaded + " is not a collcheck MPI plugin (no collcheck_mpi_abi_version)";
    return nullptr;
  }
  if (int version = plugin.abiVersion(); version != COLLCHECK_MPI_ABI_VERSION) {
    error = loaded + " has plugin interface version " + std::to_string(version) + ", collcheck " +
            "needs " + std::to_string(COLLCHECK_MPI_ABI_VERSION) + ": it is from another build";
    return nullptr;
  }
  bind(handle, "collcheck_mpi_init", plugin.init, missing);
  bind(handle, "collcheck_mpi_rank", plugin.rank, missing);
  bind(handle, "collcheck_mpi_size", plugin.size, missing);
  bind(handle, "collcheck_mpi_gather", plugin.gather, missing);
  bind(handle, "collcheck_mpi_broadcast", plugin.broadcast, missing);
  bind(handle, "collcheck_mpi_send", plugin.send, missing);
  bind(handle, "collcheck_mpi_probe", plugin.probe, missing);
  bind(handle, "collcheck_mpi_receive", plugin.receive, missing);
  bind(handle, "collcheck_mpi_barrier_start", plugin.barrierStart, missing);
  bind(handle, "collcheck_mpi_barrier_test", plugin.barrierTest, missing);
  bind(handle, "collcheck_mpi_finalize", plugin.finalize, missing);
  bind(handle, "collcheck_mpi_abort", plugin.abort, missing);
  bind(handle, "collcheck_mpi_last_error", plugin.lastError, missing);
  if (!missing.empty()) {
    error = loaded + " lacks " + missing;
    return nullptr;
  }
  int rank = -1, size = -1;
  bool known = launcherRank(rank, size);
  auto transport = std::make_unique<MpiTransport>(plugin, loaded, rank, size);
  // Without the launcher's word on rank and size, they are MPI's: wait for it here.
  if (!known && !transport->ready(error))
    return nullptr;
  return transport;
}

} // namespace collcheck::analyzer::distributed
