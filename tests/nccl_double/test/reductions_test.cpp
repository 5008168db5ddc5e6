// AllReduce, Reduce and ReduceScatter for every element type and operator, ncclAvg's two
// implementations (integer: wrapped sum divided and truncated; floating: pre-multiplied by 1/P)
// and PreMulSum with host and device scalars. Expected values come from the formula on each rank.
#include "tests/nccl_double/test/mpi_environment.h"
#include "tests/nccl_double/test/test_values.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace collcheck::nccl_double_test {
namespace {

struct OperatorUnderTest {
  ncclRedOp_t op;
  const char *name;
};
const OperatorUnderTest kOperators[] = {
    {ncclSum, "sum"}, {ncclProd, "prod"}, {ncclMax, "max"}, {ncclMin, "min"}, {ncclAvg, "avg"}};

// Small exact values: every partial result of every type stays representable (|prod| <= 81).
double contribution(ncclRedOp_t op, const TypeUnderTest &type, int rank, std::size_t index) {
  const int i = int(index);
  switch (op) {
  case ncclProd: {
    const double factor = (rank + i) % 3 + 1;
    return type.isSigned && (rank + i) % 4 == 0 ? -factor : factor;
  }
  case ncclMax:
  case ncclMin: {
    const int spread = (rank * 7 + i * 5) % 11;
    return (type.isSigned ? spread - 5 : spread) + (type.floating ? 0.25 : 0.0);
  }
  default: {
    const int spread = (rank * 5 + i * 3) % 7;
    return (type.isSigned ? spread - 3 : spread) + (type.floating ? 0.5 : 0.0);
  }
  }
}

double expectedResult(ncclRedOp_t op, const TypeUnderTest &type, int ranks, std::size_t index) {
  double result = contribution(op, type, 0, index);
  for (int rank = 1; rank < ranks; ++rank) {
    const double value = contribution(op, type, rank, index);
    if (op == ncclProd)
      result *= value;
    else if (op == ncclMax)
      result = std::max(result, value);
    else if (op == ncclMin)
      result = std::min(result, value);
    else
      result += value;
  }
  if (op == ncclAvg)
    return type.floating ? result / ranks : std::trunc(result / ranks);
  return result;
}

// Floating ncclAvg rounds 1/P and every product and partial sum to the type; all else is exact.
double tolerance(ncclRedOp_t op, const TypeUnderTest &type, int ranks, double expected) {
  if (op != ncclAvg || !type.floating)
    return 0;
  return (ranks + 3) * type.epsilon * std::max(4.0, std::fabs(expected));
}

std::string label(const TypeUnderTest &type, const OperatorUnderTest &op, const char *variant) {
  return std::string(type.name) + " " + op.name + " " + variant + " on " +
         std::to_string(worldSize()) + " ranks";
}

TEST(AllReduce, EveryTypeAndOperatorOutOfPlaceAndInPlace) {
  const std::size_t count = 37;
  const int rank = worldRank(), ranks = worldSize();
  for (const TypeUnderTest &type : allTypes())
    for (const OperatorUnderTest &op : kOperators)
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(label(type, op, inPlace ? "in place" : "out of place"));
        TypedBuffer send(type, count), receive(type, count);
        for (std::size_t i = 0; i < count; ++i)
          send.set(i, contribution(op.op, type, rank, i));
        void *output = inPlace ? send.data() : receive.data();
        EXPECT_EQ(ncclSuccess, ncclAllReduce(send.data(), output, count, type.type, op.op,
                                             worldComm(), nullptr));
        const TypedBuffer &result = inPlace ? send : receive;
        for (std::size_t i = 0; i < count; ++i) {
          const double expected = expectedResult(op.op, type, ranks, i);
          EXPECT_NEAR(expected, result.at(i), tolerance(op.op, type, ranks, expected))
              << "element " << i;
        }
      }
}

TEST(Reduce, EveryTypeAndOperatorToTheLastRank) {
  const std::size_t count = 19;
  const int rank = worldRank(), ranks = worldSize(), root = ranks - 1;
  for (const TypeUnderTest &type : allTypes())
    for (const OperatorUnderTest &op : kOperators) {
      SCOPED_TRACE(label(type, op, "to the last rank"));
      TypedBuffer send(type, count), receive(type, count);
      for (std::size_t i = 0; i < count; ++i) {
        send.set(i, contribution(op.op, type, rank, i));
        receive.set(i, -1);
      }
      // Only the root needs a receive buffer.
      void *output = rank == root ? receive.data() : nullptr;
      EXPECT_EQ(ncclSuccess, ncclReduce(send.data(), output, count, type.type, op.op, root,
                                        worldComm(), nullptr));
      if (rank != root)
        continue;
      for (std::size_t i = 0; i < count; ++i) {
        const double expected = expectedResult(op.op, type, ranks, i);
        EXPECT_NEAR(expected, receive.at(i), tolerance(op.op, type, ranks, expected))
            << "element " << i;
      }
    }
}

