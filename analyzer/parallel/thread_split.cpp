#include "analyzer/parallel/thread_split.h"

#include "analyzer/parallel/merge.h"
#include "analyzer/parallel/share_plan.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace collcheck::analyzer::parallel {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// What the threads share: the ranges handed over and not yet taken, and how many threads wait
// for one. A running share looks between two of its rounds (asked, a load); the one that looks
// first while a thread waits cuts what it has left (cutAhead) and queues the rest.
class Handovers {
public:
  Handovers(const TraceSet &traces, uint64_t commId, uint64_t startSlots, unsigned running)
      : traces_(traces), commId_(commId), startSlots_(startSlots), running_(running) {}

  bool asked() const { return wanted_.load(std::memory_order_relaxed) > 0; }

  std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                const RangeSpec &range) {
    std::lock_guard lock(mutex_);
    if (waiting_ <= ready_.size())
      return std::nullopt; // another share answered first
    std::optional<std::vector<uint64_t>> cut =
        cutAhead(traces_, commId_, from, range.end, startSlots_);
    if (cut) {
      ready_.push_back({*cut, range.end, false, range.last, range.alongComm});
      update();
      changed_.notify_all();
    }
    return cut;
  }

  // A thread that stops reading (its range failed): it takes nothing more.
  void quit() {
    std::lock_guard lock(mutex_);
    --running_;
    changed_.notify_all();
  }

  // A thread whose range ended: the next range it reads, or none once no thread
  // reads any more (then nothing can be handed over).
  std::optional<RangeSpec> next() {
    std::unique_lock lock(mutex_);
    --running_;
    ++waiting_;
    update();
    changed_.notify_all(); // a waiting thread may be the last one now
    changed_.wait(lock, [&] { return !ready_.empty() || running_ == 0; });
    --waiting_;
    std::optional<RangeSpec> range;
    if (!ready_.empty()) {
      range = std::move(ready_.front());
      ready_.pop_front();
      ++running_;
    }
    update();
    return range;
  }

private:
  void update() {
    wanted_.store(static_cast<int>(waiting_) - static_cast<int>(ready_.size()),
                  std::memory_order_relaxed);
  }

  const TraceSet &traces_;
  const uint64_t commId_, startSlots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<RangeSpec> ready_;
  size_t waiting_ = 0;
  unsigned running_;
  std::atomic<int> wanted_{0}; // threads waiting beyond the ranges ready for them
};

class ThreadControl final : public RangeControl {
public:
  ThreadControl(Handovers &handovers, bool slow) : handovers_(handovers), slow_(slow) {}
  bool asked() override {
    if (slow_)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return handovers_.asked();
  }
  std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                const RangeSpec &range) override {
    return handovers_.giveAway(from, range);
  }

private:
  Handovers &handovers_;
  const bool slow_;
};

} // namespace

bool analyzeInThreads(const TraceSet &traces, const AnalysisOptions &options, unsigned threads,
                      AnalysisResult &out, std::string &why, ThreadSplitStats &stats,
                      Balance balance) {
  stats.threads = static_cast<int>(threads);
  std::optional<uint64_t> comm = cutCommunicator(traces);
  if (!comm) {
    why = "no communicator spans every file";
    return false;
  }
  auto t0 = Clock::now();
  // Each thread reads its share as one thread reads the whole job.
  const AnalysisOptions &shareOptions = options;
  // Starting a share costs about a round of reading.
  Handovers handovers(traces, *comm, options.readChunk, threads);
  std::vector<std::vector<RangeResult>> results(threads);
  std::vector<std::exception_ptr> failures(threads);
  const int slow = indexFromEnvironment("COLLCHECK_THREAD_SPLIT_SLOW"); // thread_split.h
  auto work = [&](unsigned t) {
    ThreadControl control(handovers, slow == static_cast<int>(t));
    std::optional<RangeSpec> range =
        planShare(traces, *comm, static_cast<int>(t), static_cast<int>(threads), balance);
    while (range) {
      try {
        results[t].push_back(analyzeRange(traces, shareOptions, *range, &control));
      } catch (...) {
        // The range is lost: the merge cannot tile the files. Leave as a finished thread does,
        // so that the others are not kept waiting, and let the caller analyze the job whole.
        failures[t] = std::current_exception();
        handovers.quit();
        return;
      }
      range = handovers.next();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &t : pool)
    t.join();
  stats.shareSeconds = since(t0);
  for (std::exception_ptr &failure : failures)
    if (failure)
      std::rethrow_exception(failure); // std::bad_alloc, as a single thread would end
  std::vector<RangeResult> shares;
  for (std::vector<RangeResult> &mine : results)
    for (RangeResult &share : mine)
      shares.push_back(std::move(share));
  stats.ranges = static_cast<int>(shares.size());
  auto t1 = Clock::now();
  sortShares(shares);
  bool merged = mergeJoining(traces, options, *comm, std::move(shares), out, why, &stats.joined);
  stats.mergeSeconds = since(t1);
  if (merged)
    why.clear(); // what a cut read across had said
  return merged;
}

} // namespace collcheck::analyzer::parallel
