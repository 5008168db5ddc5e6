// Runs programs/mpi_all_collectives.c under the tracer with real mpirun and checks, record by
// record, every collective kind with its fields, the communicator identities and the process
// metadata.
#include "tests/tracer/trace_set.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <set>

using namespace collcheck;
using namespace collcheck::testing;
using format::DataType;
using format::Kind;
using format::ReduceOp;

namespace {

constexpr int kRanks = 4;

// What programs/mpi_all_collectives.c issues on MPI_COMM_WORLD, as rank `r` of `p` sees it.
std::vector<ExpectedCall> expectedWorld(int r, int p) {
  uint64_t ramp = static_cast<uint64_t>(p) * (p + 1) / 2; // sum of counts[i] = i + 1
  uint64_t pairs = 0;                                     // sum of pair[i] = r + i + 1
  for (int i = 0; i < p; ++i)
    pairs += static_cast<uint64_t>(r + i + 1);
  auto ur = static_cast<uint64_t>(r);
  // Gather, scatter, allgather and alltoall record the other side's count where it is significant
  // (the root's side of a gather or scatter at the root only): here equal to the count.
  constexpr auto same = static_cast<ReduceOp>(format::OtherSide::SameAsCount);
  std::vector<ExpectedCall> blocking = {
      {Kind::Barrier, 0, DataType::None, ReduceOp::None, -1, 0, 0},
      {Kind::Broadcast, 3, DataType::Float64, ReduceOp::None, 1, 0, 0},
      {Kind::Reduce, 5, DataType::Float64, ReduceOp::Sum, 0, 0, 0},
      {Kind::AllReduce, 7, DataType::Float32, ReduceOp::Max, -1, 0, 0},
      {Kind::Gather, 2, DataType::Int32, r == 0 ? same : ReduceOp::None, 0, 0, 0},
      {Kind::Gatherv, ur + 1, DataType::Float64, ReduceOp::None, 0, r == 0 ? ramp : 0, 0},
      {Kind::Scatter, 2, DataType::Int64, r == 1 ? same : ReduceOp::None, 1, 0, 0},
      {Kind::Scatterv, ur + 1, DataType::Float64, ReduceOp::None, 1, r == 1 ? ramp : 0, 0},
      {Kind::AllGather, 3, DataType::Int16, same, -1, 0, 0},
      {Kind::AllGatherv, ur + 1, DataType::Float64, ReduceOp::None, -1, ramp, 0},
      {Kind::AllToAll, 2, DataType::Float64, same, -1, 0, 0},
      {Kind::AllToAllv, pairs, DataType::Float64, ReduceOp::None, -1, pairs, 0},
      {Kind::AllToAllw, pairs * 8, DataType::Byte, ReduceOp::None, -1, pairs * 8, 0},
      {Kind::ReduceScatter, ur + 1, DataType::Float64, ReduceOp::Min, -1, ramp, 0},
      {Kind::ReduceScatterBlock, 2, DataType::Float64, ReduceOp::Prod, -1, 0, 0},
      {Kind::Scan, 4, DataType::Int32, ReduceOp::Sum, -1, 0, 0},
      {Kind::Exscan, 4, DataType::Int32, ReduceOp::Sum, -1, 0, 0},
  };
  std::vector<ExpectedCall> all = blocking;
  all.push_back(
      {Kind::AllReduce, 1, DataType::Float64, ReduceOp::Sum, -1, 0, format::kFlagInPlace});
  for (ExpectedCall e : blocking) {
    e.flags = format::kFlagNonBlocking;
    if (e.kind == Kind::Broadcast)
      e.root = 0;
    if (e.kind == Kind::AllReduce) {
      e.type = DataType::Float64;
      e.op = ReduceOp::Sum;
    }
    all.push_back(e);
  }
  all.push_back({Kind::AllReduce, 1, DataType::Int64, ReduceOp::Sum, -1, 0, 0});
  return all;
}

class MpiCollectives : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = freshDir("mpi_all_collectives");
    ASSERT_EQ(runTraced(mpirun(kRanks) + COLLCHECK_PROGRAM_DIR "/mpi_all_collectives", dir_), 0);
    traces_ = loadTraces(dir_);
  }
  static inline std::string dir_;
  static inline std::vector<ProcessTrace> traces_;
};