TEST(Reduce, InPlaceAtRankZero) {
  const TypeUnderTest &type = allTypes()[2]; // int32
  const std::size_t count = 8;
  TypedBuffer buffer(type, count);
  for (std::size_t i = 0; i < count; ++i)
    buffer.set(i, contribution(ncclSum, type, worldRank(), i));
  EXPECT_EQ(ncclSuccess, ncclReduce(buffer.data(), buffer.data(), count, type.type, ncclSum, 0,
                                    worldComm(), nullptr));
  if (worldRank() != 0)
    return;
  for (std::size_t i = 0; i < count; ++i)
    EXPECT_EQ(expectedResult(ncclSum, type, worldSize(), i), buffer.at(i));
}

TEST(ReduceScatter, EveryTypeAndOperatorOutOfPlaceAndInPlace) {
  const std::size_t block = 13;
  const int rank = worldRank(), ranks = worldSize();
  const std::size_t total = block * std::size_t(ranks);
  for (const TypeUnderTest &type : allTypes())
    for (const OperatorUnderTest &op : kOperators)
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(label(type, op, inPlace ? "in place" : "out of place"));
        TypedBuffer send(type, total), receive(type, block);
        for (std::size_t i = 0; i < total; ++i)
          send.set(i, contribution(op.op, type, rank, i));
        // In place: the result lands on this rank's own block of the input.
        void *output = inPlace ? send.element(block * std::size_t(rank)) : receive.data();
        EXPECT_EQ(ncclSuccess, ncclReduceScatter(send.data(), output, block, type.type, op.op,
                                                 worldComm(), nullptr));
        for (std::size_t j = 0; j < block; ++j) {
          const std::size_t index = block * std::size_t(rank) + j;
          const double expected = expectedResult(op.op, type, ranks, index);
          const double got = inPlace ? send.at(index) : receive.at(j);
          EXPECT_NEAR(expected, got, tolerance(op.op, type, ranks, expected)) << "element " << j;
        }
      }
}

TEST(Sum, IntegersWrapLikeTheGpu) {
  const int ranks = worldSize();
  TypedBuffer unsignedBytes(allTypes()[1], 1), signedBytes(allTypes()[0], 1);
  unsignedBytes.set(0, 200);
  signedBytes.set(0, 100);
  EXPECT_EQ(ncclSuccess, ncclAllReduce(unsignedBytes.data(), unsignedBytes.data(), 1, ncclUint8,
                                       ncclSum, worldComm(), nullptr));
  EXPECT_EQ(ncclSuccess, ncclAllReduce(signedBytes.data(), signedBytes.data(), 1, ncclInt8, ncclSum,
                                       worldComm(), nullptr));
  EXPECT_EQ((200 * ranks) % 256, unsignedBytes.at(0));
  EXPECT_EQ((100 * ranks + 128) % 256 - 128, signedBytes.at(0));
}

TEST(Average, IntegerAverageTruncatesTowardZero) {
  const int ranks = worldSize();
  std::int32_t value = worldRank() == 0 ? -3 : 0;
  EXPECT_EQ(ncclSuccess,
            ncclAllReduce(&value, &value, 1, ncclInt32, ncclAvg, worldComm(), nullptr));
  EXPECT_EQ(int(std::trunc(-3.0 / ranks)), value); // -1 for 2 and 3 ranks, 0 for 4; never floor
}

TEST(Average, IntegerAverageDividesTheWrappedSum) {
  const int ranks = worldSize();
  std::int8_t value = 100;
  EXPECT_EQ(ncclSuccess, ncclAllReduce(&value, &value, 1, ncclInt8, ncclAvg, worldComm(), nullptr));
  const int wrapped = (100 * ranks + 128) % 256 - 128;
  EXPECT_EQ(int(std::trunc(double(wrapped) / ranks)), int(value));
}

// PreMulSum: every rank multiplies its own input by its own scalar, then the results are summed.
double rankScalar(const TypeUnderTest &type, int rank) {
  return type.floating ? 0.5 * (rank + 1) : rank + 1;
}

double expectedPreMulSum(const TypeUnderTest &type, int ranks, std::size_t index) {
  double sum = 0;
  for (int rank = 0; rank < ranks; ++rank)
    sum += rankScalar(type, rank) * contribution(ncclSum, type, rank, index);
  return sum;
}

