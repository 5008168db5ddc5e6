// The analysis in shares (analyzer/parallel): the shares of one job, analyzed in turn or by
// threads, merge into the single report; a damaged event log is rejected, the checks decline cuts
// where the ranks are out of step, and more shares than positions still give the single report.
#include "analyzer/match/event_log.h"
#include "analyzer/parallel/merge.h"
#include "analyzer/parallel/share_plan.h"
#include "analyzer/parallel/thread_split.h"
#include "tests/analyzer/analysis_helpers.h"
#include "tests/analyzer/job_builder.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace collcheck::testing {
namespace {

using analyzer::parallel::Balance;

// Four ranks over a world and two pair communicators, with a count mismatch in the middle.
std::string mismatchJob(const std::string &name, int steps = 40) {
  std::string dir = freshDir(name);
  constexpr uint64_t kSub = 0x5151;
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    RankTrace &t = ranks.back();
    const uint64_t pair = kSub + static_cast<uint64_t>(r / 2); // ranks 0-1 and 2-3
    t.comm(pair, r % 2, {r - r % 2, r - r % 2 + 1}, format::CommOrigin::Split, kWorld, r / 2);
    for (int step = 0; step < steps; ++step) {
      t.call(allreduce(step == 20 && r == 3 ? 7 : 64));
      t.call(bcast(8, 0), pair);
    }
    t.finalize();
  }
  writeJob(dir, ranks);
  return dir;
}

analyzer::RangeResult shareOf(const analyzer::TraceSet &traces, int index, int count) {
  std::optional<uint64_t> comm = analyzer::parallel::cutCommunicator(traces);
  EXPECT_TRUE(comm.has_value());
  return analyzer::analyzeRange(
      traces, {}, analyzer::parallel::planShare(traces, *comm, index, count, Balance::Records));
}

TEST(Split, TheSharesOfAMismatchAreMergedIntoTheSingleReport) {
  Analyzed single = analyzeDir(mismatchJob("split-mismatch"));
  ASSERT_EQ(single.of("count-mismatch").size(), 1u) << single.describe();
  for (int count : {2, 3, 4, 5, 6, 7, 8}) {
    analyzer::AnalysisResult split;
    std::string why;
    bool merged =
        analyzer::parallel::analyzeInShares(single.traces, {}, count, split, why, Balance::Records);
    // Cuts near the mismatch are read across by rank 0: every split merges.
    EXPECT_TRUE(merged) << count << " shares: " << why;
    if (merged) {
      EXPECT_EQ(jsonReport(single.traces, single.result), jsonReport(single.traces, split));
    }
  }
}

// The split among the threads of one process: every thread count, and a slow thread whose share
// the others take over in parts (short rounds, so that there are rounds to hand over), give the
// single report.
TEST(Split, TheThreadsSharesAreMergedIntoTheSingleReport) {
  analyzer::TraceSet traces = analyzer::TraceSet::open({mismatchJob("split-threads", 400)}, 1);
  analyzer::AnalysisOptions options;
  options.readChunk = 16;
  const analyzer::AnalysisResult single = analyzer::analyze(traces, options);
  const std::string expected = jsonReport(traces, single);
  for (const char *slow : {"", "0", "1"}) {
    setenv("COLLCHECK_THREAD_SPLIT_SLOW", slow, 1);
    for (unsigned threads : {2u, 3u, 4u}) {
      analyzer::AnalysisResult split;
      std::string why;
      analyzer::parallel::ThreadSplitStats stats;
      ASSERT_TRUE(analyzer::parallel::analyzeInThreads(traces, options, threads, split, why, stats,
                                                       Balance::Records))
          << threads << " threads, slow '" << slow << "': " << why;
      EXPECT_EQ(expected, jsonReport(traces, split)) << threads << " threads, slow '" << slow;
      EXPECT_EQ(stats.threads, static_cast<int>(threads));
      if (*slow) { // the others finished first and asked: the slow one handed parts over
        EXPECT_GT(stats.ranges, static_cast<int>(threads)) << threads << " threads, slow " << slow;
      }
    }
  }
  unsetenv("COLLCHECK_THREAD_SPLIT_SLOW");
}

