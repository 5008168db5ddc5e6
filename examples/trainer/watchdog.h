// Turns a hang into a diagnosis: when one collective of the trainer blocks longer than the limit,
// it names the collective and the update on stderr and ends the process (mpirun then ends the
// job), so that a run with a rank that stopped joining finishes, and its traces can be analyzed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace collcheck::example {

class Watchdog {
public:
  Watchdog(double seconds, int rank);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  // Watches the blocking call of its lifetime; `what` and `update` describe it as in
  // "in the count all-reduce of update" 2.
  class Watch {
  public:
    Watch(Watchdog &watchdog, const char *what, int update);
    ~Watch();

  private:
    Watchdog &watchdog_;
  };

private:
  void run();

  const double seconds_;
  const int rank_;
  std::atomic<const char *> what_{nullptr};
  std::atomic<int> update_{0};
  std::atomic<long long> startedNs_{0};
  std::mutex mutex_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace collcheck::example
