#include "transport.h"

#include "mpi_plugin_abi.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace collcheck::analyzer::distributed {

namespace {

constexpr const char *kPluginName = "libcollcheck_mpi.so";

// A launcher's process count; 0 when the variable is unset or not a positive number.
long envCount(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  return (*end == '\0' && errno == 0 && value > 0) ? value : 0;
}

struct Plugin {
  decltype(&collcheck_mpi_abi_version) abiVersion = nullptr;
  decltype(&collcheck_mpi_init) init = nullptr;
  decltype(&collcheck_mpi_rank) rank = nullptr;
  decltype(&collcheck_mpi_size) size = nullptr;
  decltype(&collcheck_mpi_gather) gather = nullptr;
  decltype(&collcheck_mpi_broadcast) broadcast = nullptr;
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
void deliver(void *ctx, int rank, const void *data, uint64_t bytes) noexcept {
  auto &collected = *static_cast<Collected *>(ctx);
  if (collected.error || rank < 0 || static_cast<size_t>(rank) >= collected.parts.size())
    return;
  try {
    if (bytes > 0)
      collected.parts[rank].assign(static_cast<const char *>(data), bytes);
  } catch (...) {
    collected.error = std::current_exception();
  }
}

class MpiTransport final : public Transport {
public:
  MpiTransport(Plugin plugin, int rank, int size) : plugin_(plugin), rank_(rank), size_(size) {}

  // After a failed collective the other processes may wait in it forever, and MPI_Finalize
  // would wait with them: end the whole job instead.
  ~MpiTransport() override {
    if (broken_)
      plugin_.abort(1);
    else
      plugin_.finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> gather(const std::string &mine) override {
    Collected collected;
    collected.parts.resize(rank_ == 0 ? size_ : 0);
    check(plugin_.gather(mine.data(), mine.size(), &deliver, &collected), "gather");
    if (collected.error)
      std::rethrow_exception(collected.error);
    return std::move(collected.parts);
  }

  int64_t broadcast(int64_t value) override {
    check(plugin_.broadcast(&value), "broadcast");
    return value;
  }

private:
  void check(int rc, const char *what) {
    if (rc == 0)
      return;
    broken_ = true;
    throw std::runtime_error(std::string("MPI ") + what + " failed: " + plugin_.lastError());
  }

  Plugin plugin_;
  int rank_;
  int size_;
  bool broken_ = false;
};

std::vector<std::string> pluginCandidates(std::string &problem) {
  if (const char *path = std::getenv("COLLCHECK_MPI_PLUGIN"); path && *path)
    return {path};
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    problem = "cannot find the running executable (/proc/self/exe: " + ec.message() + ")";
    return {};
  }
  std::filesystem::path dir = exe.parent_path();
  return {(dir / ".." / "lib" / kPluginName).lexically_normal().string(),
          (dir / kPluginName).string()};
}

} // namespace

bool launchedAsMpiJob() {
  // Open MPI's mpirun/prterun, PMI launchers (MPICH and Intel MPI's Hydra, srun --mpi=pmi2) and
  // MVAPICH. PMIx has no size variable of its own; its launchers set one of these or Slurm's.
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (envCount(name) > 1)
      return true;
  // srun: the step's task count. Not SLURM_NTASKS: a batch script, which runs once, has it too.
  return std::getenv("SLURM_PROCID") && envCount("SLURM_STEP_NUM_TASKS") > 1;
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
  bind(handle, "collcheck_mpi_finalize", plugin.finalize, missing);
  bind(handle, "collcheck_mpi_abort", plugin.abort, missing);
  bind(handle, "collcheck_mpi_last_error", plugin.lastError, missing);
  if (!missing.empty()) {
    error = loaded + " lacks " + missing;
    return nullptr;
  }
  if (plugin.init() != 0) {
    error = "cannot initialize MPI (through " + loaded + "): " + plugin.lastError();
    return nullptr;
  }
  return std::make_unique<MpiTransport>(plugin, plugin.rank(), plugin.size());
}

} // namespace collcheck::analyzer::distributed