uint64_t createdId(const ProcessTrace &trace, format::CommOrigin origin, int nth = 0) {
  for (const format::Record &r : ofKind(trace, Kind::CommCreate))
    if (r.op == static_cast<uint8_t>(origin) && nth-- == 0)
      return r.commId;
  return 0;
}

} // namespace

TEST_F(MpiCollectives, OneCompleteFilePerRankWithProcessIdentity) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces_[r];
    EXPECT_EQ(t.header.worldRank, r);
    EXPECT_EQ(t.header.worldSize, kRanks);
    EXPECT_GT(t.header.pid, 0);
    EXPECT_STRNE(t.header.host, "");
    EXPECT_NE(std::string(t.header.mpiVersion).find("Open MPI"), std::string::npos);
    EXPECT_EQ(t.header.finished, 1u);
    EXPECT_EQ(t.summary.torn + t.summary.corrupt + t.summary.holes, 0u) << t.path;
    EXPECT_EQ(ofKind(t, Kind::Init).size(), 1u);
    EXPECT_EQ(ofKind(t, Kind::Finalize).size(), 1u);
  }
}

TEST_F(MpiCollectives, EveryWorldCollectiveRecordedWithItsFields) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  uint64_t world = createdId(traces_[0], format::CommOrigin::World);
  ASSERT_NE(world, 0u);
  for (int r = 0; r < kRanks; ++r) {
    expectCalls(sequenced(traces_[r], world), expectedWorld(r, kRanks), r);
  }
}

TEST_F(MpiCollectives, OneElementCountReductionsHoldTheirValuesInTheCallsOwnRecord) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    uint64_t world = createdId(traces_[r], format::CommOrigin::World);
    std::vector<format::Record> calls = sequenced(traces_[r], world);
    std::vector<format::Record> holding;
    for (const format::Record &c : calls)
      if (format::holdsValues(c))
        holding.push_back(c);
    // Two small SUM all-reduces on the world: the in-place one (one double) and the count (one
    // long); larger ones and other operations are not captured. Their values are in their own
    // records; only an output that is no non-negative integer takes a record of its own.
    ASSERT_EQ(holding.size(), 2u) << "rank " << r;
    for (const format::Record &c : ofKind(traces_[r], Kind::ValueCapture))
      EXPECT_NE(c.commId, world) << "rank " << r << ": a value record beside its call";
    for (const format::Record &c : ofKind(traces_[r], Kind::CapturedValues))
      if (c.commId == world) {
        EXPECT_EQ(c.op & (format::kPackedInputs | format::kPackedOutputs), format::kPackedOutputs)
            << "rank " << r << ": an output the call's record could not hold";
        EXPECT_EQ(c.seq(), holding[0].seq()) << "rank " << r;
      }
    const format::Record &count = holding[1];
    EXPECT_EQ(count.seq(), calls.back().seq()) << "the count is the last call";
    EXPECT_EQ(count.flags, 0) << "rank " << r;
    format::CapturedValue values[8];
    ASSERT_EQ(format::capturedValues(count, values), 2) << "rank " << r;
    EXPECT_FALSE(values[0].output);
    EXPECT_EQ(values[0].index, 0u);
    EXPECT_EQ(values[0].elements, 1u);
    EXPECT_DOUBLE_EQ(values[0].value, r + 1.0);
    EXPECT_TRUE(values[1].output);
    EXPECT_DOUBLE_EQ(values[1].value, kRanks * (kRanks + 1) / 2.0);
    // Its duration holds the output: no time is read from it.
    EXPECT_EQ(format::durationTicks(count), 0u);
    EXPECT_TRUE(format::returned(count));
    EXPECT_FALSE(format::failed(count));
  }
}