void checkPreMulSum(ncclScalarResidence_t residence) {
  const std::size_t block = 11;
  const int rank = worldRank(), ranks = worldSize();
  const std::size_t total = block * std::size_t(ranks);
  for (const TypeUnderTest &type : allTypes()) {
    SCOPED_TRACE(std::string(type.name) +
                 (residence == ncclScalarDevice ? " device scalar" : " host scalar"));
    TypedBuffer scalar(type, 1);
    // A host scalar is read at creation, a device scalar when the collective runs: the value
    // present at the other moment is a decoy that must not be used.
    scalar.set(0, residence == ncclScalarHostImmediate ? rankScalar(type, rank) : 7);
    ncclRedOp_t op;
    EXPECT_EQ(ncclSuccess,
              ncclRedOpCreatePreMulSum(&op, scalar.data(), type.type, residence, worldComm()));
    scalar.set(0, residence == ncclScalarHostImmediate ? 7 : rankScalar(type, rank));

    TypedBuffer send(type, total), all(type, total), scattered(type, block), root(type, total);
    for (std::size_t i = 0; i < total; ++i)
      send.set(i, contribution(ncclSum, type, rank, i));
    EXPECT_EQ(ncclSuccess,
              ncclAllReduce(send.data(), all.data(), total, type.type, op, worldComm(), nullptr));
    EXPECT_EQ(ncclSuccess, ncclReduceScatter(send.data(), scattered.data(), block, type.type, op,
                                             worldComm(), nullptr));
    EXPECT_EQ(ncclSuccess,
              ncclReduce(send.data(), root.data(), total, type.type, op, 0, worldComm(), nullptr));
    for (std::size_t i = 0; i < total; ++i) {
      EXPECT_EQ(expectedPreMulSum(type, ranks, i), all.at(i)) << "allreduce element " << i;
      if (rank == 0) {
        EXPECT_EQ(expectedPreMulSum(type, ranks, i), root.at(i)) << "reduce element " << i;
      }
    }
    for (std::size_t j = 0; j < block; ++j)
      EXPECT_EQ(expectedPreMulSum(type, ranks, block * std::size_t(rank) + j), scattered.at(j))
          << "reducescatter element " << j;
    EXPECT_EQ(ncclSuccess, ncclRedOpDestroy(op, worldComm()));
  }
}

TEST(PreMulSum, HostScalarIsReadWhenTheOperatorIsCreated) {
  checkPreMulSum(ncclScalarHostImmediate);
}

TEST(PreMulSum, DeviceScalarIsReadWhenTheCollectiveRuns) { checkPreMulSum(ncclScalarDevice); }

TEST(PreMulSum, CompensatesLocalMeansOfTheSeedExample) {
  // Rank r holds n_r items with mean gradient m_r; scaling by n_r/N and summing gives the global
  // item mean (1/N) sum n_r m_r. Here n_r = 2 + 4r and m_r = 1 + 2r.
  const int rank = worldRank(), ranks = worldSize();
  double globalCount = 0, weighted = 0;
  for (int r = 0; r < ranks; ++r) {
    globalCount += 2 + 4 * r;
    weighted += (2 + 4 * r) * (1 + 2 * r);
  }
  double scale = (2 + 4 * rank) / globalCount, gradient = 1 + 2 * rank;
  ncclRedOp_t op;
  EXPECT_EQ(ncclSuccess, ncclRedOpCreatePreMulSum(&op, &scale, ncclFloat64, ncclScalarHostImmediate,
                                                  worldComm()));
  EXPECT_EQ(ncclSuccess,
            ncclAllReduce(&gradient, &gradient, 1, ncclFloat64, op, worldComm(), nullptr));
  EXPECT_NEAR(weighted / globalCount, gradient, 1e-12); // 2.5 on the seed's two ranks
  EXPECT_EQ(ncclSuccess, ncclRedOpDestroy(op, worldComm()));
}

TEST(PreMulSum, OperatorIsBoundToItsDatatypeAndLifetime) {
  float scalar = 1;
  ncclRedOp_t op;
  EXPECT_EQ(ncclSuccess, ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32,
                                                  ncclScalarHostImmediate, worldComm()));
  double wrongType = 1;
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(&wrongType, &wrongType, 1, ncclFloat64, op, worldComm(), nullptr));
  EXPECT_NE(std::string::npos, std::string(ncclGetLastError(worldComm())).find("datatype"));
  EXPECT_EQ(ncclSuccess, ncclRedOpDestroy(op, worldComm()));
  float value = 1;
  EXPECT_EQ(ncclInvalidArgument,
            ncclAllReduce(&value, &value, 1, ncclFloat32, op, worldComm(), nullptr));
  EXPECT_EQ(ncclInvalidArgument, ncclRedOpDestroy(op, worldComm()));
  EXPECT_EQ(ncclInvalidArgument, ncclRedOpDestroy(ncclSum, worldComm()));
}

} // namespace
} // namespace collcheck::nccl_double_test