TEST(Split, ATruncatedEventLogIsRejected) {
  analyzer::TraceSet traces = analyzer::TraceSet::open({mismatchJob("split-log")}, 1);
  analyzer::RangeResult share = shareOf(traces, 0, 2);
  ASSERT_FALSE(share.events.empty());
  struct Count final : analyzer::JobEvents {
    size_t events = 0;
    void collective(const analyzer::CollectiveEvent &) override { ++events; }
    void reorder(const analyzer::ReorderEvent &) override { ++events; }
    void extra(const analyzer::ExtraEvent &) override { ++events; }
    void communicatorEnd(const analyzer::CommunicatorEnd &) override {}
    void pointToPoint(const analyzer::PointToPointEvent &) override { ++events; }
    void meta(const analyzer::MetaEvent &) override { ++events; }
  };
  analyzer::CommLookup lookup = [&](uint64_t id) -> const analyzer::Communicator * {
    for (const analyzer::RangeComm &c : share.comms)
      if (c.comm.id == id)
        return &c.comm;
    return nullptr;
  };
  Count all;
  ASSERT_TRUE(analyzer::replayEvents(share.events, lookup, all));
  EXPECT_GT(all.events, 40u);
  for (size_t length = 1; length < share.events.size(); length += 7) {
    Count some;
    std::string_view cut(share.events.data(), length);
    // A cut between two events is a shorter, valid log; inside one it is rejected.
    if (analyzer::replayEvents(cut, lookup, some)) {
      EXPECT_LT(some.events, all.events);
    }
  }
  EXPECT_FALSE(analyzer::replayEvents(
      share.events, [](uint64_t) { return nullptr; }, all));
}

TEST(Split, ARankOutOfStepAtACutIsReadAcrossUntilTheSharesJoin) {
  std::string dir = freshDir("split-skip");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back(r, 3);
    for (int step = 0; step < 60; ++step)
      if (!(r == 1 && step == 5)) // rank 1 skips one call early and stays one behind
        ranks.back().call(allreduce(64 + step % 3));
    ranks.back().finalize();
  }
  writeJob(dir, ranks);
  Analyzed single = analyzeDir(dir);
  ASSERT_FALSE(single.of("missing-participant").empty()) << single.describe();
  // The shares as planned do not join: every cut after the skip finds rank 1 one call behind.
  std::vector<analyzer::RangeResult> shares;
  for (int k = 0; k < 3; ++k)
    shares.push_back(shareOf(single.traces, k, 3));
  analyzer::AnalysisResult out;
  std::string why;
  size_t badCut = SIZE_MAX;
  EXPECT_FALSE(analyzer::parallel::mergeShares(single.traces, {}, shares, out, why, &badCut));
  EXPECT_LT(badCut, 2u) << why;
  // Rank 0 reads across the cuts that do not join (here all of them): the single report.
  EXPECT_TRUE(expectSameWhenSplit(single.traces, {}, single.result, 3));
}

TEST(Split, SharesThatDoNotTileTheFilesAreDeclined) {
  // Every process cuts the files it opened itself: rank 0 accepts only shares that read each file
  // from its first slot to its last, each from where the one before ended.
  analyzer::TraceSet traces = analyzer::TraceSet::open({mismatchJob("split-tiles")}, 1);
  auto merge = [&](std::vector<analyzer::RangeResult> shares, std::string &why) {
    analyzer::AnalysisResult out;
    return analyzer::parallel::mergeShares(traces, {}, shares, out, why);
  };
  std::string why;
  EXPECT_TRUE(merge({shareOf(traces, 0, 2), shareOf(traces, 1, 2)}, why)) << why;
  // Share 1 of 3 starts before share 0 of 2 ends: the two processes cut differently.
  EXPECT_FALSE(merge({shareOf(traces, 0, 2), shareOf(traces, 1, 3), shareOf(traces, 2, 3)}, why));
  EXPECT_NE(why.find("the shares do not tile it"), std::string::npos) << why;
  // The first half alone does not reach the files' ends.
  EXPECT_FALSE(merge({shareOf(traces, 0, 2)}, why));
  EXPECT_NE(why.find("slots of"), std::string::npos) << why;
  // A share that claims to start elsewhere (a message from a process that saw other files).
  analyzer::RangeResult moved = shareOf(traces, 1, 2);
  moved.files[2].begin += 1;
  EXPECT_FALSE(merge({shareOf(traces, 0, 2), moved}, why));
  EXPECT_NE(why.find("rank2"), std::string::npos) << why;
}

// Hands the rest of the range over at the `at`-th time it is asked, and remembers what it gave.
struct HandOverOnce final : analyzer::RangeControl {
  const analyzer::TraceSet &traces;
  uint64_t commId;
  int at, asks = 0;
  std::optional<analyzer::RangeSpec> given;
  HandOverOnce(const analyzer::TraceSet &t, uint64_t c, int a) : traces(t), commId(c), at(a) {}
  bool asked() override { return ++asks == at; }
  std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                const analyzer::RangeSpec &range) override {
    std::optional<std::vector<uint64_t>> cut =
        from.empty() ? std::nullopt
                     : analyzer::parallel::cutAhead(traces, commId, from, range.end, 2);
    if (cut)
      given = analyzer::RangeSpec{*cut, range.end, false, range.last, range.alongComm};
    return cut;
  }
};

