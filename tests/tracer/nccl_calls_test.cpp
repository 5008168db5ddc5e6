// NCCL under the tracer, through the host-memory test double of the NCCL API (tests/nccl_double):
// every recorded NCCL call with its fields, communicator identities for init, split and a second
// unique id, groups, PreMulSum scalars, and NCCL loaded by dlopen(RTLD_LOCAL).
#include "tests/tracer/trace_set.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

using namespace collcheck;
using namespace collcheck::testing;
using format::DataType;
using format::Kind;
using format::ReduceOp;

namespace {

constexpr int kRanks = 3;

struct Expected {
  Kind kind;
  uint64_t count;
  ReduceOp op;
  int peer;
};

class NcclCalls : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = freshDir("nccl_all_calls");
    ASSERT_EQ(runTraced(mpirun(kRanks) + COLLCHECK_PROGRAM_DIR "/nccl_all_calls", dir_), 0);
    traces_ = loadTraces(dir_);
  }
  static inline std::string dir_;
  static inline std::vector<ProcessTrace> traces_;
};

std::vector<format::Record> ncclCreates(const ProcessTrace &t) {
  std::vector<format::Record> out;
  for (const format::Record &r : ofKind(t, Kind::CommCreate))
    if (r.flags & format::kFlagNccl)
      out.push_back(r);
  return out;
}

} // namespace

TEST_F(NcclCalls, EveryCallOnTheFirstCommunicatorWithItsFields) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces_[r];
    std::vector<format::Record> creates = ncclCreates(t);
    ASSERT_EQ(creates.size(), 3u) << "init, split, init with config";
    uint64_t comm = creates[0].commId;
    EXPECT_EQ(creates[0].op, static_cast<uint8_t>(format::CommOrigin::NcclInitRank));
    EXPECT_EQ(creates[0].count, static_cast<uint64_t>(kRanks));
    EXPECT_EQ(creates[0].commRank, r);
    int next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
    std::vector<Expected> want = {
        {Kind::AllReduce, 8, ReduceOp::Sum, -1},
        {Kind::AllReduce, 8, ReduceOp::Avg, -1},
        {Kind::Reduce, 4, ReduceOp::Max, 1},
        {Kind::Broadcast, 5, ReduceOp::None, 0},
        {Kind::Broadcast, 6, ReduceOp::None, 1},
        {Kind::AllGather, 3, ReduceOp::None, -1},
        {Kind::ReduceScatter, 2, ReduceOp::Min, -1},
        {Kind::AllToAll, 2, ReduceOp::None, -1},
        {Kind::Gather, 3, ReduceOp::None, 0},
        {Kind::Scatter, 3, ReduceOp::None, 1},
        {Kind::Send, 7, ReduceOp::None, next},
        {Kind::Recv, 7, ReduceOp::None, prev},
        {Kind::AllReduce, 8, ReduceOp::PreMulSum, -1},
        {Kind::AllReduce, 8, ReduceOp::PreMulSum, -1},
    };
    std::vector<format::Record> got = sequenced(t, comm);
    ASSERT_EQ(got.size(), want.size()) << "rank " << r;
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE("rank " + std::to_string(r) + " call " + std::to_string(i));
      EXPECT_EQ(got[i].kind, static_cast<uint8_t>(want[i].kind));
      EXPECT_EQ(got[i].seq(), i);
      EXPECT_EQ(got[i].commRank, r);
      EXPECT_EQ(got[i].count, want[i].count);
      EXPECT_EQ(got[i].op, static_cast<uint8_t>(want[i].op));
      EXPECT_EQ(got[i].peer, want[i].peer);
      EXPECT_EQ(got[i].dataType, static_cast<uint8_t>(DataType::Float32));
      EXPECT_TRUE(got[i].flags & format::kFlagNccl);
      EXPECT_TRUE(format::returned(got[i]));
    }
    // Every call names its call site (format 3), each line of the program its own.
    for (const format::Record &call : got)
      EXPECT_NE(format::callSite(call, t.header.version), format::kNoSite);
    EXPECT_NE(format::callSite(got[10], 3), format::callSite(got[11], 3));
    // Send and recv sit in one group, the other calls in none: a call's group is its thread's
    // group_start before it (the group ordinal stays on that record).
    auto position = [&](Kind kind, uint64_t onComm) {
      for (size_t i = 0; i < t.records.size(); ++i)
        if (t.records[i].kind == static_cast<uint8_t>(kind) &&
            (onComm == 0 || t.records[i].commId == onComm))
          return i;
      return t.records.size();
    };
    size_t start = position(Kind::GroupStart, 0), end = position(Kind::GroupEnd, 0);
    EXPECT_LT(position(Kind::Scatter, comm), start);
    EXPECT_LT(start, position(Kind::Send, comm));
    EXPECT_LT(position(Kind::Send, comm), position(Kind::Recv, comm));
    EXPECT_LT(position(Kind::Recv, comm), end);
    EXPECT_NE(format::groupOrdinal(t.records[start], t.header.version), 0);
    // The host scalar is recorded as it was when the operator was created; the device one is not.
    EXPECT_DOUBLE_EQ(got[12].auxDouble(), 0.5);
    EXPECT_FALSE(got[12].flags & format::kFlagScalarUnknown);
    EXPECT_TRUE(got[13].flags & format::kFlagScalarUnknown);
    EXPECT_EQ(ofKind(t, Kind::GroupStart).size(), 1u);
    EXPECT_EQ(ofKind(t, Kind::GroupEnd).size(), 1u);
    EXPECT_EQ(ofKind(t, Kind::RedOpCreate).size(), 2u);
    EXPECT_EQ(ofKind(t, Kind::RedOpDestroy).size(), 2u);
    EXPECT_GT(t.header.ncclVersion, 0);
  }
}