TEST(MpiCountValues, EachFormOfValueKeepsItsValuesInAtMostTwoRecords) {
  // programs/mpi_count_values.c on two ranks: rank r contributes r + 1 (r + 1.5, r + 0.25 where
  // fractional). Per call: the records beside the call's own, and what they and the call decode
  // to. A one-element count takes none (its values in the call's record) unless its output is no
  // non-negative integer (one record more); up to 4 elements whose inputs and outputs all fit
  // narrow slots, or 2 in wide ones, one (inputs and outputs together, written when the call
  // returns); 3 or 4 that need wide slots, two (the inputs written before the call).
  std::string dir = freshDir("mpi_count_values");
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_count_values", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const ProcessTrace &t = traces[static_cast<size_t>(r)];
    EXPECT_TRUE(ofKind(t, Kind::ValueCapture).empty()) << t.path;
    std::map<uint64_t, std::vector<format::CapturedValue>> inputs, outputs; // by call sequence
    std::map<uint64_t, int> records;
    auto take = [&](const format::Record &c) {
      format::CapturedValue values[8];
      int n = format::capturedValues(c, values);
      for (int k = 0; k < n; ++k)
        (values[k].output ? outputs : inputs)[c.seq()].push_back(values[k]);
      return n;
    };
    for (const format::Record &c : ofKind(t, Kind::CapturedValues)) {
      ASSERT_GT(take(c), 0) << t.path;
      ++records[c.seq()];
    }
    for (const format::Record &c : ofKind(t, Kind::AllReduce))
      if (format::holdsValues(c))
        take(c);
    auto expectValues = [&](uint64_t seq, int wantRecords, std::vector<double> in,
                            std::vector<double> out) {
      EXPECT_EQ(records[seq], wantRecords) << t.path << ": call " << seq;
      ASSERT_EQ(inputs[seq].size(), in.size()) << t.path << ": call " << seq;
      ASSERT_EQ(outputs[seq].size(), out.size()) << t.path << ": call " << seq;
      for (size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(inputs[seq][i].index, i);
        EXPECT_EQ(inputs[seq][i].elements, in.size());
        EXPECT_DOUBLE_EQ(inputs[seq][i].value, in[i]) << t.path << ": call " << seq << " in " << i;
      }
      for (size_t i = 0; i < out.size(); ++i)
        EXPECT_DOUBLE_EQ(outputs[seq][i].value, out[i])
            << t.path << ": call " << seq << " out " << i;
    };
    double x = r;
    expectValues(0, 0, {x + 1}, {3});
    expectValues(1, 1, {x + 0.25, 1, 2, 3}, {1.5, 2, 4, 6});
    expectValues(2, 1, {x + 1.5, 0.5}, {4, 1});
    expectValues(3, 2, {x + 1.5, 0.5, 1e12}, {4, 1, 2e12});
    expectValues(4, 2, {x + 1, double(1L << 40), 0, -7}, {3, double(1L << 41), 0, -14});
    expectValues(5, 0, {x + 1}, {});       // nonblocking: its result is not ready when it returns
    expectValues(6, 1, {x + 0.25}, {1.5}); // a fraction: the output in a record of its own
    expectValues(7, 1, {-(x + 1)}, {-3});  // a negative number: the same
    expectValues(8, 1, {x + 1, 10 * (x + 1)}, {3, 30});
  }
}

TEST_F(MpiCollectives, CommunicatorIdsAgreeAcrossMembersAndDifferAcrossCommunicators) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  using format::CommOrigin;
  std::map<std::string, std::vector<uint64_t>> ids; // communicator name -> id on each rank
  for (int r = 0; r < kRanks; ++r) {
    ids["world"].push_back(createdId(traces_[r], CommOrigin::World));
    ids["dup1"].push_back(createdId(traces_[r], CommOrigin::Dup, 0));
    ids["dup2"].push_back(createdId(traces_[r], CommOrigin::Dup, 1));
    ids["split"].push_back(createdId(traces_[r], CommOrigin::Split));
    ids["shared"].push_back(createdId(traces_[r], CommOrigin::SplitType));
    ids["self"].push_back(createdId(traces_[r], CommOrigin::Self));
  }
  for (const char *name : {"world", "dup1", "dup2", "shared"})
    for (int r = 1; r < kRanks; ++r)
      EXPECT_EQ(ids[name][r], ids[name][0]) << name << " on rank " << r;
  // Split by rank % 2: equal within a color, different across colors.
  for (int r = 2; r < kRanks; ++r)
    EXPECT_EQ(ids["split"][r], ids["split"][r % 2]);
  EXPECT_NE(ids["split"][0], ids["split"][1]);
  // MPI_COMM_SELF is a different communicator on every process.
  EXPECT_EQ(std::set<uint64_t>(ids["self"].begin(), ids["self"].end()).size(), size_t{kRanks});
  std::set<uint64_t> distinct = {ids["world"][0], ids["dup1"][0],  ids["dup2"][0],
                                 ids["split"][0], ids["split"][1], ids["shared"][0]};
  EXPECT_EQ(distinct.size(), 6u);
  // MPI_Comm_create over the even ranks: only they get it, all with one id.
  std::set<uint64_t> created;
  for (int r = 0; r < kRanks; ++r) {
    uint64_t id = createdId(traces_[r], CommOrigin::Create);
    EXPECT_EQ(id != 0, r % 2 == 0) << "rank " << r;
    if (id)
      created.insert(id);
  }
  EXPECT_EQ(created.size(), 1u);
}

