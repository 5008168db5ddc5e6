#include "support/Suppressions.h"

#include <algorithm>
#include <cctype>

namespace collcheck::lint {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// Parses the `(a, b)` after a NOLINT word. Returns false when the list is not closed, which
// clang-tidy treats as no directive at all.
bool parseRuleList(std::string_view rest, std::vector<std::string> &rules) {
  if (rest.empty() || rest.front() != '(')
    return true;
  size_t close = rest.find(')');
  if (close == std::string_view::npos)
    return false;
  std::string_view list = rest.substr(1, close - 1);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    if (!item.empty())
      rules.emplace_back(item);
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
  }
  if (rules.empty())
    rules.emplace_back("*");
  return true;
}

bool ruleListMatches(const std::vector<std::string> &rules, std::string_view ruleId) {
  if (rules.empty())
    return true;
  std::string tidyName = "collcheck-" + std::string(ruleId);
  return std::any_of(rules.begin(), rules.end(), [&](const std::string &pattern) {
    return globMatch(pattern, ruleId) || globMatch(pattern, tidyName);
  });
}

} // namespace

bool globMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

Suppressions::Suppressions(std::string_view buffer) {
  struct Open {
    unsigned line;
    std::vector<std::string> rules;
  };
  std::vector<Open> open;
  unsigned line = 1;
  size_t lineStart = 0;
  while (lineStart <= buffer.size()) {
    size_t lineEnd = buffer.find('\n', lineStart);
    if (lineEnd == std::string_view::npos)
      lineEnd = buffer.size();
    std::string_view text = buffer.substr(lineStart, lineEnd - lineStart);
    // Only in a comment: code and strings that mention the word are not directives.
    size_t comment = std::min(text.find("//"), text.find("/*"));
    for (size_t at = text.find("NOLINT"); at != std::string_view::npos;
         at = text.find("NOLINT", at + 6)) {
      if (comment == std::string_view::npos || at < comment)
        continue;
      std::string_view rest = text.substr(at + 6);
      enum { Same, Next, Begin, End } kind = Same;
      if (rest.starts_with("NEXTLINE")) {
        kind = Next;
        rest.remove_prefix(8);
      } else if (rest.starts_with("BEGIN")) {
        kind = Begin;
        rest.remove_prefix(5);
      } else if (rest.starts_with("END")) {
        kind = End;
        rest.remove_prefix(3);
      }
      // NOLINTFOO is not a directive; a word must end or open a rule list.
      if (!rest.empty() && rest.front() != '(' &&
          (std::isalnum(static_cast<unsigned char>(rest.front())) || rest.front() == '_'))
        continue;
      std::vector<std::string> rules;
      if (!parseRuleList(rest, rules))
        continue;
      switch (kind) {
      case Same:
        directives_.push_back({line, line, std::move(rules)});
        break;
      case Next:
        directives_.push_back({line + 1, line + 1, std::move(rules)});
        break;
      case Begin:
        open.push_back({line, std::move(rules)});
        break;
      case End: {
        auto match = std::find_if(open.rbegin(), open.rend(),
                                  [&](const Open &o) { return o.rules == rules; });
        if (match == open.rend()) {
          problems_.push_back({line, "NOLINTEND without a matching NOLINTBEGIN"});
        } else {
          directives_.push_back({match->line, line, match->rules});
          open.erase(std::next(match).base());
        }
        break;
      }
      }
    }
    if (lineEnd == buffer.size())
      break;
    lineStart = lineEnd + 1;
    ++line;
  }
  for (const Open &o : open)
    problems_.push_back({o.line, "NOLINTBEGIN without a matching NOLINTEND"});
}

bool Suppressions::suppressed(unsigned line, std::string_view ruleId) const {
  return std::any_of(directives_.begin(), directives_.end(), [&](const Directive &d) {
    return line >= d.firstLine && line <= d.lastLine && ruleListMatches(d.rules, ruleId);
  });
}

} // namespace collcheck::lint