TEST(Split, TheRestOfAShareHandedOverMidWayMergesIntoTheSingleReport) {
  Analyzed single = analyzeDir(mismatchJob("split-handover"));
  const uint64_t comm = *analyzer::parallel::cutCommunicator(single.traces);
  int handedOver = 0;
  for (int at = 1; at <= 8; ++at) {
    for (int index : {0, 1}) {
      {
        analyzer::AnalysisOptions options;
        options.readChunk = 4; // rounds of 4 slots: the share is asked between them
        HandOverOnce control(single.traces, comm, at);
        analyzer::RangeSpec planned =
            analyzer::parallel::planShare(single.traces, comm, index, 2, Balance::Records);
        std::vector<analyzer::RangeResult> shares;
        for (int k = 0; k < 2; ++k)
          shares.push_back(k == index
                               ? analyzer::analyzeRange(single.traces, options, planned, &control)
                               : shareOf(single.traces, k, 2));
        if (!control.given)
          continue; // asked too late: too little was left to hand over
        ++handedOver;
        // The share ends where the rest was handed over, and no longer at the files' ends.
        const analyzer::RangeResult &cut = shares[static_cast<size_t>(index)];
        for (size_t f = 0; f < single.traces.files.size(); ++f) {
          EXPECT_EQ(cut.files[f].end, control.given->begin[f]);
          EXPECT_LT(cut.files[f].end, planned.end[f]);
        }
        EXPECT_FALSE(cut.last);
        shares.push_back(analyzer::analyzeRange(single.traces, options, *control.given));
        EXPECT_EQ(shares.back().last, planned.last);
        analyzer::parallel::sortShares(shares);
        analyzer::AnalysisResult merged;
        std::string why;
        ASSERT_TRUE(analyzer::parallel::mergeJoining(single.traces, options, comm, shares, merged,
                                                     why, nullptr))
            << "asked at " << at << " in share " << index << ": " << why;
        EXPECT_EQ(jsonReport(single.traces, single.result), jsonReport(single.traces, merged))
            << "asked at " << at << " in share " << index;
      }
    }
  }
  EXPECT_GT(handedOver, 4) << handedOver; // early asks hand over; late ones find too little left
}

// Every file's slot count: the end of a range over the whole files.
std::vector<uint64_t> fileEnds(const analyzer::TraceSet &traces) {
  std::vector<uint64_t> end;
  for (const auto &file : traces.files)
    end.push_back(file.reader->slotCount());
  return end;
}

// A mismatch job's files read whole: the range cutAhead is asked to divide.
struct WholeFiles {
  analyzer::TraceSet traces;
  uint64_t comm;
  std::vector<uint64_t> from, end;
  uint64_t left; // slots of the first file
  explicit WholeFiles(const std::string &name)
      : traces(analyzer::TraceSet::open({mismatchJob(name)}, 1)),
        comm(*analyzer::parallel::cutCommunicator(traces)), from(traces.files.size(), 0),
        end(fileEnds(traces)), left(end[0] - from[0]) {}
};

TEST(Split, NothingIsHandedOverOnceAFileIsReadToItsEnd) {
  const WholeFiles whole("split-handover-end");
  const auto &[traces, comm, from, end, left] = whole;
  // Plenty left from the start; nothing when a file's next slot is already past the middle cut.
  EXPECT_TRUE(analyzer::parallel::cutAhead(traces, comm, from, end, 4).has_value());
  std::vector<uint64_t> late = end;
  for (uint64_t &slot : late)
    slot -= 2;
  EXPECT_FALSE(analyzer::parallel::cutAhead(traces, comm, late, end, 4).has_value());
  std::vector<uint64_t> skewed = from;
  skewed[1] = end[1] - 1; // one file read nearly to its end: the cut would fall behind it
  EXPECT_FALSE(analyzer::parallel::cutAhead(traces, comm, skewed, end, 4).has_value());
  EXPECT_FALSE(analyzer::parallel::cutAhead(traces, comm, {}, end, 4).has_value());
}

TEST(Split, MoreSharesThanPositionsGiveTheSingleReport) {
  Analyzed single = analyzeDir(mismatchJob("split-many"));
  analyzer::AnalysisResult split;
  std::string why;
  if (analyzer::parallel::analyzeInShares(single.traces, {}, 200, split, why, Balance::Records)) {
    EXPECT_EQ(jsonReport(single.traces, single.result), jsonReport(single.traces, split));
  } else {
    EXPECT_FALSE(why.empty());
  }
}

} // namespace
} // namespace collcheck::testing
