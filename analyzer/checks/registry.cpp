#include "analyzer/checks/rule.h"

#include "analyzer/checks/objective/objective_rule.h"
#include "analyzer/checks/objective/reference_comparison.h"

#include "rules/catalogue.h"

#include <csignal>
#include <cstring>

namespace collcheck::analyzer {

std::unique_ptr<TraceRule> makeMissingParticipantRule();
std::unique_ptr<TraceRule> makeKindMismatchRule();
std::unique_ptr<TraceRule> makeCountMismatchRule();
std::unique_ptr<TraceRule> makeDatatypeMismatchRule();
std::unique_ptr<TraceRule> makeReduceOpMismatchRule();
std::unique_ptr<TraceRule> makePremulsumScalarMismatchRule();
std::unique_ptr<TraceRule> makeRootMismatchRule();
std::unique_ptr<TraceRule> makeCollectiveReorderRule();
std::unique_ptr<TraceRule> makeSendRecvMismatchRule();
std::unique_ptr<TraceRule> makeHangRule();
std::unique_ptr<TraceRule> makeIncompleteTraceRule();
std::unique_ptr<TraceRule> makeRankEndedUnfinishedRule();
std::unique_ptr<TraceRule> makeInvalidCommunicatorRule();
std::unique_ptr<TraceRule> makeNegativeCountRule();
std::unique_ptr<TraceRule> makeInvalidRootRule();
std::unique_ptr<TraceRule> makeInvalidDatatypeRule();

std::vector<std::unique_ptr<TraceRule>> makeTraceRules(const objective::ReferenceRun *reference) {
  std::vector<std::unique_ptr<TraceRule>> rules;
  rules.push_back(makeMissingParticipantRule());
  rules.push_back(makeKindMismatchRule());
  rules.push_back(makeCountMismatchRule());
  rules.push_back(makeDatatypeMismatchRule());
  rules.push_back(makeReduceOpMismatchRule());
  rules.push_back(makePremulsumScalarMismatchRule());
  rules.push_back(makeRootMismatchRule());
  rules.push_back(makeCollectiveReorderRule());
  rules.push_back(makeSendRecvMismatchRule());
  rules.push_back(makeHangRule());
  rules.push_back(makeIncompleteTraceRule());
  rules.push_back(makeRankEndedUnfinishedRule());
  rules.push_back(makeInvalidCommunicatorRule());
  rules.push_back(makeNegativeCountRule());
  rules.push_back(makeInvalidRootRule());
  rules.push_back(makeInvalidDatatypeRule());
  // analyzer/checks/objective: judged on the weighed reductions of each window
  rules.push_back(objective::makeUncompensatedMeanRule());
  rules.push_back(objective::makeDoubleNormalizationRule());
  rules.push_back(objective::makePartialWindowRule());
  rules.push_back(objective::makeZeroCountSkipRule());
  rules.push_back(objective::makeZeroCountDivisionRule());
  rules.push_back(objective::makeCountOnActiveRanksRule());
  rules.push_back(objective::makeUnverifiedReductionRule());
  if (reference)
    rules.push_back(objective::makeReferenceMismatchRule(*reference));
  return rules;
}

std::string describeSignal(int signal) {
  const char *name = sigabbrev_np(signal);
  std::string text = name ? std::string("SIG") + name : "signal " + std::to_string(signal);
  return isCrashSignal(signal) ? "died of " + text : "terminated by " + text;
}

bool isCrashSignal(int signal) { return signal != SIGTERM && signal != SIGINT; }

bool crashedOutsideCalls(const JobView &job) {
  for (size_t file = 0; file < job.traces().files.size(); ++file) {
    const ProcessState &p = job.process(static_cast<int>(file));
    if (p.endSignal && isCrashSignal(p.endSignal) &&
        (!p.hasLastCall || format::returned(p.lastCall)))
      return true;
  }
  return false;
}

std::string_view presenceName(Presence p) {
  switch (p) {
  case Presence::Matched:
    return "matched";
  case Presence::Variant:
    return "variant";
  case Presence::Reordered:
    return "reordered";
  case Presence::Skipped:
    return "skipped";
  case Presence::Exited:
    return "exited";
  case Presence::NotReached:
    return "not reached";
  case Presence::NoTrace:
    return "no trace";
  }
  return "unknown";
}

Finding RuleContext::make(std::string_view ruleId) const {
  Finding f;
  f.ruleId = ruleId;
  const rules::Rule *rule = rules::find(ruleId);
  f.severity = rule ? rule->severity : Severity::Error;
  return f;
}

Finding RuleContext::make(std::string_view ruleId, const Communicator &comm,
                          const format::Record &at) const {
  Finding f = make(ruleId);
  f.commId = comm.id;
  f.commLabel = comm.label;
  f.hasPosition = true;
  f.firstSeq = f.lastSeq = at.seq();
  f.firstWindow = f.lastWindow = at.window;
  if (at.commRank >= 0 && static_cast<size_t>(at.commRank) < comm.fileOf.size()) {
    int file = comm.fileOf[static_cast<size_t>(at.commRank)];
    if (file >= 0)
      f.firstTimeNs = job.wallTimeNs(file, at);
  }
  return f;
}

std::vector<int32_t> RuleContext::worldRanks(const Communicator &comm,
                                             const std::vector<int32_t> &commRanks) const {
  std::vector<int32_t> out;
  out.reserve(commRanks.size());
  for (int32_t r : commRanks)
    out.push_back(comm.nameOf(r));
  return out;
}

} // namespace collcheck::analyzer
