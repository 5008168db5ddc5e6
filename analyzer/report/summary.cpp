#include "analyzer/report/report.h"

#include <cstdio>

namespace collcheck::analyzer {

FindingCounts countFindings(const std::vector<Finding> &findings) {
  FindingCounts c;
  for (const Finding &f : findings) {
    switch (f.severity) {
    case Severity::Error:
      ++c.errors;
      break;
    case Severity::Warning:
      ++c.warnings;
      break;
    case Severity::Note:
      ++c.notes;
      break;
    }
  }
  return c;
}

std::string findingLocation(const Finding &f) {
  if (f.hasPosition) {
    std::string out = f.commLabel + " seq " + std::to_string(f.firstSeq);
    if (f.lastSeq != f.firstSeq)
      out += "-" + std::to_string(f.lastSeq);
    if (f.firstWindow || f.lastWindow) {
      out += " (window " + std::to_string(f.firstWindow);
      if (f.lastWindow != f.firstWindow)
        out += "-" + std::to_string(f.lastWindow);
      out += ")";
    }
    return out;
  }
  if (!f.files.empty())
    return f.files.front();
  return "job";
}

namespace {
std::string plural(uint64_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
} // namespace

std::string summaryLine(const ReportInput &in) {
  FindingCounts c = countFindings(in.result.findings);
  // Communicators without any call (MPI_COMM_SELF, unused splits) are listed in JSON, not here.
  uint64_t used = 0;
  for (const CommSummary &c : in.result.communicators)
    used += c.positions > 0 || c.pointToPoint > 0;
  std::string out = plural(in.traces.files.size(), "rank", "ranks") + ", " +
                    plural(used, "communicator", "communicators") + ", " +
                    plural(in.result.positions, "collective", "collectives") + " checked";
  if (c.total() == 0)
    return out + ": no findings";
  out += ":";
  bool first = true;
  auto add = [&](uint64_t n, const char *one, const char *many) {
    if (!n)
      return;
    out += (first ? " " : ", ") + plural(n, one, many);
    first = false;
  };
  add(c.errors, "error", "errors");
  add(c.warnings, "warning", "warnings");
  add(c.notes, "note", "notes");
  return out;
}

nlohmann::ordered_json findingJson(const Finding &f) {
  nlohmann::ordered_json j;
  j["rule"] = f.ruleId;
  j["severity"] = rules::severityName(f.severity);
  j["message"] = f.message;
  if (f.commId || !f.commLabel.empty())
    j["communicator"] = {{"id", hexCommId(f.commId)}, {"label", f.commLabel}};
  else
    j["communicator"] = nullptr;
  if (f.hasPosition) {
    j["seq"] = {{"first", f.firstSeq}, {"last", f.lastSeq}};
    j["window"] = {{"first", f.firstWindow}, {"last", f.lastWindow}};
  } else {
    j["seq"] = nullptr;
    j["window"] = nullptr;
  }
  j["repeats"] = f.repeats;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const RankGroup &g : f.groups)
    groups.push_back({{"role", g.role}, {"ranks", g.ranks}, {"detail", g.detail}});
  j["groups"] = groups;
  j["notes"] = f.notes;
  j["files"] = f.files;
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const CallSite &s : f.callSites) {
    nlohmann::ordered_json site;
    site["ranks"] = s.ranks;
    site["resolved"] = s.resolved;
    site["file"] = s.resolved ? nlohmann::ordered_json(s.file) : nlohmann::ordered_json(nullptr);
    site["line"] = s.resolved ? nlohmann::ordered_json(s.line) : nlohmann::ordered_json(nullptr);
    site["function"] =
        s.function.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.function);
    site["module"] = s.module;
    char offset[32];
    std::snprintf(offset, sizeof offset, "0x%llx", static_cast<unsigned long long>(s.offset));
    site["offset"] = offset;
    if (s.from) {
      nlohmann::ordered_json from;
      from["resolved"] = s.from->resolved;
      from["file"] =
          s.from->resolved ? nlohmann::ordered_json(s.from->file) : nlohmann::ordered_json(nullptr);
      from["line"] =
          s.from->resolved ? nlohmann::ordered_json(s.from->line) : nlohmann::ordered_json(nullptr);
      from["function"] = s.from->function.empty() ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(s.from->function);
      from["module"] = s.from->module;
      char fromOffset[32];
      std::snprintf(fromOffset, sizeof fromOffset, "0x%llx",
                    static_cast<unsigned long long>(s.from->offset));
      from["offset"] = fromOffset;
      site["from"] = from;
    } else {
      site["from"] = nullptr;
    }
    site["text"] = describeCallSite(s);
    site["hint"] =
        s.hint.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.hint);
    sites.push_back(site);
  }
  j["call_sites"] = sites;
  if (f.firstTimeNs >= 0)
    j["time_ns"] = static_cast<int64_t>(f.firstTimeNs);
  else
    j["time_ns"] = nullptr;
  return j;
}

} // namespace collcheck::analyzer
