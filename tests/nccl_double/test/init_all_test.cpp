// ncclCommInitAll: several ranks in one process, no MPI job. The ranks are driven the two ways
// NCCL allows: one thread for all of them inside a group, or one thread per rank.
#include <nccl.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace {

constexpr int kRanks = 3;

struct Clique {
  Clique() { EXPECT_EQ(ncclSuccess, ncclCommInitAll(comms.data(), kRanks, devices.data())); }
  ~Clique() {
    for (ncclComm_t comm : comms)
      EXPECT_EQ(ncclSuccess, ncclCommDestroy(comm));
  }
  std::vector<int> devices{4, 6, 2};
  std::vector<ncclComm_t> comms = std::vector<ncclComm_t>(kRanks, nullptr);
};

TEST(InitAll, RanksDevicesAndCount) {
  Clique clique;
  for (int rank = 0; rank < kRanks; ++rank) {
    int commRank = -1, count = -1, device = -1;
    EXPECT_EQ(ncclSuccess, ncclCommUserRank(clique.comms[rank], &commRank));
    EXPECT_EQ(ncclSuccess, ncclCommCount(clique.comms[rank], &count));
    EXPECT_EQ(ncclSuccess, ncclCommCuDevice(clique.comms[rank], &device));
    EXPECT_EQ(rank, commRank);
    EXPECT_EQ(kRanks, count);
    EXPECT_EQ(clique.devices[rank], device);
  }
}

TEST(InitAll, OneThreadDrivesEveryRankInAGroup) {
  Clique clique;
  std::vector<double> values(kRanks);
  for (int rank = 0; rank < kRanks; ++rank)
    values[rank] = 1.5 * (rank + 1);
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(ncclSuccess, ncclAllReduce(&values[rank], &values[rank], 1, ncclFloat64, ncclSum,
                                         clique.comms[rank], nullptr));
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(1.5 + 3.0 + 4.5, values[rank]);
}

TEST(InitAll, OneThreadPerRank) {
  Clique clique;
  std::vector<std::int32_t> averaged(kRanks), broadcast(kRanks), gathered(kRanks * kRanks, -1);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank)
    threads.emplace_back([&, rank] {
      averaged[rank] = 10 * rank; // 0, 10, 20: average 10
      broadcast[rank] = rank == 2 ? 77 : 0;
      std::int32_t mine = 100 + rank;
      EXPECT_EQ(ncclSuccess, ncclAllReduce(&averaged[rank], &averaged[rank], 1, ncclInt32, ncclAvg,
                                           clique.comms[rank], nullptr));
      EXPECT_EQ(ncclSuccess, ncclBroadcast(&broadcast[rank], &broadcast[rank], 1, ncclInt32, 2,
                                           clique.comms[rank], nullptr));
      EXPECT_EQ(ncclSuccess, ncclAllGather(&mine, &gathered[kRanks * rank], 1, ncclInt32,
                                           clique.comms[rank], nullptr));
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(10, averaged[rank]);
    EXPECT_EQ(77, broadcast[rank]);
    for (int from = 0; from < kRanks; ++from)
      EXPECT_EQ(100 + from, gathered[kRanks * rank + from]);
  }
}

TEST(InitAll, GroupedRingOfSendsAndReceives) {
  Clique clique;
  std::vector<std::int64_t> outgoing(kRanks), incoming(kRanks, -1);
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  for (int rank = 0; rank < kRanks; ++rank) {
    outgoing[rank] = 1000 + rank;
    EXPECT_EQ(ncclSuccess, ncclSend(&outgoing[rank], 1, ncclInt64, (rank + 1) % kRanks,
                                    clique.comms[rank], nullptr));
    EXPECT_EQ(ncclSuccess, ncclRecv(&incoming[rank], 1, ncclInt64, (rank + kRanks - 1) % kRanks,
                                    clique.comms[rank], nullptr));
  }
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(1000 + (rank + kRanks - 1) % kRanks, incoming[rank]);
}

TEST(InitAll, SplitInsideAGroupThenReduceOnTheChildren) {
  Clique clique;
  std::vector<ncclComm_t> children(kRanks, nullptr);
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  for (int rank = 0; rank < kRanks; ++rank) // {0, 2} and {1}
    EXPECT_EQ(ncclSuccess,
              ncclCommSplit(clique.comms[rank], rank % 2, -rank, &children[rank], nullptr));
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  std::vector<int> childRanks(kRanks, -1);
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(ncclSuccess, ncclCommUserRank(children[rank], &childRanks[rank]));
  EXPECT_EQ(1, childRanks[0]); // key -rank: rank 2 comes first
  EXPECT_EQ(0, childRanks[2]);
  EXPECT_EQ(0, childRanks[1]);
  std::vector<std::int32_t> values{5, 7, 11};
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  for (int rank = 0; rank < kRanks; ++rank)
    EXPECT_EQ(ncclSuccess, ncclAllReduce(&values[rank], &values[rank], 1, ncclInt32, ncclSum,
                                         children[rank], nullptr));
  EXPECT_EQ(ncclSuccess, ncclGroupEnd());
  EXPECT_EQ(16, values[0]);
  EXPECT_EQ(7, values[1]);
  EXPECT_EQ(16, values[2]);
  for (ncclComm_t child : children)
    EXPECT_EQ(ncclSuccess, ncclCommDestroy(child));
}

TEST(InitAll, CountMismatchIsReported) {
  Clique clique;
  std::vector<float> values(4, 1.0f);
  EXPECT_EQ(ncclSuccess, ncclGroupStart());
  EXPECT_EQ(ncclSuccess, ncclAllReduce(values.data(), values.data(), 2, ncclFloat32, ncclSum,
                                       clique.comms[0], nullptr));
  for (int rank = 1; rank < kRanks; ++rank)
    EXPECT_EQ(ncclSuccess, ncclAllReduce(values.data(), values.data(), 4, ncclFloat32, ncclSum,
                                         clique.comms[rank], nullptr));
  EXPECT_EQ(ncclInvalidUsage, ncclGroupEnd());
}

} // namespace
