// rank-ended-unfinished: a process that ended without finishing its trace (killed, crashed,
// aborted) outside any collective. Every call before its end may have matched, yet the job did
// not complete: that is never "no findings". A process stuck inside a collective when the job
// was stopped is the hang rule's; a trace that lost records is incomplete-trace's.
#include "../match/signature.h"
#include "rule.h"

#include <algorithm>
#include <map>

namespace collcheck::analyzer {
namespace {

bool stuckInside(const ProcessState &p) {
  // NCCL and non-blocking MPI calls return once enqueued: not being back from one says nothing.
  return p.hasLastCall && !format::returned(p.lastCall) &&
         !(p.lastCall.flags & (format::kFlagNccl | format::kFlagNonBlocking));
}

class RankEndedUnfinished final : public TraceRule {
public:
  std::string_view id() const override { return "rank-ended-unfinished"; }

  void onJobEnd(RuleContext &ctx) override {
    const TraceSet &traces = ctx.job.traces();
    std::map<std::string, std::vector<int32_t>> byPlace; // where each ended, in words
    for (size_t f = 0; f < traces.files.size(); ++f) {
      const ProcessState &p = ctx.job.process(static_cast<int>(f));
      if (p.finished || p.cut)
        continue;
      if (stuckInside(p))
        return; // the job was stopped while stuck: the hang finding says who waited for whom
      std::string place = p.finalized     ? "after MPI_Finalize began"
                          : p.hasLastCall ? "outside any collective; its last call, " +
                                                describeCall(p.lastCall) + " (seq " +
                                                std::to_string(p.lastCall.seq()) + "), had returned"
                                          : "before its first collective";
      byPlace[place].push_back(traces.files[f].worldRank);
    }
    if (byPlace.empty())
      return;
    std::vector<int32_t> all;
    for (const auto &[place, ranks] : byPlace)
      all.insert(all.end(), ranks.begin(), ranks.end());
    std::sort(all.begin(), all.end());
    Finding f = ctx.make(id());
    f.message = describeRanks(all) + " ended" +
                " without finishing: killed, crashed or aborted, not an exit through MPI_Finalize "
                "or exit()";
    for (const auto &[place, ranks] : byPlace)
      f.groups.push_back({"ended", ranks, place});
    f.notes.push_back("the job did not complete; the collectives before the end are checked as "
                      "usual, and the launcher's output or the core dump tells why the process "
                      "ended");
    ctx.findings.add(std::move(f), "ended|" + formatRanks(all));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeRankEndedUnfinishedRule() {
  return std::make_unique<RankEndedUnfinished>();
}

} // namespace collcheck::analyzer