TEST_F(NcclCalls, CommunicatorIdsAgreeWithoutCommunication) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  std::vector<std::vector<format::Record>> creates;
  for (const ProcessTrace &t : traces_)
    creates.push_back(ncclCreates(t));
  for (int r = 1; r < kRanks; ++r) {
    EXPECT_EQ(creates[r][0].commId, creates[0][0].commId) << "same unique id, same communicator";
    EXPECT_EQ(creates[r][2].commId, creates[0][2].commId);
  }
  EXPECT_NE(creates[0][0].commId, creates[0][2].commId) << "another unique id, another id";
  // Split by parity: ranks 0 and 2 share one, rank 1 has another, both derived from the parent.
  EXPECT_EQ(creates[0][1].commId, creates[2][1].commId);
  EXPECT_NE(creates[0][1].commId, creates[1][1].commId);
  EXPECT_EQ(creates[0][1].aux, creates[0][0].commId);
  EXPECT_EQ(creates[0][1].op, static_cast<uint8_t>(format::CommOrigin::NcclSplit));
  EXPECT_EQ(creates[2][1].commRank, 1);
  EXPECT_EQ(creates[2][1].count, 2u);
  std::set<uint64_t> all;
  for (const auto &c : creates[0])
    all.insert(c.commId);
  all.insert(creates[1][1].commId);
  EXPECT_EQ(all.size(), 4u);
}

TEST_F(NcclCalls, LifecycleReleasesAreRecorded) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  for (const ProcessTrace &t : traces_) {
    std::multiset<uint8_t> hows;
    for (const format::Record &r : ofKind(t, Kind::CommRelease))
      hows.insert(r.op);
    EXPECT_EQ(hows.count(static_cast<uint8_t>(format::CommReleaseHow::NcclFinalize)), 1u);
    EXPECT_EQ(hows.count(static_cast<uint8_t>(format::CommReleaseHow::NcclDestroy)), 2u);
    EXPECT_EQ(hows.count(static_cast<uint8_t>(format::CommReleaseHow::NcclAbort)), 1u);
  }
}

TEST(NcclDlopenLocal, NcclInALibraryLoadedWithRtldLocalIsInterceptedAndForwarded) {
  std::string dir = freshDir("nccl_rtld_local");
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/dlopen_local " COLLCHECK_PROGRAM_DIR
                                                        "/libcollcheck_nccl_user.so",
                      dir),
            0)
      << "the library's collectives must return correct values through the wrappers";
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (const ProcessTrace &t : traces) {
    std::vector<format::Record> reduces = ofKind(t, Kind::AllReduce);
    ASSERT_EQ(reduces.size(), 5u);
    for (size_t i = 0; i < reduces.size(); ++i) {
      EXPECT_EQ(reduces[i].seq(), i);
      EXPECT_TRUE(reduces[i].flags & format::kFlagNccl);
      EXPECT_EQ(reduces[i].dataType, static_cast<uint8_t>(DataType::Float64));
    }
  }
}

