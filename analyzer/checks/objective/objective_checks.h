// The stage between the analyzer's pipeline and the objective rules: it records the windows while
// the traces stream past (ledger.h) and, at the end of the job, sorts them (windows.h), weighs
// every gradient and count reduction (weighing.h) and hands each to the rules that apply.
#pragma once

#include "analyzer/checks/objective/ledger.h"

#include <memory>
#include <vector>

namespace collcheck::analyzer::objective {

class ObjectiveChecks {
public:
  void meta(const MetaEvent &e, const JobView &job) {
    ledger_.meta(e.file, e.record, job.traces().files.size());
  }
  void collective(const CollectiveEvent &e) { ledger_.collective(e); }
  void extra(const ExtraEvent &e) { ledger_.extra(e); }
  // Weighs the job's windows and calls onGradientReduction and onCountReduction of `rules`.
  void jobEnd(const std::vector<std::unique_ptr<TraceRule>> &rules, RuleContext &ctx);

private:
  Ledger ledger_;
};

} // namespace collcheck::analyzer::objective
