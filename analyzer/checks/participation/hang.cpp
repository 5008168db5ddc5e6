// hang: post-mortem of a job stopped while stuck. Per communicator: the call the ranks that went
// furthest wait in, the ranks they wait for, the last sequence number each rank reached, and where
// each waited-for rank is (stuck in another collective, in none, or gone).
#include "analyzer/checks/participation/invalid_arguments.h"
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

#include <map>
#include <optional>

namespace collcheck::analyzer {
namespace {

class Hang final : public TraceRule {
public:
  std::string_view id() const override { return "hang"; }

  void onCollective(const CollectiveEvent &e, RuleContext &) override {
    if (e.allMatched)
      return;
    std::vector<int32_t> notReached, issuers, stuck;
    bool exited = false;
    for (size_t r = 0; r < e.presence.size(); ++r) {
      if (e.presence[r] == Presence::NotReached || e.presence[r] == Presence::Exited) {
        // Exited ranks are waited for too: the missing-participant rule says they skipped it.
        notReached.push_back(static_cast<int32_t>(r));
        exited = exited || e.presence[r] == Presence::Exited;
      } else if (issued(e.presence[r])) {
        issuers.push_back(static_cast<int32_t>(r));
        if (!format::returned(*e.records[r]) && format::blocksCaller(*e.records[r]))
          stuck.push_back(static_cast<int32_t>(r));
      }
    }
    // A rank that exited leaves the others waiting only if they are stuck in the call.
    if (notReached.empty() || (exited && stuck.empty()))
      return;
    Pending &p = pending_[e.comm.id];
    if (p.has) {
      ++p.laterPositions;
      p.lastSeq = e.reference.seq();
      return;
    }
    p = {true, e.reference, issuers, notReached, stuck, 0, e.reference.seq()};
  }

  void onCommunicatorEnd(const CommunicatorEnd &e, RuleContext &ctx) override {
    auto it = pending_.find(e.comm.id);
    if (it != pending_.end()) {
      report(e, it->second, ctx);
      pending_.erase(it);
      return;
    }
    // Nobody is missing, yet ranks never returned from their last call: the call itself hung, or
    // a member died inside it.
    std::vector<int32_t> stuck, crashed, rejected;
    std::string why; // the rule of the first rejected argument
    const format::Record *call = nullptr;
    // After a crash outside any call, the others were stopped by the launcher, not stuck:
    // rank-ended-unfinished reports them. Asked only where a rank is left inside a call, since
    // it reads every process.
    std::optional<bool> tornDown;
    for (size_t r = 0; r < e.lastCall.size(); ++r) {
      const format::Record *last = e.lastCall[r];
      int file = r < e.comm.fileOf.size() ? e.comm.fileOf[r] : -1;
      if (!last || file < 0 || format::returned(*last) || !format::blocksCaller(*last))
        continue;
      const ProcessState &p = ctx.job.process(file);
      if (p.endSignal && isCrashSignal(p.endSignal)) {
        crashed.push_back(e.comm.nameOf(static_cast<int32_t>(r))); // rank-ended-unfinished's
        continue;
      }
      if (p.finished || p.cut)
        continue;
      if (!tornDown)
        tornDown = crashedOutsideCalls(ctx.job);
      if (*tornDown)
        continue; // stopped by the launcher (a recorded SIGTERM, or no record: SIGKILL)
      // An argument MPI rejects: by default the error handler aborts the job in this call.
      if (hasNegativeCount(*last) || hasInvalidDatatype(*last) || hasInvalidRoot(*last, e.comm)) {
        rejected.push_back(e.comm.nameOf(static_cast<int32_t>(r)));
        if (why.empty())
          why = hasNegativeCount(*last)     ? "a negative count (negative-count)"
                : hasInvalidDatatype(*last) ? "a handle that is no datatype (invalid-datatype)"
                                            : "a root outside the communicator (invalid-root)";
      }
      stuck.push_back(static_cast<int32_t>(r));
      call = call ? call : last;
    }
    if (stuck.empty())
      return;
    Finding f = ctx.make(id(), e.comm, *call);
    auto names = ctx.worldRanks(e.comm, stuck);
    f.message = describeRanks(names) + " never returned from " + describeCall(*call) + " on " +
                e.comm.label + " although every member issued it";
    f.groups.push_back({"stuck", names, describeCall(*call)});
    if (!rejected.empty())
      f.notes.push_back(describeRanks(rejected) + " passed " + why +
                        ", which MPI rejects: its error handler, by default, aborts the job "
                        "inside the call" +
                        (rejected.size() < stuck.size() ? ", and the others wait in it" : ""));
    else if (!crashed.empty())
      f.notes.push_back(describeRanks(crashed) + " died inside " +
                        (crashed.size() == 1 ? "its" : "their") +
                        " last call (rank-ended-unfinished): the others wait for " +
                        (crashed.size() == 1 ? "it" : "them"));
    else
      f.notes.push_back("no rank is missing from this call: look for a mismatch reported on the "
                        "same position, a deadlock with another communicator, or a transport or "
                        "device failure");
    addLastReached(e, f, ctx);
    ctx.findings.add(std::move(f), "inside|" + formatRanks(stuck));
  }

private:
  struct Pending {
    bool has = false;
    format::Record call{};
    std::vector<int32_t> issuers, notReached, stuck;
    uint64_t laterPositions = 0;
    uint64_t lastSeq = 0;
  };

