// The rule catalogue shared by the analyzer and the lint. Each rule is one page in rules/pages/,
// a front matter block (id, title, severity, checker, summary) followed by its rationale, a bad and
// a good example and the fix. Ids are stable: SARIF output and NOLINT comments use them.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace collcheck::rules {

enum class Severity { Note, Warning, Error };
std::string_view severityName(Severity s);
// Parses "note", "warning" or "error"; false when `text` is none of them.
bool parseSeverity(std::string_view text, Severity &out);

struct Rule {
  std::string id;      // e.g. "missing-participant"
  std::string title;   // one line
  Severity severity;   // default severity
  std::string checker; // "analyzer", "lint" or "both"
  std::string summary; // one sentence, used as the SARIF shortDescription
  std::string page;    // the whole page (markdown) without its front matter
  std::string file;    // pages/<file>
};

// All rules, sorted by id. The catalogue is validated on first use: a page without an id, title,
// severity or checker aborts with a message naming the page (a build-time mistake, caught by
// tests).
std::span<const Rule> catalogue();
// A rule by its id or by the name clang-tidy prints for it (`collcheck-<id>`).
const Rule *find(std::string_view id);

} // namespace collcheck::rules
