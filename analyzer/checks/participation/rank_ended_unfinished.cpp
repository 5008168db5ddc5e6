// rank-ended-unfinished: a process that ended without finishing its trace: died of a signal the
// tracer recorded (inside a call or not), or killed, crashed or aborted outside any collective.
// Every call before its end may have matched, yet the job did not complete: that is never "no
// findings". A process stopped while waiting inside a collective, with no signal of its own, is
// the hang rule's; a trace that lost records is incomplete-trace's.
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

#include <algorithm>
#include <map>

namespace collcheck::analyzer {
namespace {

bool stuckInside(const ProcessState &p) {
  return p.hasLastCall && !format::returned(p.lastCall) && format::blocksCaller(p.lastCall);
}

class RankEndedUnfinished final : public TraceRule {
public:
  std::string_view id() const override { return "rank-ended-unfinished"; }

  void onJobEnd(RuleContext &ctx) override {
    const TraceSet &traces = ctx.job.traces();
    // Where each process ended, in words, for those a signal or a returned last call explains.
    std::map<std::string, std::vector<int32_t>> byPlace;
    std::map<std::string, std::vector<int32_t>> unexplained; // no signal recorded
    bool someoneStuck = false;
    const bool tornDown = crashedOutsideCalls(ctx.job); // the others were stopped, not stuck
    for (size_t f = 0; f < traces.files.size(); ++f) {
      const ProcessState &p = ctx.job.process(static_cast<int>(f));
      if (p.finished || p.cut)
        continue;
      bool inside = stuckInside(p);
      if (inside && !p.endSignal && !tornDown) {
        someoneStuck = true; // stopped while waiting: the hang finding tells who waited for whom
        continue;
      }
      // A call without a communicator has no sequence number: invalid-communicator names it.
      std::string last =
          !p.hasLastCall ? ""
          : p.lastCall.commId == 0 && p.lastCall.commRank < 0
              ? describeCall(p.lastCall) + " without a valid communicator"
              : describeCall(p.lastCall) + " (seq " + std::to_string(p.lastCall.seq()) + ")";
      std::string where = p.finalized ? "after MPI_Finalize began"
                          : inside    ? "inside " + last
                          : p.hasLastCall
                              ? "outside any collective; its last call, " + last + ", had returned"
                              : "before its first collective";
      int32_t rank = traces.files[f].worldRank;
      if (p.endSignal)
        byPlace[describeSignal(p.endSignal) + " " + where].push_back(rank);
      else
        unexplained["killed, crashed or aborted " + where].push_back(rank);
    }
    if (!someoneStuck)
      byPlace.merge(unexplained);
    if (byPlace.empty())
      return;
    std::vector<int32_t> all;
    for (const auto &[place, ranks] : byPlace)
      all.insert(all.end(), ranks.begin(), ranks.end());
    std::sort(all.begin(), all.end());
    Finding f = ctx.make(id());
    f.message = describeRanks(all) +
                " ended without finishing, not through MPI_Finalize or exit(): the job did not "
                "complete";
    for (const auto &[place, ranks] : byPlace)
      f.groups.push_back({"ended", ranks, place});
    f.notes.push_back("the collectives before the end are checked as usual; the launcher's "
                      "output or a core dump tells why a process ended");
    ctx.findings.add(std::move(f), "ended|" + formatRanks(all));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeRankEndedUnfinishedRule() {
  return std::make_unique<RankEndedUnfinished>();
}

} // namespace collcheck::analyzer
