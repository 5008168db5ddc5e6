#include "cli/progress.h"

#include <cstdio>

namespace collcheck::cli {

std::string humanCount(double n) {
  char buf[32];
  if (n >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1fG", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else if (n >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

ProgressBar::ProgressBar(bool enabled, std::chrono::milliseconds delay)
    : enabled_(enabled), delay_(delay), start_(std::chrono::steady_clock::now()),
      phaseStart_(start_) {
  if (enabled_)
    thread_ = std::thread([this] { loop(); });
}

ProgressBar::~ProgressBar() { stop(); }

void ProgressBar::phase(std::string name, std::atomic<uint64_t> *counter, uint64_t total,
                        std::string unit) {
  std::lock_guard<std::mutex> lock(mutex_);
  name_ = std::move(name);
  unit_ = std::move(unit);
  counter_ = counter;
  total_ = total;
  phaseStart_ = std::chrono::steady_clock::now();
}

void ProgressBar::stop() {
  if (!enabled_)
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_)
      return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
  // The last state is drawn once more (an analysis can end between two frames), then cleared.
  if (std::chrono::steady_clock::now() - start_ >= delay_) {
    std::lock_guard<std::mutex> lock(mutex_);
    draw();
  }
  if (drawn_)
    std::fputs("\r\033[K", stderr);
}

void ProgressBar::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_for(lock, delay_, [this] { return stopping_; }))
    return;
  while (!stopping_) {
    draw();
    wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; });
  }
}

void ProgressBar::draw() {
  if (!counter_)
    return;
  uint64_t done = counter_->load(std::memory_order_relaxed);
  double fraction = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 0;
  fraction = fraction > 1 ? 1 : fraction;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - phaseStart_).count();
  double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  if (total_ == 0) // the total is not known yet (folders still being listed)
    std::fprintf(stderr, "\r\033[Kcollcheck: %s %s %s, %s %s/s", name_.c_str(),
                 humanCount(static_cast<double>(done)).c_str(), unit_.c_str(),
                 humanCount(rate).c_str(), unit_.c_str());
  else
    std::fprintf(stderr, "\r\033[Kcollcheck: %s [%s] %s/%s %s, %s %s/s", name_.c_str(), bar.c_str(),
                 humanCount(static_cast<double>(done)).c_str(),
                 humanCount(static_cast<double>(total_)).c_str(), unit_.c_str(),
                 humanCount(rate).c_str(), unit_.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

} // namespace collcheck::cli
