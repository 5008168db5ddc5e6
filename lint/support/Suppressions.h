// NOLINT comments, spelled as clang-tidy spells them: `NOLINT`, `NOLINT(rule, ...)`,
// `NOLINTNEXTLINE(...)` and `NOLINTBEGIN(...)` ... `NOLINTEND(...)`. A rule is named by its
// catalogue id or by its clang-tidy name `collcheck-<id>`; `*` globs, and a comment without a list
// silences every rule.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace collcheck::lint {

class Suppressions {
public:
  // `buffer` is the whole text of one source file.
  explicit Suppressions(std::string_view buffer);

  // Whether a finding of `ruleId` reported on `line` (1-based) is silenced.
  bool suppressed(unsigned line, std::string_view ruleId) const;

  // A NOLINTBEGIN without its NOLINTEND or the other way round: reported, and the unmatched
  // NOLINTBEGIN silences nothing (as in clang-tidy).
  struct Problem {
    unsigned line;
    std::string message;
  };
  const std::vector<Problem> &problems() const { return problems_; }

private:
  struct Directive {
    unsigned firstLine, lastLine;
    std::vector<std::string> rules; // empty: every rule
  };
  std::vector<Directive> directives_;
  std::vector<Problem> problems_;
};

// Glob match where `*` stands for any run of characters.
bool globMatch(std::string_view pattern, std::string_view text);

} // namespace collcheck::lint
