#include "analyzer/model/finding.h"

#include <algorithm>
#include <cstdio>

namespace collcheck::analyzer {

void FindingCollector::add(Finding finding, const std::string &groupKey) {
  std::string key = finding.ruleId + '\x1f' + std::to_string(finding.commId) + '\x1f' + groupKey;
  if (auto it = byKey_.find(key); it != byKey_.end()) {
    Finding &known = findings_[it->second];
    known.repeats += finding.repeats;
    known.lastSeq = std::max(known.lastSeq, finding.lastSeq);
    known.firstSeq = std::min(known.firstSeq, finding.firstSeq);
    known.lastWindow = std::max(known.lastWindow, finding.lastWindow);
    known.firstWindow = std::min(known.firstWindow, finding.firstWindow);
    return;
  }
  std::string ruleAndComm = finding.ruleId + '\x1f' + std::to_string(finding.commId);
  size_t &distinct = distinctPerRuleAndComm_[ruleAndComm];
  if (distinct >= maxDistinct_) {
    // Too many different findings of one kind: keep counting, stop describing each.
    auto [slot, inserted] = overflowIndex_.try_emplace(ruleAndComm, findings_.size());
    if (inserted) {
      Finding overflow = finding;
      overflow.message = "further " + finding.ruleId +
                         " findings on this communicator, each "
                         "different from the ones above (only the first " +
                         std::to_string(maxDistinct_) + " are described)";
      overflow.groups.clear();
      overflow.notes.clear();
      findings_.push_back(std::move(overflow));
    } else {
      Finding &known = findings_[slot->second];
      known.repeats += finding.repeats;
      known.lastSeq = std::max(known.lastSeq, finding.lastSeq);
      known.lastWindow = std::max(known.lastWindow, finding.lastWindow);
    }
    return;
  }
  ++distinct;
  for (RankGroup &group : finding.groups) // nearly always sorted already (and can be millions)
    if (!std::is_sorted(group.ranks.begin(), group.ranks.end()))
      std::sort(group.ranks.begin(), group.ranks.end());
  byKey_.emplace(std::move(key), findings_.size());
  findings_.push_back(std::move(finding));
}

std::vector<Finding> FindingCollector::take() {
  std::vector<Finding> out = std::move(findings_);
  // Stable: within one severity the order of discovery (communicator, then position) is kept.
  std::stable_sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  findings_.clear();
  byKey_.clear();
  distinctPerRuleAndComm_.clear();
  overflowIndex_.clear();
  return out;
}

std::string formatRanks(const std::vector<int32_t> &input) {
  // Rank lists are nearly always sorted and distinct already (a job's missing ranks can run to
  // millions): copy and sort only when they are not.
  std::vector<int32_t> sorted;
  bool ordered =
      std::adjacent_find(input.begin(), input.end(), std::greater_equal<>()) == input.end();
  if (!ordered) {
    sorted = input;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
  const std::vector<int32_t> &ranks = ordered ? input : sorted;
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    if (!out.empty())
      out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i)
      out += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string describeRanks(const std::vector<int32_t> &ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + formatRanks(ranks);
}

std::string describeCodePoint(const CodePoint &point) {
  if (point.resolved)
    return point.file + ":" + std::to_string(point.line) +
           (point.function.empty() ? "" : " (" + point.function + ")");
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(point.offset));
  return (point.module.empty() ? std::string("?") : point.module) + offset +
         (point.function.empty() ? "" : " (" + point.function + ")");
}

std::string describeCallSite(const CallSite &site) {
  return describeCodePoint(site) + (site.from ? ", from " + describeCodePoint(*site.from) : "");
}

} // namespace collcheck::analyzer
