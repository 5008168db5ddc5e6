#include "support/ChangedLines.h"

#include <charconv>

namespace collcheck::lint {
namespace {

// Reads "START[,COUNT]" after the '+' of a hunk header.
bool parseRange(std::string_view text, unsigned &start, unsigned &count) {
  size_t comma = text.find(',');
  std::string_view first = text.substr(0, comma);
  auto [p, ec] = std::from_chars(first.data(), first.data() + first.size(), start);
  if (ec != std::errc() || p != first.data() + first.size())
    return false;
  count = 1;
  if (comma != std::string_view::npos) {
    std::string_view second = text.substr(comma + 1);
    auto [q, ec2] = std::from_chars(second.data(), second.data() + second.size(), count);
    if (ec2 != std::errc() || q != second.data() + second.size())
      return false;
  }
  return true;
}

std::string_view pathOf(std::string_view header) {
  // "+++ b/src/x.cpp\t2024-..." : drop the timestamp some diff tools append, then the "b/".
  size_t tab = header.find('\t');
  if (tab != std::string_view::npos)
    header = header.substr(0, tab);
  if (header.starts_with("b/"))
    header.remove_prefix(2);
  return header;
}

} // namespace

bool ChangedLines::parse(std::string_view diff, ChangedLines &out, std::string &error) {
  out.lines_.clear();
  std::set<unsigned> *current = nullptr;
  unsigned newLine = 0, remainingNew = 0, remainingOld = 0, lineNumber = 0;
  size_t at = 0;
  while (at < diff.size()) {
    size_t end = diff.find('\n', at);
    if (end == std::string_view::npos)
      end = diff.size();
    std::string_view line = diff.substr(at, end - at);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    at = end + 1;
    ++lineNumber;
    if (remainingNew > 0 || remainingOld > 0) {
      // Inside a hunk body: context and added lines advance the new file, removed ones do not.
      if (line.starts_with("+")) {
        if (current)
          current->insert(newLine);
        ++newLine;
        --remainingNew;
      } else if (line.starts_with("-")) {
        if (remainingOld > 0)
          --remainingOld;
      } else if (line.starts_with(" ") || line.empty()) {
        ++newLine;
        if (remainingNew > 0)
          --remainingNew;
        if (remainingOld > 0)
          --remainingOld;
      } else if (!line.starts_with("\\")) {
        error = "diff line " + std::to_string(lineNumber) + ": hunk ends early";
        return false;
      }
      continue;
    }
    if (line.starts_with("+++ ")) {
      std::string_view path = pathOf(line.substr(4));
      current = path == "/dev/null" ? nullptr : &out.lines_[std::string(path)];
    } else if (line.starts_with("@@ ")) {
      size_t plus = line.find(" +");
      size_t close = line.find(" @@", 3);
      size_t minus = line.find(" -");
      if (plus == std::string_view::npos || close == std::string_view::npos || close < plus ||
          minus == std::string_view::npos) {
        error = "diff line " + std::to_string(lineNumber) + ": malformed hunk header";
        return false;
      }
      unsigned oldStart = 0, oldCount = 0;
      if (!parseRange(line.substr(plus + 2, close - plus - 2), newLine, remainingNew) ||
          !parseRange(line.substr(minus + 2, plus - minus - 2), oldStart, oldCount)) {
        error = "diff line " + std::to_string(lineNumber) + ": malformed hunk header";
        return false;
      }
      remainingOld = oldCount;
    }
  }
  std::erase_if(out.lines_, [](const auto &entry) { return entry.second.empty(); });
  return true;
}

bool ChangedLines::contains(std::string_view path, unsigned line) const {
  auto it = lines_.find(path);
  return it != lines_.end() && it->second.contains(line);
}

std::vector<std::string> ChangedLines::files() const {
  std::vector<std::string> names;
  for (const auto &entry : lines_)
    names.push_back(entry.first);
  return names;
}

} // namespace collcheck::lint
