#include "tests/nccl_double/src/communicator.h"

#include "tests/nccl_double/src/errors.h"

#include <cstddef>
#include <mutex>
#include <set>

namespace collcheck::nccl_double {
namespace {

struct LiveComms {
  std::mutex mutex;
  std::set<const ncclComm *> handles;
};

LiveComms &liveComms() {
  static LiveComms comms;
  return comms;
}

constexpr unsigned kConfigMagic = 0xcafebeef; // NCCL_CONFIG_INITIALIZER's

} // namespace

ncclComm_t publish(std::unique_ptr<ncclComm> comm) {
  LiveComms &live = liveComms();
  std::lock_guard lock(live.mutex);
  live.handles.insert(comm.get());
  return comm.release();
}

bool retire(ncclComm_t comm) {
  {
    LiveComms &live = liveComms();
    std::lock_guard lock(live.mutex);
    if (live.handles.erase(comm) == 0)
      return false;
  }
  delete comm;
  return true;
}

ncclResult_t checkComm(const ncclComm *comm, const char *caller) {
  LiveComms &live = liveComms();
  std::lock_guard lock(live.mutex);
  if (comm == nullptr || live.handles.count(comm) == 0)
    return fail(ncclInvalidArgument,
                std::string(caller) + ": " +
                    (comm ? "not a live communicator (destroyed?)" : "null communicator"));
  return ncclSuccess;
}

ncclResult_t applyConfig(const ncclConfig_t *config, ncclComm &comm) {
  if (config == nullptr)
    return ncclSuccess;
  if (config->magic != kConfigMagic || config->size < offsetof(ncclConfig_t, cgaClusterSize))
    return fail(ncclInvalidArgument,
                "ncclConfig_t was not initialized with NCCL_CONFIG_INITIALIZER");
  if (config->blocking != NCCL_CONFIG_UNDEF_INT)
    comm.blocking = config->blocking != 0;
  if (config->size >= offsetof(ncclConfig_t, collnetEnable) && config->commName != nullptr)
    comm.name = config->commName;
  return ncclSuccess;
}

} // namespace collcheck::nccl_double
