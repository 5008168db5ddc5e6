#include "analyzer/match/judge.h"

#include <algorithm>

namespace collcheck::analyzer {

Judge::Judge(const JobView &job, bool participation, const objective::ReferenceRun *reference)
    : rules_(makeTraceRules(reference)), context_(findings_, job), job_(job),
      participation_(participation) {}

void Judge::collective(const CollectiveEvent &e) {
  for (auto &rule : rules_)
    rule->onCollective(e, context_);
  objective_.collective(e);
  if (participation_)
    recorder_.collective(e);
}

void Judge::reorder(const ReorderEvent &e) {
  for (auto &rule : rules_)
    rule->onReorder(e, context_);
  if (participation_)
    recorder_.reorder(e);
}

void Judge::extra(const ExtraEvent &e) {
  for (auto &rule : rules_)
    rule->onExtra(e, context_);
  objective_.extra(e);
  if (participation_)
    recorder_.extra(e);
}

void Judge::communicatorEnd(const CommunicatorEnd &e) {
  for (auto &rule : rules_)
    rule->onCommunicatorEnd(e, context_);
  if (participation_)
    recorder_.communicatorEnd(e, job_);
}

void Judge::pointToPoint(const PointToPointEvent &e) {
  for (auto &rule : rules_)
    rule->onPointToPoint(e, context_);
}

void Judge::meta(const MetaEvent &e) {
  for (auto &rule : rules_)
    rule->onMeta(e, context_);
  objective_.meta(e, job_);
}

void Judge::jobEnd() {
  for (auto &rule : rules_)
    rule->onJobEnd(context_);
  objective_.jobEnd(rules_, context_);
}

namespace {
uint32_t rankOf(const std::unordered_map<uint64_t, uint32_t> &order, uint64_t commId) {
  auto it = order.find(commId);
  return it == order.end() ? UINT32_MAX : it->second;
}
} // namespace

std::vector<Finding> Judge::takeFindings(const std::unordered_map<uint64_t, uint32_t> &order) {
  std::vector<Finding> out = findings_.take();
  // Job findings (commId 0) first, then each communicator's in report order.
  auto place = [&](const Finding &f) -> uint64_t {
    return f.commId ? uint64_t{rankOf(order, f.commId)} + 1 : 0;
  };
  // Stable: findings of one communicator at one position keep their order of discovery, which
  // is the order of that communicator's events in every mode.
  std::stable_sort(out.begin(), out.end(), [&](const Finding &a, const Finding &b) {
    if (a.severity != b.severity)
      return static_cast<int>(a.severity) > static_cast<int>(b.severity);
    if (place(a) != place(b))
      return place(a) < place(b);
    return (a.hasPosition ? a.firstSeq : 0) < (b.hasPosition ? b.firstSeq : 0);
  });
  return out;
}

std::vector<CommPicture> Judge::takePictures(const std::unordered_map<uint64_t, uint32_t> &order) {
  std::vector<CommPicture> out = recorder_.take();
  std::stable_sort(out.begin(), out.end(), [&](const CommPicture &a, const CommPicture &b) {
    return rankOf(order, a.commId) < rankOf(order, b.commId);
  });
  return out;
}

} // namespace collcheck::analyzer