TEST_F(MpiCollectives, MemberListsInWorldRanksAndParents) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces_[r];
    std::map<uint64_t, std::vector<int32_t>> members = memberLists(t);
    uint64_t split = createdId(t, format::CommOrigin::Split);
    // Key -rank reverses the order within a color.
    std::vector<int32_t> want;
    for (int w = kRanks - 1; w >= 0; --w)
      if (w % 2 == r % 2)
        want.push_back(w);
    EXPECT_EQ(members[split], want) << "rank " << r;
    std::vector<int32_t> world(kRanks);
    std::iota(world.begin(), world.end(), 0);
    EXPECT_EQ(members[createdId(t, format::CommOrigin::World)], world);
    for (const format::Record &c : ofKind(t, Kind::CommCreate)) {
      if (c.op == static_cast<uint8_t>(format::CommOrigin::Dup) ||
          c.op == static_cast<uint8_t>(format::CommOrigin::Split)) {
        EXPECT_NE(c.aux, 0u) << "a derived communicator names its parent";
        EXPECT_EQ(c.count, members[c.commId].size());
      }
    }
    // dup2's parent is dup1.
    EXPECT_EQ(ofKind(t, Kind::CommCreate)[3].aux, createdId(t, format::CommOrigin::Dup, 0));
  }
}

TEST_F(MpiCollectives, DerivedCommunicatorCallsAndReleases) {
  ASSERT_EQ(traces_.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    const ProcessTrace &t = traces_[r];
    uint64_t dup2 = createdId(t, format::CommOrigin::Dup, 1);
    std::vector<format::Record> calls = sequenced(t, dup2);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].kind, static_cast<uint8_t>(Kind::AllReduce));
    EXPECT_EQ(calls[0].seq(), 0u);
    uint64_t split = createdId(t, format::CommOrigin::Split);
    ASSERT_EQ(sequenced(t, split).size(), 1u);
    EXPECT_EQ(sequenced(t, split)[0].count, 2u);
    EXPECT_EQ(sequenced(t, split)[0].commRank, (kRanks - 1 - r) / 2);
    // Freed: shared, split, dup2, dup1 and (even ranks) created.
    EXPECT_EQ(ofKind(t, Kind::CommRelease).size(), r % 2 == 0 ? 5u : 4u);
  }
}

TEST(MpiCaptureResults, LeadingOutputElementsOfEveryAllReduceWhenAskedFor) {
  std::string dir = freshDir("capture_results");
  ASSERT_EQ(runTraced("COLLCHECK_CAPTURE_RESULTS=2 " + mpirun(kRanks) +
                          COLLCHECK_PROGRAM_DIR "/mpi_all_collectives",
                      dir),
            0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), static_cast<size_t>(kRanks));
  for (const ProcessTrace &t : traces) {
    uint64_t world = createdId(t, format::CommOrigin::World);
    std::vector<format::Record> calls = sequenced(t, world);
    // The blocking 7-element MAX all-reduce (call 3) of send[i] = rank + i: outputs P-1 and P.
    std::vector<format::Record> outputs;
    for (const format::Record &c : ofKind(t, Kind::ValueCapture))
      if (c.commId == world && c.seq() == calls[3].seq())
        outputs.push_back(c);
    ASSERT_EQ(outputs.size(), 2u);
    EXPECT_EQ(outputs[0].op, format::kPackedOutputs);
    EXPECT_EQ(outputs[1].op, format::kPackedOutputs);
    EXPECT_DOUBLE_EQ(outputs[0].auxDouble(), kRanks - 1.0);
    EXPECT_DOUBLE_EQ(outputs[1].auxDouble(), kRanks);
    EXPECT_EQ(outputs[1].count, 1u);
  }
}