  static std::string whereabouts(const Communicator &comm, int32_t commRank, RuleContext &ctx) {
    int file = static_cast<size_t>(commRank) < comm.fileOf.size()
                   ? comm.fileOf[static_cast<size_t>(commRank)]
                   : -1;
    if (file < 0)
      return "has no trace";
    const ProcessState &p = ctx.job.process(file);
    if (p.endSignal)
      return describeSignal(p.endSignal) + " without issuing it";
    if (p.finished)
      return "exited cleanly without issuing it";
    if (p.finalized)
      return "reached MPI_Finalize without issuing it";
    if (!p.hasLastCall)
      return "issued no collective at all";
    const Communicator *where = ctx.job.communicator(p.lastCallCommId);
    std::string on = where ? where->label : "comm " + shortCommId(p.lastCallCommId);
    std::string call =
        describeCall(p.lastCall) + " on " + on + " (seq " + std::to_string(p.lastCall.seq()) + ")";
    if (!format::returned(p.lastCall) && format::blocksCaller(p.lastCall))
      return "is stuck in " + call + ", which never returned";
    return "is in no traced collective; its last, " + call + ", returned";
  }

  static void addLastReached(const CommunicatorEnd &e, Finding &f, RuleContext &ctx) {
    std::map<uint64_t, std::vector<int32_t>> bySeq;
    std::vector<int32_t> none;
    for (size_t r = 0; r < e.lastCall.size(); ++r) {
      if (e.lastCall[r])
        bySeq[e.lastCall[r]->seq()].push_back(e.comm.nameOf(static_cast<int32_t>(r)));
      else
        none.push_back(e.comm.nameOf(static_cast<int32_t>(r)));
    }
    std::string text = "last sequence number reached on " + e.comm.label + ":";
    for (auto it = bySeq.rbegin(); it != bySeq.rend(); ++it)
      text += " seq " + std::to_string(it->first) + " by " + describeRanks(it->second) + ";";
    if (!none.empty())
      text += " none by " + describeRanks(none) + ";";
    text.pop_back();
    f.notes.push_back(text);
    (void)ctx;
  }

  void report(const CommunicatorEnd &e, const Pending &p, RuleContext &ctx) {
    Finding f = ctx.make(id(), e.comm, p.call);
    std::string call = describeCall(p.call);
    auto waiting = ctx.worldRanks(e.comm, p.issuers);
    auto waitedFor = ctx.worldRanks(e.comm, p.notReached);
    f.message = describeRanks(waiting) + (waiting.size() == 1 ? " waits in " : " wait in ") + call +
                " on " + e.comm.label + " (seq " + std::to_string(p.call.seq()) + ") for " +
                describeRanks(waitedFor) + ", which never issued it";
    f.groups.push_back({"waiting", waiting, call});
    std::map<std::string, std::vector<int32_t>> byPlace;
    for (int32_t r : p.notReached)
      byPlace[whereabouts(e.comm, r, ctx)].push_back(e.comm.nameOf(r));
    for (const auto &[place, ranks] : byPlace)
      f.groups.push_back({"waited for", ranks, place});
    if (!p.stuck.empty() && p.stuck.size() != p.issuers.size())
      f.notes.push_back(describeRanks(ctx.worldRanks(e.comm, p.stuck)) +
                        " are blocked inside the call (it never returned)");
    if (p.laterPositions)
      f.notes.push_back("the waiting ranks went on to issue " + std::to_string(p.laterPositions) +
                        " more collective(s) the others never reached (up to seq " +
                        std::to_string(p.lastSeq) + ")");
    addLastReached(e, f, ctx);
    ctx.findings.add(std::move(f),
                     "wait|" + formatRanks(p.issuers) + "|" + formatRanks(p.notReached));
  }

  std::map<uint64_t, Pending> pending_;
};

} // namespace

std::unique_ptr<TraceRule> makeHangRule() { return std::make_unique<Hang>(); }

} // namespace collcheck::analyzer
