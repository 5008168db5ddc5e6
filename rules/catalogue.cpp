#include "rules/catalogue.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace collcheck::rules {
namespace {

struct EmbeddedPage {
  const char *file;
  const char *text;
};

constexpr EmbeddedPage kPages[] = {
#include "catalogue_pages.inc"
};

[[noreturn]] void badPage(const std::string &file, const char *why) {
  std::fprintf(stderr, "collcheck: rule page rules/pages/%s: %s\n", file.c_str(), why);
  std::abort();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Rule parsePage(const EmbeddedPage &embedded) {
  Rule rule;
  rule.file = embedded.file;
  std::string_view text = embedded.text;
  if (!text.starts_with("---\n"))
    badPage(rule.file, "does not start with a front matter block");
  text.remove_prefix(4);
  size_t end = text.find("\n---\n");
  if (end == std::string_view::npos)
    badPage(rule.file, "front matter block is not closed");
  std::string_view front = text.substr(0, end + 1);
  rule.page = std::string(text.substr(end + 5));
  std::string severity;
  while (!front.empty()) {
    size_t nl = front.find('\n');
    std::string_view line = front.substr(0, nl);
    front.remove_prefix(nl == std::string_view::npos ? front.size() : nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "id")
      rule.id = value;
    else if (key == "title")
      rule.title = value;
    else if (key == "severity")
      severity = value;
    else if (key == "checker")
      rule.checker = value;
    else if (key == "summary")
      rule.summary = value;
  }
  if (rule.id.empty() || rule.title.empty() || rule.checker.empty() || rule.summary.empty())
    badPage(rule.file, "front matter needs id, title, severity, checker and summary");
  if (!parseSeverity(severity, rule.severity))
    badPage(rule.file, "severity must be note, warning or error");
  if (rule.checker != "analyzer" && rule.checker != "lint" && rule.checker != "both")
    badPage(rule.file, "checker must be analyzer, lint or both");
  return rule;
}

const std::vector<Rule> &loaded() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all;
    for (const EmbeddedPage &p : kPages)
      all.push_back(parsePage(p));
    std::sort(all.begin(), all.end(), [](const Rule &a, const Rule &b) { return a.id < b.id; });
    for (size_t i = 1; i < all.size(); ++i)
      if (all[i].id == all[i - 1].id)
        badPage(all[i].file, "duplicate rule id");
    return all;
  }();
  return rules;
}

} // namespace

std::string_view severityName(Severity s) {
  switch (s) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "error";
}

bool parseSeverity(std::string_view text, Severity &out) {
  if (text == "note")
    out = Severity::Note;
  else if (text == "warning")
    out = Severity::Warning;
  else if (text == "error")
    out = Severity::Error;
  else
    return false;
  return true;
}

std::span<const Rule> catalogue() { return loaded(); }

const Rule *find(std::string_view id) {
  if (id.starts_with("collcheck-"))
    id.remove_prefix(10);
  for (const Rule &r : loaded())
    if (r.id == id)
      return &r;
  return nullptr;
}

} // namespace collcheck::rules
