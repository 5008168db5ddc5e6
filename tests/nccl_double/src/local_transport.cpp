// Ranks of one process: a send copies its bytes into the receiver's mailbox at once, a receive
// takes the oldest message from that sender when it is there.
#include "tests/nccl_double/src/errors.h"
#include "tests/nccl_double/src/transport.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace collcheck::nccl_double {
namespace {

struct Clique {
  explicit Clique(int size) : size(size), mailboxes(std::size_t(size) * std::size_t(size)) {}
  const int size;
  const std::uint64_t id = nextId();
  std::mutex mutex;
  // mailboxes[from * size + to]: messages in the order they were sent
  std::vector<std::deque<std::vector<std::byte>>> mailboxes;

  std::deque<std::vector<std::byte>> &mailbox(int from, int to) {
    return mailboxes[std::size_t(from) * std::size_t(size) + std::size_t(to)];
  }
  static std::uint64_t nextId() {
    static std::mutex mutex;
    static std::uint64_t counter = 0;
    std::lock_guard lock(mutex);
    return ++counter;
  }
};

class LocalPosted final : public PostedTransfers {
public:
  LocalPosted(std::shared_ptr<Clique> clique, int rank, std::vector<Transfer> receives)
      : clique_(std::move(clique)), rank_(rank), receives_(std::move(receives)) {}

  ncclResult_t test(bool &done) override {
    std::lock_guard lock(clique_->mutex);
    while (next_ < receives_.size()) {
      const Transfer &receive = receives_[next_];
      auto &mailbox = clique_->mailbox(receive.peer, rank_);
      if (mailbox.empty()) {
        done = false;
        return ncclSuccess;
      }
      const std::vector<std::byte> message = std::move(mailbox.front());
      mailbox.pop_front();
      if (message.size() != receive.bytes)
        return fail(ncclInvalidUsage,
                    "rank " + std::to_string(rank_) + " of a local clique received " +
                        std::to_string(message.size()) + " bytes from rank " +
                        std::to_string(receive.peer) + " where it expected " +
                        std::to_string(receive.bytes) +
                        " (mismatched count, datatype or operation across ranks)");
      if (!message.empty())
        std::memcpy(receive.buffer, message.data(), message.size());
      ++next_;
    }
    done = true;
    return ncclSuccess;
  }

private:
  std::shared_ptr<Clique> clique_;
  int rank_;
  // Receives from one peer complete in posting order because they are taken in that order.
  std::vector<Transfer> receives_;
  std::size_t next_ = 0;
};

// Children of a split meet here: the first member to arrive creates the child clique.
struct SplitRegistry {
  struct Entry {
    std::shared_ptr<Clique> clique;
    int claimsLeft;
  };
  std::mutex mutex;
  std::map<std::tuple<std::uint64_t, int, int>, Entry> entries;

  std::shared_ptr<Clique> claim(std::uint64_t parent, int splitOrdinal, int color, int size) {
    std::lock_guard lock(mutex);
    const auto key = std::make_tuple(parent, splitOrdinal, color);
    auto found = entries.find(key);
    if (found == entries.end())
      found = entries.emplace(key, Entry{std::make_shared<Clique>(size), size}).first;
    std::shared_ptr<Clique> clique = found->second.clique;
    if (--found->second.claimsLeft == 0)
      entries.erase(found);
    return clique;
  }
};

SplitRegistry &splitRegistry() {
  static SplitRegistry registry;
  return registry;
}

class LocalTransport final : public Transport {
public:
  LocalTransport(std::shared_ptr<Clique> clique, int rank)
      : clique_(std::move(clique)), rank_(rank) {}

  ncclResult_t post(std::span<const Transfer> transfers,
                    std::unique_ptr<PostedTransfers> &posted) override {
    std::vector<Transfer> receives;
    {
      std::lock_guard lock(clique_->mutex);
      for (const Transfer &transfer : transfers) {
        if (transfer.direction == Transfer::Direction::receive) {
          receives.push_back(transfer);
          continue;
        }
        const auto *bytes = static_cast<const std::byte *>(transfer.buffer);
        clique_->mailbox(rank_, transfer.peer).emplace_back(bytes, bytes + transfer.bytes);
      }
    }
    posted = std::make_unique<LocalPosted>(clique_, rank_, std::move(receives));
    return ncclSuccess;
  }

  ncclResult_t split(std::span<const SplitRequest> requests, int myRank, int splitOrdinal,
                     std::unique_ptr<Transport> &child) override {
    child.reset();
    const int color = requests[std::size_t(myRank)].color;
    if (color < 0)
      return ncclSuccess;
    // Members of the new communicator in NCCL's order: by key, then by rank in the parent.
    std::vector<int> members;
    for (int rank = 0; rank < int(requests.size()); ++rank)
      if (requests[std::size_t(rank)].color == color)
        members.push_back(rank);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return requests[std::size_t(a)].key < requests[std::size_t(b)].key;
    });
    const int newRank = int(std::find(members.begin(), members.end(), myRank) - members.begin());
    child = std::make_unique<LocalTransport>(
        splitRegistry().claim(clique_->id, splitOrdinal, color, int(members.size())), newRank);
    return ncclSuccess;
  }

  std::string describe() const override {
    return "rank " + std::to_string(rank_) + " of " + std::to_string(clique_->size) +
           " in one process";
  }

private:
  std::shared_ptr<Clique> clique_;
  int rank_;
};

} // namespace

void makeLocalClique(int size, std::unique_ptr<Transport> *transports) {
  auto clique = std::make_shared<Clique>(size);
  for (int rank = 0; rank < size; ++rank)
    transports[rank] = std::make_unique<LocalTransport>(clique, rank);
}

} // namespace collcheck::nccl_double
