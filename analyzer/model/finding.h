// The analyzer's result model: what a rule found, independent of how it is reported. Reporters
// (text, JSON, SARIF, HTML, Perfetto) read findings; rules write them; neither knows the other.
#pragma once

#include "rules/catalogue.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace collcheck::analyzer {

using rules::Severity;

// One set of ranks playing one part in a finding: "issued", "did not issue", "waits", ...
struct RankGroup {
  std::string role;
  std::vector<int32_t> ranks; // world ranks, sorted
  std::string detail;         // what these ranks did, e.g. "allreduce(1024 x float32, sum)"
};

// Where some ranks made the call a finding is about (the call at its first position, per rank).
// A place in the application's code: a return address, symbolized where its debug information was
// found.
struct CodePoint {
  bool resolved = false; // file and line known
  std::string function;
  std::string file;
  int line = 0;
  std::string module; // the object the call was made from, and the return address in it
  uint64_t offset = 0;
};
// "file:line (function)" or "module+0xoffset".
std::string describeCodePoint(const CodePoint &point);

struct CallSite : CodePoint {
  std::vector<int32_t> ranks; // world ranks, sorted
  std::string hint;           // when not resolved: why, and how to resolve it
  // Where the function that made the call keeps a frame pointer: the line that called it (the
  // application's wrapper's caller).
  std::optional<CodePoint> from;
};
// "file:line (function)", "module+0xoffset", then ", from " and the caller where known.
std::string describeCallSite(const CallSite &site);

struct Finding {
  std::string ruleId;
  Severity severity = Severity::Error;
  uint64_t commId = 0; // 0 when the finding concerns the job or a file, not a communicator
  std::string commLabel;
  bool hasPosition = false;           // seq and window ranges are meaningful
  uint64_t firstSeq = 0, lastSeq = 0; // sequence numbers on commId of the first and last repeat
  uint32_t firstWindow = 0, lastWindow = 0;
  uint64_t repeats = 1;
  double firstTimeNs = -1; // wall-clock time (ns since the epoch) of the first repeat, -1 unknown
  std::string message;     // one sentence: what is wrong
  std::vector<RankGroup> groups;
  std::vector<std::string> notes;
  std::vector<std::string> files;  // trace files the finding is about (input findings)
  std::vector<CallSite> callSites; // where the ranks made the call, grouped by site
};

// Collects findings and folds repeats: two findings with the same rule, communicator and group key
// are one finding whose repeat count, last sequence number and last window grow. Memory grows with
// the number of distinct findings, not with the number of repeats; past `maxDistinct` distinct
// findings of one rule on one communicator, further ones are counted in one overflow finding.
class FindingCollector {
public:
  explicit FindingCollector(size_t maxDistinct = 200) : maxDistinct_(maxDistinct) {}
  // `groupKey` says which findings are the same one: the rule's own description of the mismatch,
  // never its position.
  void add(Finding finding, const std::string &groupKey);
  // All findings, errors first, each severity in order of discovery (the judge then orders them
  // by communicator and position, match/judge.h).
  std::vector<Finding> take();
  size_t size() const { return findings_.size(); }

private:
  size_t maxDistinct_;
  std::vector<Finding> findings_;
  std::map<std::string, size_t> byKey_;
  std::map<std::string, size_t> distinctPerRuleAndComm_;
  std::map<std::string, size_t> overflowIndex_;
};

// "0-3, 5, 7-9": ranks are named in runs so a thousand ranks stay one line.
std::string formatRanks(const std::vector<int32_t> &ranks);
// "rank 3" / "ranks 0-2, 5".
std::string describeRanks(const std::vector<int32_t> &ranks);

} // namespace collcheck::analyzer
