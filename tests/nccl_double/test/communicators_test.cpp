// Communicator lifecycle and identity: unique ids, init variants, queries, split (color, key,
// NCCL_SPLIT_NOCOLOR, nesting), communicators over a subset of the job, and clear errors for bad
// input, including a count that differs across ranks.
#include "tests/nccl_double/test/mpi_environment.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace collcheck::nccl_double_test {
namespace {

std::string lastError() { return ncclGetLastError(nullptr); }

TEST(Library, SaysItIsTheTestDouble) {
  int version = 0;
  EXPECT_EQ(ncclSuccess, ncclGetVersion(&version));
  EXPECT_EQ(NCCL_VERSION_CODE, version);
  EXPECT_NE(nullptr, std::strstr(ncclGetErrorString(ncclInvalidArgument), "test double"));
  EXPECT_NE(nullptr, std::strstr(ncclGetErrorString(ncclSuccess), "test double"));
}

TEST(UniqueId, EveryCallGivesANewId) {
  ncclUniqueId first, second;
  EXPECT_EQ(ncclSuccess, ncclGetUniqueId(&first));
  EXPECT_EQ(ncclSuccess, ncclGetUniqueId(&second));
  EXPECT_NE(0, std::memcmp(&first, &second, sizeof first));
  // Ids of different processes differ too.
  std::vector<ncclUniqueId> all(static_cast<std::size_t>(worldSize()));
  MPI_Allgather(&first, sizeof first, MPI_BYTE, all.data(), sizeof first, MPI_BYTE, MPI_COMM_WORLD);
  for (std::size_t a = 0; a < all.size(); ++a)
    for (std::size_t b = a + 1; b < all.size(); ++b)
      EXPECT_NE(0, std::memcmp(&all[a], &all[b], sizeof first)) << a << " and " << b;
}

TEST(UniqueId, ForeignIdIsRejected) {
  ncclUniqueId foreign;
  std::memset(&foreign, 0x5a, sizeof foreign);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclInvalidArgument, ncclCommInitRank(&comm, worldSize(), foreign, worldRank()));
  EXPECT_NE(std::string::npos, lastError().find("not made by"));
}

TEST(Queries, CountRankDeviceAndAsyncError) {
  int count = 0, rank = -1, device = -1;
  ncclResult_t asyncError = ncclInternalError;
  EXPECT_EQ(ncclSuccess, ncclCommCount(worldComm(), &count));
  EXPECT_EQ(ncclSuccess, ncclCommUserRank(worldComm(), &rank));
  EXPECT_EQ(ncclSuccess, ncclCommCuDevice(worldComm(), &device));
  EXPECT_EQ(ncclSuccess, ncclCommGetAsyncError(worldComm(), &asyncError));
  EXPECT_EQ(worldSize(), count);
  EXPECT_EQ(worldRank(), rank);
  EXPECT_EQ(0, device);
  EXPECT_EQ(ncclSuccess, asyncError);
}

TEST(Init, ConfigReversedRanksFinalizeAndDestroy) {
  const int rank = worldRank(), ranks = worldSize();
  ncclUniqueId id;
  if (rank == 0) {
    EXPECT_EQ(ncclSuccess, ncclGetUniqueId(&id));
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "reversed";
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclSuccess, ncclCommInitRankConfig(&comm, ranks, id, ranks - 1 - rank, &config));
  int commRank = -1;
  EXPECT_EQ(ncclSuccess, ncclCommUserRank(comm, &commRank));
  EXPECT_EQ(ranks - 1 - rank, commRank);
  // NCCL rank 0 is the last MPI rank: its value reaches everyone.
  std::int64_t value = rank;
  EXPECT_EQ(ncclSuccess, ncclBroadcast(&value, &value, 1, ncclInt64, 0, comm, nullptr));
  EXPECT_EQ(ranks - 1, value);
  EXPECT_EQ(ncclSuccess, ncclCommFinalize(comm));
  EXPECT_EQ(ncclInvalidUsage, ncclAllReduce(&value, &value, 1, ncclInt64, ncclSum, comm, nullptr));
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(comm));
  EXPECT_EQ(ncclInvalidArgument, ncclCommCount(comm, &commRank)); // no longer a live handle
}

