// Findings as plain data, detached from Clang's source manager: what the text printer, the SARIF
// writer and the changed-lines filter consume.
#pragma once

#include <string>
#include <vector>

namespace collcheck::lint {

struct ReportedLocation {
  std::string file; // absolute path
  unsigned line = 0, column = 0;
  unsigned endLine = 0, endColumn = 0; // 0: same as the start
};

struct ReportedNote {
  ReportedLocation where;
  std::string message;
};

struct ReportedFix {
  ReportedLocation range; // the replaced characters; endColumn is one past the last one
  std::string replacement;
};

struct ReportedFinding {
  std::string ruleId;
  std::string level; // note, warning or error
  std::string message;
  ReportedLocation where;
  std::vector<ReportedNote> notes; // the flow, in order: where the value was formed, then used
  std::vector<ReportedFix> fixes;
};

// Something about the run itself: a file that does not compile, a file that could not be read.
struct ToolNotification {
  std::string level; // note, warning or error
  std::string message;
  ReportedLocation where; // file may be empty
};

// `path` relative to `root` when it lies inside it, else empty.
std::string relativeTo(const std::string &root, const std::string &path);

} // namespace collcheck::lint
