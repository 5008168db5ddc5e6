// A progress bar on stderr for analyses that take more than a second: files opened, then records
// merged and the rate. Drawn by its own thread from counters the analysis bumps, so the hot loop
// pays one relaxed atomic add per chunk. Silent unless enabled (a terminal, or --progress=always).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace collcheck::cli {

class ProgressBar {
public:
  explicit ProgressBar(bool enabled, std::chrono::milliseconds delay = std::chrono::seconds(1));
  ~ProgressBar();
  // Starts a phase: `counter` counts up to `total` units named `unit`.
  void phase(std::string name, std::atomic<uint64_t> *counter, uint64_t total, std::string unit);
  void stop(); // clears the line

private:
  void loop();
  void draw();
  bool enabled_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_, phaseStart_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string name_, unit_;
  std::atomic<uint64_t> *counter_ = nullptr;
  uint64_t total_ = 0;
  bool stopping_ = false, drawn_ = false;
  std::thread thread_;
};

// "51.2M", "1.0k", "999".
std::string humanCount(double n);

} // namespace collcheck::cli
