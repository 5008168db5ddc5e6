#include "watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace collcheck::example {
namespace {

long long nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kStallExitCode = 3;

} // namespace

Watchdog::Watchdog(double seconds, int rank) : seconds_(seconds), rank_(rank) {
  if (seconds_ > 0)
    thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stopped_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

Watchdog::Watch::Watch(Watchdog &watchdog, const char *what, int update) : watchdog_(watchdog) {
  watchdog_.update_ = update;
  watchdog_.startedNs_ = nowNs();
  watchdog_.what_ = what;
}

Watchdog::Watch::~Watch() { watchdog_.what_ = nullptr; }

void Watchdog::run() {
  std::unique_lock lock(mutex_);
  while (!stopped_.wait_for(lock, std::chrono::milliseconds(50), [this] { return stop_; })) {
    const char *what = what_;
    if (what == nullptr || double(nowNs() - startedNs_) < seconds_ * 1e9)
      continue;
    std::fprintf(stderr,
                 "collcheck-example-trainer: rank %d stalled %s %d for %g s: some rank stopped "
                 "joining the collectives; exiting\n",
                 rank_, what, int(update_), seconds_);
    std::fflush(stderr);
    std::fflush(stdout);
    _exit(kStallExitCode); // the main thread is blocked inside MPI or NCCL: no orderly shutdown
  }
}

} // namespace collcheck::example