TEST(Init, UninitializedConfigIsRejected) {
  ncclConfig_t config;
  std::memset(&config, 0, sizeof config);
  ncclUniqueId id;
  EXPECT_EQ(ncclSuccess, ncclGetUniqueId(&id));
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclInvalidArgument, ncclCommInitRankConfig(&comm, 1, id, 0, &config));
  EXPECT_NE(std::string::npos, lastError().find("NCCL_CONFIG_INITIALIZER"));
}

TEST(Init, ScalableInitWithOneIdPerRank) {
  const int rank = worldRank(), ranks = worldSize();
  ncclUniqueId mine;
  EXPECT_EQ(ncclSuccess, ncclGetUniqueId(&mine));
  std::vector<ncclUniqueId> ids(static_cast<std::size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, ids.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclSuccess, ncclCommInitRankScalable(&comm, ranks, rank, ranks, ids.data(), nullptr));
  std::int32_t value = 1;
  EXPECT_EQ(ncclSuccess, ncclAllReduce(&value, &value, 1, ncclInt32, ncclSum, comm, nullptr));
  EXPECT_EQ(ranks, value);
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(comm));
}

TEST(Init, CommunicatorsOverDisjointHalvesOfTheJob) {
  // Only the members of a communicator take part in its init: each half meets on its own.
  const int rank = worldRank(), ranks = worldSize();
  const int half = rank < (ranks + 1) / 2 ? 0 : 1;
  MPI_Comm halfComm;
  MPI_Comm_split(MPI_COMM_WORLD, half, rank, &halfComm);
  int halfRank = 0, halfSize = 0;
  MPI_Comm_rank(halfComm, &halfRank);
  MPI_Comm_size(halfComm, &halfSize);
  ncclComm_t comm = newComm(halfRank, halfSize, halfComm);
  std::int32_t value = rank;
  EXPECT_EQ(ncclSuccess, ncclAllReduce(&value, &value, 1, ncclInt32, ncclSum, comm, nullptr));
  std::int32_t expected = 0;
  for (int r = 0; r < ranks; ++r)
    if ((r < (ranks + 1) / 2 ? 0 : 1) == half)
      expected += r;
  EXPECT_EQ(expected, value);
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(comm));
  MPI_Comm_free(&halfComm);
}

TEST(Split, ColorKeyAndNoColor) {
  const int rank = worldRank(), ranks = worldSize();
  // Rank 0 stays out; the others split by parity, ordered by descending world rank (key -rank).
  const int color = rank == 0 ? NCCL_SPLIT_NOCOLOR : rank % 2;
  ncclComm_t child = reinterpret_cast<ncclComm_t>(&child); // must be overwritten
  EXPECT_EQ(ncclSuccess, ncclCommSplit(worldComm(), color, -rank, &child, nullptr));
  if (rank == 0) {
    EXPECT_EQ(nullptr, child);
    return;
  }
  std::vector<int> members;
  for (int r = ranks - 1; r >= 1; --r)
    if (r % 2 == color)
      members.push_back(r);
  int childRank = -1, childSize = -1;
  EXPECT_EQ(ncclSuccess, ncclCommUserRank(child, &childRank));
  EXPECT_EQ(ncclSuccess, ncclCommCount(child, &childSize));
  EXPECT_EQ(int(members.size()), childSize);
  if (childRank >= 0 && childRank < int(members.size())) {
    EXPECT_EQ(rank, members[std::size_t(childRank)]);
  }
  std::vector<std::int32_t> gathered(members.size(), -1);
  std::int32_t mine = rank;
  EXPECT_EQ(ncclSuccess, ncclAllGather(&mine, gathered.data(), 1, ncclInt32, child, nullptr));
  for (std::size_t i = 0; i < members.size(); ++i)
    EXPECT_EQ(members[i], gathered[i]) << "child rank " << i;
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(child));
}

