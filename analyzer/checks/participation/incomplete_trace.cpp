// incomplete-trace: what the input does not let the analyzer decide. Missing rank files,
// unreadable files, torn or lost records: each is named with its file and the reason, and every
// position that could not be checked for some rank is counted, so a partial trace never passes
// silently.
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

#include <map>

namespace collcheck::analyzer {
namespace {

class IncompleteTrace final : public TraceRule {
public:
  std::string_view id() const override { return "incomplete-trace"; }

  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    if (e.allMatched)
      return;
    std::vector<int32_t> unknown;
    for (size_t r = 0; r < e.presence.size(); ++r)
      if (e.presence[r] == Presence::NoTrace)
        unknown.push_back(static_cast<int32_t>(r));
    if (unknown.empty())
      return;
    Finding f = ctx.make(id(), e.comm, e.reference);
    auto names = ctx.worldRanks(e.comm, unknown);
    f.message = "collectives on " + e.comm.label + " could not be checked for " +
                describeRanks(names) + ": no trace of " + (names.size() == 1 ? "it" : "them") +
                " covers these positions";
    f.groups.push_back({"unchecked", names, "no trace"});
    f.notes.push_back("a missing, cut or damaged trace file: whether these ranks issued the calls "
                      "is undecidable, so they are reported neither as missing nor as matching");
    ctx.findings.add(std::move(f), "unchecked|" + formatRanks(unknown));
  }

  void onJobEnd(RuleContext &ctx) override {
    const TraceSet &traces = ctx.job.traces();
    if (!traces.missingRanks.empty()) {
      Finding f = ctx.make(id());
      f.message = "no trace file for " + describeRanks(traces.missingRanks) + " of a " +
                  std::to_string(traces.worldSize) + "-rank job";
      f.groups.push_back({"no trace", traces.missingRanks, "file missing"});
      f.notes.push_back("their calls are not checked; the other ranks are checked among "
                        "themselves");
      ctx.findings.add(std::move(f), "missing-files");
    }
    auto add = [&](const InputProblem &p) {
      Finding f = ctx.make(id());
      // The file is the finding's location in every report; the message does not repeat it.
      f.message = p.reason;
      if (!p.file.empty())
        f.files.push_back(p.file);
      ctx.findings.add(std::move(f), "problem|" + p.file + "|" + p.reason);
    };
    for (const InputProblem &p : traces.problems)
      add(p);
    for (const InputProblem &p : ctx.job.streamProblems())
      add(p);
  }
};

} // namespace

std::unique_ptr<TraceRule> makeIncompleteTraceRule() { return std::make_unique<IncompleteTrace>(); }

} // namespace collcheck::analyzer
