// missing-participant: a collective issued by only some members of its communicator.
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

namespace collcheck::analyzer {
namespace {

class MissingParticipant final : public TraceRule {
public:
  std::string_view id() const override { return "missing-participant"; }

  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    if (e.allMatched)
      return;
    std::vector<int32_t> issuers, skipped, exited;
    for (size_t r = 0; r < e.presence.size(); ++r) {
      auto rank = static_cast<int32_t>(r);
      switch (e.presence[r]) {
      case Presence::Skipped:
        skipped.push_back(rank);
        break;
      case Presence::Exited:
        exited.push_back(rank);
        break;
      default:
        if (issued(e.presence[r]))
          issuers.push_back(rank);
      }
    }
    // Ranks stopped before the call or without a trace are the hang and incomplete-trace rules'.
    if (skipped.empty() && exited.empty())
      return;
    std::vector<int32_t> absent = skipped;
    absent.insert(absent.end(), exited.begin(), exited.end());
    std::string call = describeCall(e.reference);
    Finding f = ctx.make(id(), e.comm, e.reference);
    auto issuerNames = ctx.worldRanks(e.comm, issuers),
         absentNames = ctx.worldRanks(e.comm, absent);
    f.message = call + " on " + e.comm.label + " was issued by " + describeRanks(issuerNames) +
                " but not by " + describeRanks(absentNames);
    f.groups.push_back({"issued", issuerNames, call});
    if (!skipped.empty())
      f.groups.push_back({"did not issue", ctx.worldRanks(e.comm, skipped),
                          "skipped it and went on to their next call on " + e.comm.label});
    if (!exited.empty())
      f.groups.push_back({"did not issue", ctx.worldRanks(e.comm, exited),
                          "finalized, released the communicator or exited without it"});
    f.notes.push_back("every member of a communicator must issue every collective on it, in the "
                      "same order; the others wait for the missing ranks or pair this call with "
                      "a later one");
    std::string key =
        call + "|" + formatRanks(issuers) + "|" + formatRanks(skipped) + "|" + formatRanks(exited);
    ctx.findings.add(std::move(f), key);
  }

  void onExtra(const ExtraEvent &e, RuleContext &ctx) override {
    if (e.notIssuedBy.empty())
      return;
    std::string call = describeCall(e.call);
    Finding f = ctx.make(id(), e.comm, e.call);
    auto issuerNames = ctx.worldRanks(e.comm, e.issuedBy);
    auto absentNames = ctx.worldRanks(e.comm, e.notIssuedBy);
    f.message = call + " on " + e.comm.label + " was issued only by " + describeRanks(issuerNames) +
                "; " + describeRanks(absentNames) + " went on without it";
    f.groups.push_back({"issued", issuerNames, call});
    f.groups.push_back({"did not issue", absentNames, "their next call matches the one after it"});
    ctx.findings.add(std::move(f), "extra|" + call + "|" + formatRanks(e.issuedBy) + "|" +
                                       formatRanks(e.notIssuedBy));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeMissingParticipantRule() {
  return std::make_unique<MissingParticipant>();
}

} // namespace collcheck::analyzer