TEST(Split, NestedSplitsAndSingletons) {
  const int rank = worldRank(), ranks = worldSize();
  ncclComm_t everyone = nullptr, alone = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "everyone";
  EXPECT_EQ(ncclSuccess, ncclCommSplit(worldComm(), 0, rank, &everyone, &config));
  EXPECT_EQ(ncclSuccess, ncclCommSplit(everyone, rank, 0, &alone, nullptr));
  std::int32_t sum = 1, single = rank;
  EXPECT_EQ(ncclSuccess, ncclAllReduce(&sum, &sum, 1, ncclInt32, ncclSum, everyone, nullptr));
  EXPECT_EQ(ncclSuccess, ncclAllReduce(&single, &single, 1, ncclInt32, ncclAvg, alone, nullptr));
  EXPECT_EQ(ranks, sum);
  EXPECT_EQ(rank, single);
  int aloneSize = 0;
  EXPECT_EQ(ncclSuccess, ncclCommCount(alone, &aloneSize));
  EXPECT_EQ(1, aloneSize);
  EXPECT_EQ(ncclSuccess, ncclCommAbort(alone));
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(everyone));
}

TEST(Split, NegativeColorOtherThanNoColorIsRejected) {
  ncclComm_t child = nullptr;
  EXPECT_EQ(ncclInvalidArgument, ncclCommSplit(worldComm(), -7, 0, &child, nullptr));
}

TEST(Errors, BadArgumentsAreNamed) {
  float value = 1;
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(&value, &value, 1, ncclNumTypes, ncclSum, worldComm(), nullptr));
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(&value, &value, 1, ncclFloat8e4m3, ncclSum, worldComm(), nullptr));
  EXPECT_NE(std::string::npos, lastError().find("fp8"));
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(&value, &value, 1, ncclFloat32, ncclRedOp_t(99), worldComm(), nullptr));
  EXPECT_EQ(ncclInvalidArgument,
            ncclBroadcast(&value, &value, 1, ncclFloat32, worldSize(), worldComm(), nullptr));
  EXPECT_NE(std::string::npos, lastError().find("root"));
  EXPECT_EQ(ncclInvalidArgument, ncclSend(&value, 1, ncclFloat32, -1, worldComm(), nullptr));
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, nullptr, nullptr));
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(nullptr, &value, 1, ncclFloat32, ncclSum, worldComm(), nullptr));
  EXPECT_EQ(ncclInvalidUsage, ncclGroupEnd());
}

TEST(Errors, CountThatDiffersAcrossRanksFailsInsteadOfCorrupting) {
  const int rank = worldRank(), ranks = worldSize();
  if (ranks < 2)
    return;
  ncclComm_t comm = newComm(rank, ranks);
  std::vector<float> values(8, 1.0f);
  const std::size_t count = rank == 0 ? 4 : 8;
  const ncclResult_t result =
      ncclAllReduce(values.data(), values.data(), count, ncclFloat32, ncclSum, comm, nullptr);
  EXPECT_EQ(ncclInvalidUsage, result);
  EXPECT_NE(std::string::npos, lastError().find("mismatched count")) << lastError();
  ncclResult_t asyncError = ncclSuccess;
  EXPECT_EQ(ncclSuccess, ncclCommGetAsyncError(comm, &asyncError));
  EXPECT_EQ(ncclInvalidUsage, asyncError);
  EXPECT_EQ(ncclSuccess, ncclCommAbort(comm));
}

} // namespace
} // namespace collcheck::nccl_double_test

namespace collcheck::nccl_double_test {
namespace {

TEST(Memory, AllocatedBuffersWorkInCollectivesAndRegister) {
  void *buffer = nullptr;
  EXPECT_EQ(ncclSuccess, ncclMemAlloc(&buffer, 3 * sizeof(double)));
  if (buffer == nullptr)
    return;
  auto *values = static_cast<double *>(buffer);
  values[0] = values[1] = values[2] = 0.5;
  void *handle = nullptr;
  EXPECT_EQ(ncclSuccess, ncclCommRegister(worldComm(), buffer, 3 * sizeof(double), &handle));
  EXPECT_EQ(ncclSuccess,
            ncclAllReduce(buffer, buffer, 3, ncclFloat64, ncclSum, worldComm(), nullptr));
  EXPECT_EQ(0.5 * worldSize(), values[2]);
  EXPECT_EQ(ncclSuccess, ncclCommDeregister(worldComm(), handle));
  EXPECT_EQ(ncclInvalidArgument, ncclCommDeregister(worldComm(), buffer));
  EXPECT_EQ(ncclSuccess, ncclMemFree(buffer));
}

} // namespace
} // namespace collcheck::nccl_double_test
