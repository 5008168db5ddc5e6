// collcheck_generate_traces DIR RANKS COLLECTIVES [--bug-every N] [--sub-comms G] [--skip-at N]
//                           [--hang-at N]
// Writes the traces of a job of RANKS processes that each issue COLLECTIVES collectives on the
// world communicator (a training loop: one window per 8 calls, gradient all-reduces, a loss
// all-reduce, a broadcast), through the real format::Writer. World calls are indexed 0 ..
// COLLECTIVES-1; without --skip-at the index is the call's sequence number. Options, in any order
// after the positional arguments (also as --option=N):
//   --bug-every N  rank 1 passes a wrong count every N calls, so the matcher's slow path is
//                  measured too.
//   --sub-comms G  the ranks are also split into groups of G consecutive ranks (the last may be
//                  smaller), as MPI_Comm_split(world, rank / G) right after MPI_Init would record
//                  them, and every rank issues one small all-reduce on its group's communicator
//                  after every 4th world call: one huge communicator and many small ones.
//   --skip-at N    rank 1 does not issue world call N: its later world calls keep consecutive
//                  sequence numbers, so it is out of step for the rest of the run.
//   --hang-at N    every rank but 0 stops after world calls 0 .. N-1, rank 0 enters call N and
//                  never returns; no rank finalizes and no file is marked finished (as if the job
//                  were killed).
// Without the options the output is the same as before they existed (docs/performance.md).
#include "format/record.h"
#include "format/writer.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using namespace collcheck::format;

