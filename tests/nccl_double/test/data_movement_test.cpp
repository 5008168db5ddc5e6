// Broadcast, Bcast, AllGather, AlltoAll, Gather and Scatter for every element type: each value
// names its origin (rank, position), so a misplaced block shows as the wrong number.
#include "tests/nccl_double/test/mpi_environment.h"
#include "tests/nccl_double/test/test_values.h"

#include <gtest/gtest.h>

#include <string>

namespace collcheck::nccl_double_test {
namespace {

// Distinct for every (rank, index) of a test and exact in every type, int8 included.
double origin(int rank, std::size_t index) { return double(rank * 29 + int(index) % 29); }

std::string label(const TypeUnderTest &type) {
  return std::string(type.name) + " on " + std::to_string(worldSize()) + " ranks";
}

TEST(Broadcast, EveryTypeFromTheLastRank) {
  const std::size_t count = 23;
  const int rank = worldRank(), root = worldSize() - 1;
  for (const TypeUnderTest &type : allTypes()) {
    SCOPED_TRACE(label(type));
    TypedBuffer send(type, count), receive(type, count), inPlace(type, count);
    for (std::size_t i = 0; i < count; ++i) {
      send.set(i, origin(rank, i));
      inPlace.set(i, origin(rank, i));
      receive.set(i, -1);
    }
    EXPECT_EQ(ncclSuccess, ncclBroadcast(send.data(), receive.data(), count, type.type, root,
                                         worldComm(), nullptr));
    EXPECT_EQ(ncclSuccess, ncclBcast(inPlace.data(), count, type.type, root, worldComm(), nullptr));
    for (std::size_t i = 0; i < count; ++i) {
      EXPECT_EQ(origin(root, i), receive.at(i)) << "ncclBroadcast element " << i;
      EXPECT_EQ(origin(root, i), inPlace.at(i)) << "ncclBcast element " << i;
    }
  }
}

TEST(AllGather, EveryTypeOutOfPlaceAndInPlace) {
  const std::size_t count = 9;
  const int rank = worldRank(), ranks = worldSize();
  const std::size_t total = count * std::size_t(ranks);
  for (const TypeUnderTest &type : allTypes()) {
    SCOPED_TRACE(label(type));
    TypedBuffer send(type, count), receive(type, total), inPlace(type, total);
    for (std::size_t i = 0; i < count; ++i) {
      send.set(i, origin(rank, i));
      inPlace.set(count * std::size_t(rank) + i, origin(rank, i));
    }
    EXPECT_EQ(ncclSuccess,
              ncclAllGather(send.data(), receive.data(), count, type.type, worldComm(), nullptr));
    EXPECT_EQ(ncclSuccess, ncclAllGather(inPlace.element(count * std::size_t(rank)), inPlace.data(),
                                         count, type.type, worldComm(), nullptr));
    for (int from = 0; from < ranks; ++from)
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t at = count * std::size_t(from) + i;
        EXPECT_EQ(origin(from, i), receive.at(at)) << "block " << from << " element " << i;
        EXPECT_EQ(origin(from, i), inPlace.at(at)) << "in place block " << from << " element " << i;
      }
  }
}

TEST(AlltoAll, EveryTypeSendsBlockJToRankJ) {
  const std::size_t count = 5;
  const int rank = worldRank(), ranks = worldSize();
  const std::size_t total = count * std::size_t(ranks);
  for (const TypeUnderTest &type : allTypes()) {
    SCOPED_TRACE(label(type));
    TypedBuffer send(type, total), receive(type, total);
    // Block j of rank r carries origin(r, j * count + i): the receiver can tell both apart.
    for (std::size_t i = 0; i < total; ++i)
      send.set(i, origin(rank, i));
    EXPECT_EQ(ncclSuccess,
              ncclAlltoAll(send.data(), receive.data(), count, type.type, worldComm(), nullptr));
    for (int from = 0; from < ranks; ++from)
      for (std::size_t i = 0; i < count; ++i)
        EXPECT_EQ(origin(from, count * std::size_t(rank) + i),
                  receive.at(count * std::size_t(from) + i))
            << "block from rank " << from << " element " << i;
  }
}

TEST(Gather, EveryTypeToRankOne) {
  const std::size_t count = 7;
  const int rank = worldRank(), ranks = worldSize(), root = 1 % ranks;
  const std::size_t total = count * std::size_t(ranks);
  for (const TypeUnderTest &type : allTypes()) {
    SCOPED_TRACE(label(type));
    TypedBuffer send(type, count), receive(type, total);
    for (std::size_t i = 0; i < count; ++i)
      send.set(i, origin(rank, i));
    EXPECT_EQ(ncclSuccess, ncclGather(send.data(), rank == root ? receive.data() : nullptr, count,
                                      type.type, root, worldComm(), nullptr));
    if (rank != root)
      continue;
    for (int from = 0; from < ranks; ++from)
      for (std::size_t i = 0; i < count; ++i)
        EXPECT_EQ(origin(from, i), receive.at(count * std::size_t(from) + i))
            << "block " << from << " element " << i;
  }
}

TEST(Scatter, EveryTypeFromRankOne) {
  const std::size_t count = 7;
  const int rank = worldRank(), ranks = worldSize(), root = 1 % ranks;
  const std::size_t total = count * std::size_t(ranks);
  for (const TypeUnderTest &type : allTypes()) {
    SCOPED_TRACE(label(type));
    TypedBuffer send(type, total), receive(type, count);
    for (std::size_t i = 0; i < total; ++i)
      send.set(i, origin(rank, i));
    EXPECT_EQ(ncclSuccess, ncclScatter(rank == root ? send.data() : nullptr, receive.data(), count,
                                       type.type, root, worldComm(), nullptr));
    for (std::size_t i = 0; i < count; ++i)
      EXPECT_EQ(origin(root, count * std::size_t(rank) + i), receive.at(i)) << "element " << i;
  }
}

TEST(ZeroCount, CollectivesWithNothingToMoveSucceed) {
  float nothing = 0;
  EXPECT_EQ(ncclSuccess,
            ncclAllReduce(&nothing, &nothing, 0, ncclFloat32, ncclSum, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclAllGather(&nothing, &nothing, 0, ncclFloat32, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess,
            ncclBroadcast(&nothing, &nothing, 0, ncclFloat32, 0, worldComm(), nullptr));
}

} // namespace
} // namespace collcheck::nccl_double_test