TEST(MpiDatatypes, EveryNamedTypeKeepsItsMappingWhenCached) {
  // programs/mpi_types.c: one broadcast per type, in this order, then again, then in reverse. Every
  // call after the first pass is mapped from the tracer's handle cache, so one type's entry
  // overwriting another's shows here as the wrong type on a later pass.
  const std::vector<DataType> types = {
      DataType::Char,        DataType::Int8,      DataType::Uint8,      DataType::Byte,
      DataType::Int16,       DataType::Uint16,    DataType::Int32,      DataType::Uint32,
      DataType::Int64,       DataType::Uint64,    DataType::Int64,      DataType::Uint64,
      DataType::Float32,     DataType::Float64,   DataType::LongDouble, DataType::Int8,
      DataType::Uint8,       DataType::Int16,     DataType::Uint16,     DataType::Int32,
      DataType::Uint32,      DataType::Int64,     DataType::Uint64,     DataType::Bool,
      DataType::Int32,       DataType::Int64,     DataType::Int64,      DataType::Int64,
      DataType::Pair,        DataType::Pair,      DataType::Pair,       DataType::Pair,
      DataType::Pair,        DataType::Pair,      DataType::Complex32,  DataType::Complex64,
      DataType::ComplexLong, DataType::Complex32, DataType::Complex64};
  std::string dir = freshDir("mpi_types");
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_types", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (const ProcessTrace &t : traces) {
    std::vector<format::Record> calls = ofKind(t, Kind::Broadcast);
    ASSERT_EQ(calls.size(), 3 * types.size()) << t.path;
    for (size_t i = 0; i < calls.size(); ++i) {
      size_t pass = i / types.size(), k = i % types.size();
      DataType want = types[pass == 2 ? types.size() - 1 - k : k];
      EXPECT_EQ(static_cast<DataType>(calls[i].dataType), want)
          << t.path << ": call " << i << " (pass " << pass << ")";
    }
  }
}

TEST(MpiHandleCaches, AFreedAndReusedHandleIsNotTakenForTheOldObject) {
  // programs/mpi_handle_reuse.c: round r broadcasts twice with a contiguous type of r + 2 ints and
  // all-reduces twice with an operation of its own, then once with MPI_SUM, and frees both. The
  // second call of each pair is mapped from the tracer's caches; a round whose type or operation
  // got the freed one's handle back must still be recorded with its own facts.
  std::string dir = freshDir("mpi_handle_reuse");
  std::string out = dir + ".out";
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_handle_reuse >" + out, dir), 0);
  std::ifstream printed(out);
  std::string line;
  std::getline(printed, line);
  int typesReused = -1, opsReused = -1;
  ASSERT_EQ(std::sscanf(line.c_str(), "handles reused: types %d ops %d", &typesReused, &opsReused),
            2)
      << line;
#ifdef COLLCHECK_SANITIZED_PRELOAD
  // The sanitizer's allocator keeps freed memory in quarantine: Open MPI gets new addresses.
  if (typesReused == 0 && opsReused == 0)
    GTEST_SKIP() << "no handle was reused under the sanitizer's allocator: nothing to check";
#endif
  EXPECT_GE(typesReused, 1) << "no type got a freed one's handle: the test proves nothing";
  EXPECT_GE(opsReused, 1) << "no operation got a freed one's handle: the test proves nothing";
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (const ProcessTrace &t : traces) {
    std::vector<format::Record> broadcasts = ofKind(t, Kind::Broadcast);
    ASSERT_EQ(broadcasts.size(), 8u) << t.path;
    for (size_t i = 0; i < broadcasts.size(); ++i) {
      const format::Record &b = broadcasts[i];
      // By its signature: one item of r + 2 ints is r + 2 elements of int32.
      EXPECT_EQ(static_cast<DataType>(b.dataType), DataType::Int32) << t.path << ": call " << i;
      EXPECT_TRUE(b.flags & format::kFlagDerived) << t.path << ": call " << i;
      EXPECT_EQ(b.aux, i / 2 + 2) << t.path << ": call " << i;
      EXPECT_EQ(b.count, i / 2 + 2) << t.path << ": call " << i;
    }
    std::vector<format::Record> reductions = ofKind(t, Kind::AllReduce);
    ASSERT_EQ(reductions.size(), 12u) << t.path;
    for (size_t i = 0; i < reductions.size(); ++i)
      EXPECT_EQ(static_cast<format::ReduceOp>(reductions[i].op),
                i % 3 == 2 ? format::ReduceOp::Sum : format::ReduceOp::User)
          << t.path << ": call " << i;
  }
}

