// Runs programs/mpi_fortran.f90 (`use mpi`) and programs/mpi_fortran_f08.f90 (`use mpi_f08`) under
// the tracer with real mpirun: Open MPI's Fortran bindings call PMPI_* directly, so these records
// come from the Fortran wrappers (tracer/preload/mpi_fortran.cpp) alone.
#include "tests/tracer/trace_set.h"

#include <gtest/gtest.h>

using namespace collcheck;
using namespace collcheck::testing;
using format::CommOrigin;
using format::DataType;
using format::Kind;
using format::ReduceOp;

namespace {

constexpr int kRanks = 4;

// What both programs issue on MPI_COMM_WORLD, as rank `r` sees it.
std::vector<ExpectedCall> expectedWorld(int r) {
  const uint64_t ramp = kRanks * (kRanks + 1) / 2; // reduce_scatter's counts are 1, 2, ...
  return {
      {Kind::Barrier, 0, DataType::None, ReduceOp::None, -1, 0, 0},
      {Kind::Broadcast, 3, DataType::Float64, ReduceOp::None, 1, 0, 0},
      {Kind::Reduce, 5, DataType::Float64, ReduceOp::Sum, 0, 0, 0},
      {Kind::AllReduce, 7, DataType::Float32, ReduceOp::Max, -1, 0, 0},
      {Kind::AllReduce, 3, DataType::Float64, ReduceOp::Sum, -1, 0, format::kFlagInPlace},
      // The receive count, recorded beside the send count it equals (format::OtherSide).
      {Kind::AllGather, 2, DataType::Int32, static_cast<ReduceOp>(format::OtherSide::SameAsCount),
       -1, 0, 0},
      {Kind::ReduceScatter, static_cast<uint64_t>(r) + 1, DataType::Int32, ReduceOp::Min, -1, ramp,
       0},
      {Kind::AllReduce, 4, DataType::Int64, ReduceOp::Max, -1, 0, format::kFlagNonBlocking},
      // One 4-byte MPI_INTEGER to and from every rank, each with its own datatype argument.
      {Kind::AllToAllw, 4 * kRanks, DataType::Byte, ReduceOp::None, -1, 4 * kRanks, 0},
  };
}

uint64_t createdId(const ProcessTrace &trace, CommOrigin origin) {
  for (const format::Record &r : ofKind(trace, Kind::CommCreate))
    if (r.op == static_cast<uint8_t>(origin))
      return r.commId;
  return 0;
}

class MpiFortran : public ::testing::TestWithParam<const char *> {
protected:
  std::vector<ProcessTrace> traced() {
    std::string program = GetParam();
    std::string dir = freshDir(program);
    EXPECT_EQ(runTraced(mpirun(kRanks) + COLLCHECK_PROGRAM_DIR "/" + program, dir), 0);
    return loadTraces(dir);
  }
};

} // namespace

TEST_P(MpiFortran, EveryCallIsRecordedOnceWithItsFields) {
  std::vector<ProcessTrace> traces = traced();
  ASSERT_EQ(traces.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(t.header.worldRank, r);
    EXPECT_EQ(t.header.worldSize, kRanks);
    EXPECT_EQ(t.header.finished, 1u);
    EXPECT_EQ(ofKind(t, Kind::Init).size(), 1u);
    EXPECT_EQ(ofKind(t, Kind::Finalize).size(), 1u);
    uint64_t world = createdId(t, CommOrigin::World);
    ASSERT_NE(world, 0u);
    expectCalls(sequenced(t, world), expectedWorld(r), r);
  }
}

TEST_P(MpiFortran, CommunicatorsSplitInFortranAreCreatedUsedAndReleased) {
  std::vector<ProcessTrace> traces = traced();
  ASSERT_EQ(traces.size(), static_cast<size_t>(kRanks));
  std::vector<uint64_t> ids;
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    uint64_t split = createdId(t, CommOrigin::Split);
    ASSERT_NE(split, 0u);
    ids.push_back(split);
    std::vector<int32_t> members = memberLists(t)[split];
    const std::vector<int32_t> part =
        r % 2 ? std::vector<int32_t>{1, 3} : std::vector<int32_t>{0, 2};
    EXPECT_EQ(members, part);
    std::vector<format::Record> calls = sequenced(t, split);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].kind, static_cast<uint8_t>(Kind::AllReduce));
    EXPECT_EQ(calls[0].count, 2u);
    EXPECT_EQ(calls[0].flags, format::kFlagInPlace);
    EXPECT_EQ(calls[0].commRank, r / 2);
    size_t released = 0;
    for (const format::Record &rel : ofKind(t, Kind::CommRelease))
      released += rel.commId == split;
    EXPECT_EQ(released, 1u);
  }
  EXPECT_EQ(ids[0], ids[2]) << "members of one part agree on its id";
  EXPECT_EQ(ids[1], ids[3]);
  EXPECT_NE(ids[0], ids[1]) << "the two parts differ";
}

TEST_P(MpiFortran, NeighborhoodCollectivesCountTheirArraysPerNeighbor) {
  // A periodic line of the 4 processes, two neighbors each: an all-gather of 2 integers, and an
  // all-to-all of an integer to one neighbor and a double precision value to the other, whose
  // datatype arrays have one entry per neighbor (2), not per member (4).
  std::vector<ProcessTrace> traces = traced();
  ASSERT_EQ(traces.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces[r];
    std::vector<format::Record> gathers = ofKind(t, Kind::NeighborAllGather);
    ASSERT_EQ(gathers.size(), 1u) << "rank " << r;
    expectCalls(sequenced(t, gathers[0].commId),
                {{Kind::NeighborAllGather, 2, DataType::Int32, ReduceOp::None, -1, 0, 0},
                 {Kind::NeighborAllToAllw, 4 + 8, DataType::Byte, ReduceOp::None, -1, 0, 0}},
                r);
  }
}

INSTANTIATE_TEST_SUITE_P(Bindings, MpiFortran, ::testing::Values("mpi_fortran", "mpi_fortran_f08"),
                         [](const auto &info) { return std::string(info.param); });