namespace {

constexpr uint64_t kWorld = 0x776f726c64000001ull;
constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kSubCommEvery = 4; // world calls per call on the group communicator

struct Options {
  std::string dir;
  int ranks = 0;
  uint64_t collectives = 0;
  uint64_t bugEvery = 0;   // 0: no bug
  uint64_t subComms = 0;   // group size, 0: world only
  uint64_t skipAt = kNone; // world call index rank 1 does not issue
  uint64_t hangAt = kNone; // world call index rank 0 never returns from
};

// A group's communicator id: distinct per group, spread over all 64 bits (its short form in
// reports is the upper half), never 0 ("no communicator").
uint64_t groupCommId(int color) {
  return (static_cast<uint64_t>(color) + 1) * 0x9e3779b97f4a7c15ull | 1;
}

bool writeRank(const Options &o, int rank, std::string &error) {
  const int ranks = o.ranks;
  Writer::Identity id{"benchhost", "bench-job", "collcheck_generate_traces", 100000 + rank};
  auto w = Writer::create(o.dir, "rank" + std::to_string(rank), id, error);
  if (!w)
    return false;
  w->header().worldRank = rank;
  w->header().worldSize = ranks;
  uint64_t tsc = 1000;
  // Writes one record; `returns` false leaves it as a call that never returned (duration 0).
  auto emit = [&](const Record &r, bool returns = true) {
    Record *slot = w->reserve();
    if (!slot)
      return false;
    *slot = r;
    if (r.kind != static_cast<uint8_t>(Kind::CommMembers)) { // its payload overlays tscStart
      slot->tscStart = tsc;
      tsc += 5000;
    }
    publish(*slot);
    if (returns)
      storeDuration(*slot, 3200, false);
    return true;
  };
  // A CommCreate record and the CommMembers records of its members, as recordCommCreate writes.
  auto createComm = [&](uint64_t commId, int commRank, CommOrigin origin, uint64_t parent,
                        int32_t color, const std::vector<int32_t> &members) {
    Record create{};
    create.kind = static_cast<uint8_t>(Kind::CommCreate);
    create.commId = commId;
    create.count = members.size();
    create.aux = parent;
    create.commRank = commRank;
    create.peer = color;
    create.op = static_cast<uint8_t>(origin);
    if (!emit(create))
      return false;
    for (size_t first = 0; first < members.size(); first += kMembersPerRecord) {
      Record m{};
      m.kind = static_cast<uint8_t>(Kind::CommMembers);
      m.commId = commId;
      m.commRank = commRank;
      for (int i = 0; i < kMembersPerRecord; ++i)
        setMemberAt(m, i, first + i < members.size() ? members[first + i] : -1);
      m.setSeqThread(static_cast<uint64_t>(first), 0);
      if (!emit(m))
        return false;
    }
    return true;
  };
  std::vector<int32_t> worldMembers(static_cast<size_t>(ranks));
  for (int i = 0; i < ranks; ++i)
    worldMembers[static_cast<size_t>(i)] = i;
  bool ok = createComm(kWorld, rank, CommOrigin::World, 0, -1, worldMembers);
  worldMembers = {};
  uint64_t group = 0;
  int groupRank = 0;
  if (ok && o.subComms) {
    auto size = static_cast<int>(o.subComms);
    int color = rank / size, first = color * size;
    std::vector<int32_t> members;
    for (int r = first; r < std::min(first + size, ranks); ++r)
      members.push_back(r);
    group = groupCommId(color);
    groupRank = rank - first;
    ok = createComm(group, groupRank, CommOrigin::Split, kWorld, color, members);
  }
  uint64_t worldSeq = 0, groupSeq = 0;
  for (uint64_t call = 0; ok && call < o.collectives; ++call) {
    if (call == o.hangAt && rank != 0)
      break;
    if (call == o.skipAt && rank == 1)
      continue;
    Record r{};
    r.commId = kWorld;
    r.commRank = rank;
    r.setSeqThread(worldSeq++, 0);
    r.window = static_cast<uint32_t>(call / 8);
    r.peer = -1;
    switch (call % 8) {
    case 6: // the loss
      r.kind = static_cast<uint8_t>(Kind::AllReduce);
      r.count = 1;
      r.dataType = static_cast<uint8_t>(DataType::Float32);
      r.op = static_cast<uint8_t>(ReduceOp::Sum);
      break;
    case 7: // parameters from rank 0
      r.kind = static_cast<uint8_t>(Kind::Broadcast);
      r.count = 4096;
      r.dataType = static_cast<uint8_t>(DataType::BFloat16);
      r.peer = 0;
      break;
    default: // gradient buckets
      r.kind = static_cast<uint8_t>(Kind::AllReduce);
      r.count = 1u << 22;
      r.dataType = static_cast<uint8_t>(DataType::BFloat16);
      r.op = static_cast<uint8_t>(ReduceOp::Sum);
    }
    if (o.bugEvery && rank == 1 && call % o.bugEvery == o.bugEvery - 1)
      r.count -= 1;
    if (call == o.hangAt) { // rank 0: stuck in it
      ok = emit(r, false);
      break;
    }
    ok = emit(r);
    if (ok && o.subComms && call % kSubCommEvery == kSubCommEvery - 1) {
      Record g{};
      g.kind = static_cast<uint8_t>(Kind::AllReduce);
      g.commId = group;
      g.commRank = groupRank;
      g.setSeqThread(groupSeq++, 0);
      g.window = r.window;
      g.peer = -1;
      g.count = 256;
      g.dataType = static_cast<uint8_t>(DataType::Float32);
      g.op = static_cast<uint8_t>(ReduceOp::Sum);
      ok = emit(g);
    }
  }
  if (!ok) {
    error = w->failure();
    if (error.empty())
      error = "cannot write a record";
    return false;
  }
  if (o.hangAt != kNone) {
    // Killed while stuck: no Finalize record, the header is not marked finished.
    w->abandon();
    return true;
  }
  Record fin{};
  fin.kind = static_cast<uint8_t>(Kind::Finalize);
  emit(fin);
  w->finish();
  return true;
}

const char *kUsage = "usage: collcheck_generate_traces DIR RANKS COLLECTIVES [--bug-every N] "
                     "[--sub-comms G] [--skip-at N] [--hang-at N]\n";

// A decimal number, all of `text`, no sign.
bool parseNumber(const char *text, uint64_t &value) {
  if (!text || *text < '0' || *text > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  value = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

bool parseOptions(int argc, char **argv, Options &o) {
  if (argc < 4) {
    std::fputs(kUsage, stderr);
    return false;
  }
  o.dir = argv[1];
  uint64_t ranks = 0;
  if (!parseNumber(argv[2], ranks) || ranks == 0 || ranks > uint64_t(kMaxWorldSize) ||
      !parseNumber(argv[3], o.collectives) || o.collectives == 0 ||
      o.collectives > Record::kSeqMask) {
    std::fprintf(stderr,
                 "collcheck_generate_traces: RANKS (at most %d) and COLLECTIVES must be "
                 "positive numbers\n%s",
                 kMaxWorldSize, kUsage);
    return false;
  }
  o.ranks = static_cast<int>(ranks);
  struct Flag {
    const char *name;
    uint64_t *value;
  };
  const Flag flags[] = {{"--bug-every", &o.bugEvery},
                        {"--sub-comms", &o.subComms},
                        {"--skip-at", &o.skipAt},
                        {"--hang-at", &o.hangAt}};
  bool subCommsGiven = false;
  for (int i = 4; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name = arg, value;
    bool attached = false;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      attached = true;
    }
    const Flag *flag = nullptr;
    for (const Flag &f : flags)
      if (name == f.name)
        flag = &f;
    if (!flag) {
      std::fprintf(stderr, "collcheck_generate_traces: unknown argument '%s'\n%s", argv[i], kUsage);
      return false;
    }
    if (!attached) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "collcheck_generate_traces: %s needs a number\n", flag->name);
        return false;
      }
      value = argv[++i];
    }
    if (!parseNumber(value.c_str(), *flag->value)) {
      std::fprintf(stderr, "collcheck_generate_traces: %s: '%s' is not a number\n", flag->name,
                   value.c_str());
      return false;
    }
    subCommsGiven = subCommsGiven || flag->value == &o.subComms;
  }
  if (subCommsGiven && (o.subComms == 0 || o.subComms > ranks)) {
    std::fprintf(stderr, "collcheck_generate_traces: --sub-comms must be 1 .. RANKS\n");
    return false;
  }
  if (o.skipAt != kNone && (o.skipAt >= o.collectives || o.ranks < 2)) {
    std::fprintf(stderr, "collcheck_generate_traces: --skip-at needs N < COLLECTIVES and at least "
                         "2 ranks\n");
    return false;
  }
  if (o.hangAt != kNone && o.hangAt >= o.collectives) {
    std::fprintf(stderr, "collcheck_generate_traces: --hang-at needs N < COLLECTIVES\n");
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseOptions(argc, argv, o))
    return 2;
  std::atomic<int> next{0}, failed{0};
  auto work = [&] {
    for (int r = next++; r < o.ranks; r = next++) {
      std::string error;
      if (!writeRank(o, r, error)) {
        std::fprintf(stderr, "collcheck_generate_traces: rank %d: %s\n", r, error.c_str());
        failed = 1;
        return;
      }
    }
  };
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(work);
  for (auto &t : pool)
    t.join();
  return failed ? 1 : 0;
}