TEST(MpiUnwrappedCommunicators, EveryMemberGivesTheSameIdWhateverOrderItFirstUsesThemIn) {
  // programs/mpi_cart.c: a 2 x 2 grid, its rows and columns made by functions the tracer does not
  // wrap, first used in different orders on different ranks.
  std::string dir = freshDir("mpi_cart");
  ASSERT_EQ(runTraced(mpirun(4) + COLLCHECK_PROGRAM_DIR "/mpi_cart", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 4u);
  std::map<std::vector<int32_t>, std::set<uint64_t>> idsByMembers;
  for (const ProcessTrace &t : traces) {
    std::map<uint64_t, std::vector<int32_t>> lists = memberLists(t);
    size_t unknown = 0;
    for (const format::Record &c : ofKind(t, Kind::CommCreate))
      if (c.op == static_cast<uint8_t>(format::CommOrigin::Unknown)) {
        idsByMembers[lists[c.commId]].insert(c.commId);
        ++unknown;
      }
    EXPECT_EQ(unknown, 3u) << t.path << ": the grid, its row and its column";
  }
  // The grid (4 members), two rows and two columns (2 members each).
  EXPECT_EQ(idsByMembers.size(), 5u);
  for (const auto &[list, ids] : idsByMembers)
    EXPECT_EQ(ids.size(), 1u) << "members " << ::testing::PrintToString(list);
}

TEST(MpiCommunicatorLifecycle, CreateGroupTwiceAndAnAddressReusedAfterADisconnectKeepTheirIds) {
  // programs/mpi_comm_lifecycle.c: two communicators from MPI_Comm_create_group with one group
  // and tag; a split ended by MPI_Comm_disconnect, then a Cartesian grid (met in a call).
  std::string dir = freshDir("mpi_comm_lifecycle");
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_comm_lifecycle >/dev/null", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  std::set<std::vector<uint64_t>> groupIds; // each rank's, in creation order
  for (const ProcessTrace &t : traces) {
    std::vector<uint64_t> created, split, grid;
    for (const format::Record &c : ofKind(t, Kind::CommCreate)) {
      auto origin = static_cast<format::CommOrigin>(c.op);
      if (origin == format::CommOrigin::CreateGroup)
        created.push_back(c.commId);
      else if (origin == format::CommOrigin::Split)
        split.push_back(c.commId);
      else if (origin == format::CommOrigin::Unknown)
        grid.push_back(c.commId);
    }
    ASSERT_EQ(created.size(), 2u) << t.path;
    EXPECT_NE(created[0], created[1]) << t.path << ": one group and tag, two communicators";
    EXPECT_EQ(sequenced(t, created[0]).size(), 2u) << t.path;
    EXPECT_EQ(sequenced(t, created[1]).size(), 1u) << t.path;
    groupIds.insert(created);
    ASSERT_EQ(split.size(), 1u) << t.path;
    ASSERT_EQ(grid.size(), 1u) << t.path << ": the grid is a communicator of its own";
    EXPECT_EQ(sequenced(t, split[0]).size(), 1u) << t.path << ": nothing after the disconnect";
    EXPECT_EQ(sequenced(t, grid[0]).size(), 1u) << t.path;
    size_t disconnects = 0;
    for (const format::Record &r : ofKind(t, Kind::CommRelease))
      if (r.op == static_cast<uint8_t>(format::CommReleaseHow::Disconnect)) {
        EXPECT_EQ(r.commId, split[0]) << t.path;
        ++disconnects;
      }
    EXPECT_EQ(disconnects, 1u) << t.path;
  }
  EXPECT_EQ(groupIds.size(), 1u) << "every member gives the two communicators the same ids";
#ifdef COLLCHECK_TOOL
  EXPECT_EQ(runPlain(std::string(COLLCHECK_TOOL) + " analyze --quiet " + dir), 0)
      << "a correct program";
#endif
}

TEST(MpiNeighborhoodCollectives, EveryFormRecordedWithWhatThisProcessSends) {
  // programs/mpi_neighbors.c: on a periodic 1-D grid of 4 (two neighbors each, 2 ints to each),
  // the five neighborhood collectives, blocking then nonblocking; on a chain (rank r sends to
  // r+1 only) an all-to-all of 3 ints and two of one value of per-neighbor types.
  std::string dir = freshDir("mpi_neighbors");
  ASSERT_EQ(runTraced(mpirun(4) + COLLCHECK_PROGRAM_DIR "/mpi_neighbors", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 4u);
  std::set<uint64_t> grids, chains;
  for (const ProcessTrace &t : traces) {
    int r = t.header.worldRank;
    std::vector<format::Record> first = ofKind(t, Kind::NeighborAllGather);
    ASSERT_EQ(first.size(), 2u) << t.path << ": blocking and nonblocking";
    uint64_t grid = first[0].commId;
    std::vector<ExpectedCall> blocking = {
        {Kind::NeighborAllGather, 2, DataType::Int32, ReduceOp::None, -1, 0, 0},
        {Kind::NeighborAllGatherv, 2, DataType::Int32, ReduceOp::None, -1, 0, 0},
        {Kind::NeighborAllToAll, 2, DataType::Int32, ReduceOp::None, -1, 0, 0},
        {Kind::NeighborAllToAllv, 4, DataType::Int32, ReduceOp::None, -1, 0, 0},
        {Kind::NeighborAllToAllw, 16, DataType::Byte, ReduceOp::None, -1, 0, 0},
    };
    std::vector<ExpectedCall> onGrid = blocking;
    for (ExpectedCall e : blocking) {
      e.flags = format::kFlagNonBlocking;
      onGrid.push_back(e);
    }
    expectCalls(sequenced(t, grid), onGrid, r);
    // The chain's ends: rank 3 sends to nobody.
    std::vector<format::Record> v = ofKind(t, Kind::NeighborAllToAllv);
    ASSERT_EQ(v.size(), 3u) << t.path;
    uint64_t chain = v[2].commId;
    uint64_t sends = r < 3 ? 1 : 0;
    expectCalls(sequenced(t, chain),
                {{Kind::NeighborAllToAllv, 3 * sends, DataType::Int32, ReduceOp::None, -1, 0, 0},
                 {Kind::NeighborAllToAllw, 4 * sends, DataType::Byte, ReduceOp::None, -1, 0, 0},
                 {Kind::NeighborAllToAllw, 8 * sends, DataType::Byte, ReduceOp::None, -1, 0, 0}},
                r);
    grids.insert(grid);
    chains.insert(chain);
  }
  EXPECT_EQ(grids.size(), 1u) << "every member gives the grid one id";
  EXPECT_EQ(chains.size(), 1u) << "and the chain another";
  EXPECT_NE(*grids.begin(), *chains.begin());
#ifdef COLLCHECK_TOOL
  // Each process's counts are its own: a correct program.
  EXPECT_EQ(runPlain(std::string(COLLCHECK_TOOL) + " analyze --quiet " + dir), 0);
#endif
}

TEST(MpiPersistentCollectives, TheInitializationIsRecordedAsTheCollective) {
  // programs/mpi_persistent.c: between two barriers, a persistent all-reduce, broadcast and
  // barrier are initialized, started twice and freed; with "count", one more all-reduce is
  // initialized, by rank 3 with a count of 2 where the others pass 1, and freed unstarted; with
  // "shim", the all-reduce through MPI_Allreduce_init, which on Open MPI 4 only the program's own
  // stand-in defines: the wrapper then hands the call on to it (the program exits 1 otherwise),
  // and the stand-in's call of MPIX_Allreduce_init inside it is not recorded again.
  for (std::string mode : {"", "count", "shim"}) {
    const bool countMismatch = mode == "count";
    std::string dir = freshDir("mpi_persistent" + (mode.empty() ? "" : "_" + mode));
    std::string program = COLLCHECK_PROGRAM_DIR "/mpi_persistent";
    ASSERT_EQ(runTraced(mpirun(4) + program + (mode.empty() ? "" : " " + mode), dir), 0) << mode;
    std::vector<ProcessTrace> traces = loadTraces(dir);
    ASSERT_EQ(traces.size(), 4u);
    for (const ProcessTrace &t : traces) {
      const int r = t.header.worldRank;
      std::vector<format::Record> barriers = ofKind(t, Kind::Barrier);
      ASSERT_FALSE(barriers.empty()) << t.path;
      std::vector<ExpectedCall> want = {
          {Kind::Barrier, 0, DataType::None, ReduceOp::None, -1, 0, 0},
          {Kind::AllReduce, 1, DataType::Int32, ReduceOp::Sum, -1, 0, format::kFlagPersistent},
          {Kind::Broadcast, 2, DataType::Float64, ReduceOp::None, 1, 0, format::kFlagPersistent},
          {Kind::Barrier, 0, DataType::None, ReduceOp::None, -1, 0, format::kFlagPersistent},
      };
      if (countMismatch)
        want.push_back({Kind::AllReduce, r == 3 ? 2u : 1u, DataType::Int32, ReduceOp::Sum, -1, 0,
                        format::kFlagPersistent});
      want.push_back({Kind::Barrier, 0, DataType::None, ReduceOp::None, -1, 0, 0});
      // The starts are not recorded: the world holds the initializations and the two barriers.
      expectCalls(sequenced(t, barriers[0].commId), want, r);
    }
#ifdef COLLCHECK_TOOL
    // A persistent initialization is matched as a collective of its own form: the correct program
    // is clean, and rank 3's count is the count rule's finding at the initialization.
    std::string json = dir + "/report.json";
    EXPECT_EQ(runPlain(std::string(COLLCHECK_TOOL) + " analyze --quiet --json " + json + " " + dir),
              countMismatch ? 1 : 0);
    if (countMismatch) {
      std::ifstream in(json);
      std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_NE(report.find("\"count-mismatch\""), std::string::npos) << report;
      EXPECT_NE(report.find("allreduce_init(2 x int32, sum)"), std::string::npos) << report;
    }
#endif
  }
}

TEST(MpiIntercommunicators, CountArraysAreReadOverTheRemoteGroup) {
  // programs/mpi_intercomm.c: world rank 0 against world ranks 1-3; every count is 3.
  std::string dir = freshDir("mpi_intercomm");
  ASSERT_EQ(runTraced(mpirun(4) + COLLCHECK_PROGRAM_DIR "/mpi_intercomm", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 4u);
  for (const ProcessTrace &t : traces) {
    uint64_t remote = t.header.worldRank == 0 ? 3 : 1;
    std::vector<format::Record> all = ofKind(t, Kind::AllGatherv);
    ASSERT_EQ(all.size(), 1u) << t.path;
    EXPECT_EQ(all[0].count, 3u) << t.path;
    EXPECT_EQ(all[0].aux, 3 * remote) << t.path << ": the totals of the remote group";
    EXPECT_TRUE(all[0].flags & format::kFlagIntercomm) << t.path;
    std::vector<format::Record> gathered = ofKind(t, Kind::Gatherv);
    ASSERT_EQ(gathered.size(), 1u) << t.path;
    // The root's side (MPI_ROOT) expects 3 from each of the 3 remote members; the senders' side
    // has no receive counts.
    EXPECT_EQ(gathered[0].aux, t.header.worldRank == 0 ? 9u : 0u) << t.path;
  }
#ifdef COLLCHECK_TOOL
  // Each group's calls are checked among themselves: the totals of the other group and the roots
  // MPI_ROOT and MPI_PROC_NULL are not mismatches.
  EXPECT_EQ(runPlain(std::string(COLLCHECK_TOOL) + " analyze --quiet " + dir), 0)
      << "a correct program";
#endif
}
