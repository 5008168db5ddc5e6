// ncclSend/ncclRecv: inside a group they must not deadlock whatever the order of the calls, also
// with messages far above MPI's eager limit; sends and receives between two ranks match in order.
#include "tests/nccl_double/test/mpi_environment.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace collcheck::nccl_double_test {
namespace {

std::int32_t stamp(int from, int to, std::size_t index) {
  return std::int32_t(from * 1000003 + to * 1009 + int(index % 1000));
}

TEST(GroupedSendRecv, RingWithLargeMessagesDoesNotDeadlock) {
  const int rank = worldRank(), ranks = worldSize();
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  const std::size_t count = 1 << 20; // 4 MiB: MPI's rendezvous protocol, not an eager copy
  std::vector<std::int32_t> outgoing(count), incoming(count, -1);
  for (std::size_t i = 0; i < count; ++i)
    outgoing[i] = stamp(rank, next, i);
  // Every rank sends first: without the group's deferred, nonblocking execution this is the
  // textbook deadlock.
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  EXPECT_EQ(ncclSuccess, ncclSend(outgoing.data(), count, ncclInt32, next, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess,
            ncclRecv(incoming.data(), count, ncclInt32, previous, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i)
    wrong += incoming[i] != stamp(previous, rank, i);
  EXPECT_EQ(0u, wrong);
}

TEST(GroupedSendRecv, AllPairsIncludingSelfInNestedGroups) {
  const int rank = worldRank(), ranks = worldSize();
  const std::size_t count = 3;
  std::vector<std::vector<std::int32_t>> outgoing(static_cast<std::size_t>(ranks)),
      incoming(std::size_t(ranks), std::vector<std::int32_t>(count, -1));
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  EXPECT_EQ(ncclSuccess, ncclGroupStart()); // nested: only the outermost end runs the group
  for (int peer = 0; peer < ranks; ++peer) {
    for (std::size_t i = 0; i < count; ++i)
      outgoing[std::size_t(peer)].push_back(stamp(rank, peer, i));
    EXPECT_EQ(ncclSuccess, ncclSend(outgoing[std::size_t(peer)].data(), count, ncclInt32, peer,
                                    worldComm(), nullptr));
  }
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  for (int peer = ranks - 1; peer >= 0; --peer) // receives posted in the other order
    EXPECT_EQ(ncclSuccess, ncclRecv(incoming[std::size_t(peer)].data(), count, ncclInt32, peer,
                                    worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  for (int peer = 0; peer < ranks; ++peer)
    for (std::size_t i = 0; i < count; ++i)
      EXPECT_EQ(stamp(peer, rank, i), incoming[std::size_t(peer)][i]) << "from rank " << peer;
}

TEST(GroupedSendRecv, MessagesBetweenTwoRanksMatchInOrder) {
  const int rank = worldRank(), ranks = worldSize();
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  std::int64_t first = 100 + rank, second = 200 + rank, gotFirst = -1, gotSecond = -1;
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  EXPECT_EQ(ncclSuccess, ncclSend(&first, 1, ncclInt64, next, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclSend(&second, 1, ncclInt64, next, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclRecv(&gotFirst, 1, ncclInt64, previous, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclRecv(&gotSecond, 1, ncclInt64, previous, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  EXPECT_EQ(100 + previous, gotFirst);
  EXPECT_EQ(200 + previous, gotSecond);
}

TEST(UngroupedSendRecv, PairsOrderedByParityComplete) {
  const int rank = worldRank(), ranks = worldSize();
  if (ranks % 2 != 0 && rank == ranks - 1)
    return; // the odd one out has no partner
  const int partner = rank ^ 1;
  std::int32_t mine = stamp(rank, partner, 0), theirs = -1;
  if (rank % 2 == 0) {
    EXPECT_EQ(ncclSuccess, ncclSend(&mine, 1, ncclInt32, partner, worldComm(), nullptr));
    EXPECT_EQ(ncclSuccess, ncclRecv(&theirs, 1, ncclInt32, partner, worldComm(), nullptr));
  } else {
    EXPECT_EQ(ncclSuccess, ncclRecv(&theirs, 1, ncclInt32, partner, worldComm(), nullptr));
    EXPECT_EQ(ncclSuccess, ncclSend(&mine, 1, ncclInt32, partner, worldComm(), nullptr));
  }
  EXPECT_EQ(stamp(partner, rank, 0), theirs);
}

TEST(Group, CollectivesOfTwoCommunicatorsInOneGroup) {
  const int rank = worldRank(), ranks = worldSize();
  ncclComm_t reversed = newComm(ranks - 1 - rank, ranks);
  std::int32_t onWorld = rank, onReversed = rank;
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  EXPECT_EQ(ncclSuccess,
            ncclAllReduce(&onWorld, &onWorld, 1, ncclInt32, ncclSum, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclBroadcast(&onReversed, &onReversed, 1, ncclInt32, 0, reversed,
                                       nullptr)); // NCCL rank 0 of `reversed` is world rank P-1
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  EXPECT_EQ(ranks * (ranks - 1) / 2, onWorld);
  EXPECT_EQ(ranks - 1, onReversed);
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(reversed));
}

} // namespace
} // namespace collcheck::nccl_double_test