TEST(NcclDeviceCapture, CountReductionOnDeviceBuffersIsCopiedOnItsStream) {
  std::string dir = freshDir("nccl_device_capture");
  std::string printed = dir + ".printed.txt"; // beside the trace folder, made by the run
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/nccl_device_capture >" + printed, dir),
            0);
  // Input and output each have their host function: the input's runs before the collective, so a
  // collective that then hangs still leaves its inputs (counts) for the post-mortem.
  std::ifstream in(printed);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(text.find("rank " + std::to_string(r) + " host functions 2\n"), std::string::npos)
        << text;
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const ProcessTrace &t = traces[r];
    std::vector<format::Record> reduces = ofKind(t, Kind::AllReduce);
    ASSERT_EQ(reduces.size(), 1u);
    std::vector<format::Record> captures = ofKind(t, Kind::ValueCapture);
    ASSERT_EQ(captures.size(), 2u) << "input and output, copied on the stream";
    for (const format::Record &c : captures) {
      EXPECT_TRUE(c.flags & format::kFlagDeviceBuffer);
      EXPECT_EQ(c.seq(), reduces[0].seq());
      EXPECT_EQ(c.commId, reduces[0].commId);
    }
    EXPECT_EQ(captures[0].op, format::kPackedInputs);
    EXPECT_DOUBLE_EQ(captures[0].auxDouble(), r + 1.0);
    EXPECT_EQ(captures[1].op, format::kPackedOutputs);
    EXPECT_EQ(captures[1].flags, format::kFlagNccl | format::kFlagDeviceBuffer);
    EXPECT_DOUBLE_EQ(captures[1].auxDouble(), 3.0);
    // The stream runs 20 ms behind the host: the captures were published when the stream got
    // there, well after the call was made and returned.
    EXPECT_LT(format::durationTicks(reduces[0]) / t.header.tscTicksPerNs, 15e6);
    for (const format::Record &c : captures) {
      double gapNs = static_cast<double>(c.tscStart - reduces[0].tscStart) / t.header.tscTicksPerNs;
      EXPECT_GT(gapNs, 15e6);
    }
  }
}

TEST(NcclDeviceCapture, ADriverLoadedAfterTheFirstCaptureIsUsedAtTheNextCall) {
  // The first query found no driver; the NCCL call after dlopen must copy on its stream (device
  // flag), not read the "device" buffers from the host.
  std::string dir = freshDir("nccl_device_capture_late");
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/nccl_device_capture_late " +
                          COLLCHECK_PROGRAM_DIR "/libcollcheck_cuda_driver_double.so >/dev/null",
                      dir),
            0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const ProcessTrace &t = traces[r];
    std::vector<format::Record> reduces = ofKind(t, Kind::AllReduce);
    ASSERT_EQ(reduces.size(), 2u) << "the MPI one, then the NCCL one";
    // The MPI one holds its values in its own record, read from the host; the NCCL one's take a
    // record each.
    EXPECT_TRUE(format::holdsValues(reduces[0]));
    EXPECT_FALSE(format::holdsValues(reduces[1]));
    EXPECT_TRUE(ofKind(t, Kind::CapturedValues).empty());
    std::vector<format::Record> captures = ofKind(t, Kind::ValueCapture);
    ASSERT_EQ(captures.size(), 2u) << "input and output of the NCCL one";
    for (const format::Record &c : captures) {
      EXPECT_TRUE(c.flags & format::kFlagNccl) << "seq " << c.seq();
      EXPECT_TRUE(c.flags & format::kFlagDeviceBuffer) << "seq " << c.seq();
    }
    EXPECT_DOUBLE_EQ(captures[1].auxDouble(), 3.0) << "the NCCL output, copied on the stream";
  }
}

TEST(NcclOpsAndPlaces, InPlaceBlocksAndEveryLivePreMulSumAreRecordedAlikeOnEveryRank) {
  // programs/nccl_ops_and_places.cpp: in-place AllGather, ReduceScatter, Gather and Scatter, then
  // 5,000 live PreMulSum operators (more than the tracer's table holds), operator i scaling by i.
  constexpr int kOps = 5000;
  std::string dir = freshDir("nccl_ops_and_places");
  ASSERT_EQ(
      runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/nccl_ops_and_places " + std::to_string(kOps),
                dir),
      0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (const ProcessTrace &t : traces) {
    for (Kind kind : {Kind::AllGather, Kind::ReduceScatter, Kind::Gather, Kind::Scatter}) {
      std::vector<format::Record> calls = ofKind(t, kind);
      ASSERT_EQ(calls.size(), 1u) << t.path;
      // Gather and Scatter are in place at the root (rank 1) only, as in MPI.
      bool rooted = kind == Kind::Gather || kind == Kind::Scatter;
      EXPECT_EQ((calls[0].flags & format::kFlagInPlace) != 0, !rooted || calls[0].commRank == 1)
          << t.path << ": " << format::kindName(kind) << " on rank " << calls[0].commRank;
    }
  }
  for (const ProcessTrace &t : traces) {
    std::vector<format::Record> reduces = ofKind(t, Kind::AllReduce);
    ASSERT_EQ(reduces.size(), static_cast<size_t>(kOps)) << t.path;
    size_t known = 0;
    for (size_t i = 0; i < reduces.size(); ++i) {
      // A full table loses the scalar, never the kind: a `user` op here would differ by rank.
      ASSERT_EQ(reduces[i].op, static_cast<uint8_t>(ReduceOp::PreMulSum)) << t.path << ": " << i;
      if (reduces[i].flags & format::kFlagScalarUnknown)
        continue;
      EXPECT_EQ(reduces[i].auxDouble(), static_cast<double>(i)) << t.path << ": " << i;
      ++known;
    }
    EXPECT_GE(known, 3500u) << t.path << ": the table holds 4,096 operators";
  }
}
