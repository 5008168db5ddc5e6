// How the ranks of one test-double communicator exchange bytes: over a private MPI communicator
// (PMPI only, so the collcheck tracer sees none of it) or, for ncclCommInitAll, through mailboxes
// shared by the ranks of one process.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace collcheck::nccl_double {

// One point-to-point message of a phase. Messages between two ranks of one communicator match
// in the order they were posted, like NCCL's sends and receives.
struct Transfer {
  enum class Direction { send, receive } direction;
  int peer;
  void *buffer; // read for a send, written for a receive
  std::size_t bytes;
};

// Transfers posted together; they complete together.
class PostedTransfers {
public:
  virtual ~PostedTransfers() = default;
  // Sets `done` once every transfer completed; an error names the peer and the sizes.
  virtual ncclResult_t test(bool &done) = 0;
};

// A rank's view of how the members of a communicator split: the colors and keys of all members.
struct SplitRequest {
  int color; // negative: this rank joins no new communicator
  int key;
};

class Transport {
public:
  virtual ~Transport() = default;
  // Starts every transfer without blocking, so that a group of sends and receives cannot deadlock.
  virtual ncclResult_t post(std::span<const Transfer> transfers,
                            std::unique_ptr<PostedTransfers> &posted) = 0;
  // The transport of the communicator this rank joins in ncclCommSplit. `requests` holds every
  // member's color and key (gathered over this transport); `splitOrdinal` counts the splits of
  // the parent so that concurrent splits do not meet. Null `child` for a negative color.
  virtual ncclResult_t split(std::span<const SplitRequest> requests, int myRank, int splitOrdinal,
                             std::unique_ptr<Transport> &child) = 0;
  virtual std::string describe() const = 0;
};

// Several ranks of one process (ncclCommInitAll): `transports[i]` is rank i's.
void makeLocalClique(int size, std::unique_ptr<Transport> *transports);

} // namespace collcheck::nccl_double
