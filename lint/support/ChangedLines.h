// The lines a change adds or modifies, read from a unified diff (`git diff -U0 BASE`), so that a
// review run reports only findings on changed lines.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace collcheck::lint {

class ChangedLines {
public:
  // Parses a unified diff. Paths are taken from the `+++ b/PATH` lines, relative to the
  // repository root; deleted files contribute nothing. False with a message on a malformed diff.
  static bool parse(std::string_view diff, ChangedLines &out, std::string &error);

  // `path` relative to the repository root, as the diff spells it.
  bool contains(std::string_view path, unsigned line) const;
  // Files with at least one added or modified line.
  std::vector<std::string> files() const;

private:
  std::map<std::string, std::set<unsigned>, std::less<>> lines_;
};

} // namespace collcheck::lint
