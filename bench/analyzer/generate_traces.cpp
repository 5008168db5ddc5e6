// collcheck_generate_traces DIR RANKS COLLECTIVES [--bug-every N]: writes the traces of a job of
// RANKS processes that each issue COLLECTIVES collectives on the world communicator (a training
// loop: one window per 8 calls, gradient all-reduces, a loss all-reduce, a broadcast), through the
// real format::Writer. With --bug-every N, rank 1 passes a wrong count every N calls, so the
// matcher's slow path is measured too.
#include "record.h"
#include "writer.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace collcheck::format;

namespace {

constexpr uint64_t kWorld = 0x776f726c64000001ull;

bool writeRank(const std::string &dir, int rank, int ranks, uint64_t collectives, uint64_t bugEvery,
               std::string &error) {
  Writer::Identity id{"benchhost", "bench-job", "collcheck_generate_traces", 100000 + rank};
  auto w = Writer::create(dir, "rank" + std::to_string(rank), id, error);
  if (!w)
    return false;
  w->header().worldRank = rank;
  w->header().worldSize = ranks;
  uint64_t tsc = 1000;
  auto emit = [&](const Record &r) {
    Record *slot = w->reserve();
    if (!slot)
      return false;
    *slot = r;
    if (r.kind != static_cast<uint8_t>(Kind::CommMembers)) { // its payload overlays tscStart
      slot->tscStart = tsc;
      tsc += 5000;
    }
    publish(*slot);
    storeDuration(*slot, 3200, false);
    return true;
  };
  Record create{};
  create.kind = static_cast<uint8_t>(Kind::CommCreate);
  create.commId = kWorld;
  create.count = static_cast<uint64_t>(ranks);
  create.commRank = rank;
  create.peer = -1;
  create.op = static_cast<uint8_t>(CommOrigin::World);
  emit(create);
  for (int first = 0; first < ranks; first += kMembersPerRecord) {
    Record m{};
    m.kind = static_cast<uint8_t>(Kind::CommMembers);
    m.commId = kWorld;
    m.commRank = rank;
    for (int i = 0; i < kMembersPerRecord; ++i)
      setMemberAt(m, i, first + i < ranks ? first + i : -1);
    m.setSeqThread(static_cast<uint64_t>(first), 0);
    emit(m);
  }
  for (uint64_t seq = 0; seq < collectives; ++seq) {
    Record r{};
    r.commId = kWorld;
    r.commRank = rank;
    r.setSeqThread(seq, 0);
    r.window = static_cast<uint32_t>(seq / 8);
    r.peer = -1;
    switch (seq % 8) {
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
    if (bugEvery && rank == 1 && seq % bugEvery == bugEvery - 1)
      r.count -= 1;
    if (!emit(r)) {
      error = w->failure();
      return false;
    }
  }
  Record fin{};
  fin.kind = static_cast<uint8_t>(Kind::Finalize);
  emit(fin);
  w->finish();
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4 && argc != 6) {
    std::fprintf(stderr,
                 "usage: collcheck_generate_traces DIR RANKS COLLECTIVES [--bug-every N]\n");
    return 2;
  }
  std::string dir = argv[1];
  int ranks = std::atoi(argv[2]);
  uint64_t collectives = std::strtoull(argv[3], nullptr, 10);
  uint64_t bugEvery = argc == 6 ? std::strtoull(argv[5], nullptr, 10) : 0;
  if (ranks <= 0 || collectives == 0) {
    std::fprintf(stderr, "collcheck_generate_traces: RANKS and COLLECTIVES must be positive\n");
    return 2;
  }
  std::atomic<int> next{0}, failed{0};
  auto work = [&] {
    for (int r = next++; r < ranks; r = next++) {
      std::string error;
      if (!writeRank(dir, r, ranks, collectives, bugEvery, error)) {
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
