// Compiler-style text: "location: severity: message [rule]", then the ranks and notes indented,
// then one summary line. Colored when asked (on a terminal by default).
#include "analyzer/report/report.h"

namespace collcheck::analyzer {

void writeText(std::ostream &out, const ReportInput &in, bool color) {
  auto paint = [&](const char *code, const std::string &text) {
    return color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  };
  auto severityCode = [](Severity s) {
    return s == Severity::Error ? "1;31" : s == Severity::Warning ? "1;35" : "1;36";
  };
  for (const Finding &f : in.result.findings) {
    out << paint("1", findingLocation(f)) << ": "
        << paint(severityCode(f.severity), std::string(rules::severityName(f.severity))) << ": "
        << f.message << " [" << f.ruleId << "]\n";
    for (const RankGroup &g : f.groups)
      out << "    " << g.role << ": " << describeRanks(g.ranks)
          << (g.detail.empty() ? "" : ": " + g.detail) << "\n";
    for (const CallSite &s : f.callSites) {
      out << "    called at: " << describeRanks(s.ranks) << ": " << describeCallSite(s) << "\n";
      if (!s.resolved && !s.hint.empty())
        out << "      " << paint("1;36", "hint") << ": " << s.hint << "\n";
    }
    for (const std::string &note : f.notes)
      out << "    " << paint("1;36", "note") << ": " << note << "\n";
    if (f.repeats > 1) {
      out << "    " << paint("1;36", "note") << ": repeated " << f.repeats << " times";
      if (f.hasPosition) {
        out << ", seq " << f.firstSeq << " to " << f.lastSeq;
        if (f.lastWindow != f.firstWindow)
          out << ", windows " << f.firstWindow << " to " << f.lastWindow;
      }
      out << "\n";
    }
  }
  for (const std::string &note : in.siteNotes)
    out << paint("1;36", "note") << ": " << note << "\n";
  std::string summary = "collcheck: " + summaryLine(in);
  FindingCounts c = countFindings(in.result.findings);
  out << (c.total() ? paint(c.errors ? "1;31" : "1;35", summary) : paint("1;32", summary)) << "\n";
}

} // namespace collcheck::analyzer
