// The judging half of an analysis: the rules, the objective stage that weighs the windows'
// reductions for them, the finding collector and the participation recorder, fed with the
// matcher's events. A single thread feeds it straight from its aligners; an analysis split among
// threads feeds it with the events every share logged (event_log.h), so the rules run once, over
// the whole job, in either mode.
#pragma once

#include "analyzer/checks/objective/objective_checks.h"
#include "analyzer/checks/rule.h"
#include "analyzer/match/aligner.h"
#include "analyzer/match/participation_recorder.h"
#include "analyzer/model/participation.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace collcheck::analyzer {

// Every event the matcher produces, in one interface.
class JobEvents : public EventSink {
public:
  virtual void pointToPoint(const PointToPointEvent &) = 0;
  virtual void meta(const MetaEvent &) = 0;
};

// The order of communicators in a report: by the first record that names each (slot, then file),
// so it does not depend on how the reading was scheduled or split.
struct CommOrderKey {
  uint64_t slot = UINT64_MAX;
  int file = 0;
  bool operator<(const CommOrderKey &o) const {
    return slot != o.slot ? slot < o.slot : file < o.file;
  }
};

class Judge final : public JobEvents {
public:
  Judge(const JobView &job, bool participation, const objective::ReferenceRun *reference = nullptr);
  void collective(const CollectiveEvent &e) override;
  void reorder(const ReorderEvent &e) override;
  void extra(const ExtraEvent &e) override;
  void communicatorEnd(const CommunicatorEnd &e) override;
  void pointToPoint(const PointToPointEvent &e) override;
  void meta(const MetaEvent &e) override;
  void jobEnd();
  // Findings errors first, then by communicator (in `order`: comm id -> rank in the report, job
  // findings first) and first sequence number; pictures in communicator order.
  std::vector<Finding> takeFindings(const std::unordered_map<uint64_t, uint32_t> &order);
  std::vector<CommPicture> takePictures(const std::unordered_map<uint64_t, uint32_t> &order);
  std::vector<std::string> takeUncheckable() { return std::move(context_.uncheckable); }

private:
  std::vector<std::unique_ptr<TraceRule>> rules_;
  objective::ObjectiveChecks objective_;
  FindingCollector findings_;
  RuleContext context_;
  ParticipationRecorder recorder_;
  const JobView &job_;
  bool participation_;
};

} // namespace collcheck::analyzer
