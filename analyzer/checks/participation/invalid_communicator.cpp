// invalid-communicator: a call on MPI_COMM_NULL, or on a handle that is no communicator. The
// tracer records such a call without a communicator (id 0, rank -1), so it has no position to be
// matched at; MPI fails it (by default the job aborts there). One finding per kind of call, with
// the ranks that made it and how their calls ended.
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

#include <map>
#include <set>

namespace collcheck::analyzer {
namespace {

class InvalidCommunicator final : public TraceRule {
public:
  std::string_view id() const override { return "invalid-communicator"; }

  void onMeta(const MetaEvent &e, RuleContext &ctx) override {
    const format::Record &r = e.record;
    if (!format::isCallKind(r.kind) || r.commId != 0 || r.commRank >= 0)
      return;
    Calls &calls = byKind_[r.kind];
    if (calls.count++ == 0) {
      calls.first = r;
      calls.firstFile = e.file;
    }
    const TraceFile &file = ctx.job.traces().files[static_cast<size_t>(e.file)];
    if (file.worldRank >= 0)
      calls.ranks.insert(file.worldRank);
    if (r.duration == 0)
      calls.unreturned.insert(file.worldRank);
    else if (r.duration & format::kDurationFailedBit)
      calls.failed.insert(file.worldRank);
  }

  void onJobEnd(RuleContext &ctx) override {
    for (const auto &[kind, calls] : byKind_) {
      Finding f = ctx.make(id());
      std::string name(format::kindName(static_cast<format::Kind>(kind)));
      std::vector<int32_t> ranks(calls.ranks.begin(), calls.ranks.end());
      f.message = name +
                  " called without a valid communicator (MPI_COMM_NULL or a handle that "
                  "is no communicator)" +
                  (ranks.empty() ? std::string() : " on " + describeRanks(ranks));
      f.groups.push_back({"called", ranks, describeCall(calls.first)});
      f.firstTimeNs = ctx.job.wallTimeNs(calls.firstFile, calls.first);
      if (!calls.unreturned.empty())
        f.notes.push_back("the call never returned on " +
                          describeRanks({calls.unreturned.begin(), calls.unreturned.end()}) +
                          ": MPI's error handler ended the process there");
      if (!calls.failed.empty())
        f.notes.push_back("the call returned an error on " +
                          describeRanks({calls.failed.begin(), calls.failed.end()}));
      f.notes.push_back("a communicator that MPI_Comm_split gave as MPI_COMM_NULL (color "
                        "MPI_UNDEFINED), one already freed, or one never created: the call has "
                        "no group to be matched in");
      f.files.push_back(ctx.job.traces().files[static_cast<size_t>(calls.firstFile)].path);
      ctx.findings.add(std::move(f), name);
    }
  }

private:
  struct Calls {
    uint64_t count = 0;
    format::Record first{};
    int firstFile = 0;
    std::set<int32_t> ranks, unreturned, failed;
  };
  std::map<uint8_t, Calls> byKind_;
};

} // namespace

std::unique_ptr<TraceRule> makeInvalidCommunicatorRule() {
  return std::make_unique<InvalidCommunicator>();
}

} // namespace collcheck::analyzer
