// --html: one self-contained page (no script, no external resource): the summary, a
// participation picture per communicator that has a divergence (ranks by position, divergent
// cells colored, divergent columns marked), then the findings.
#include "analyzer/report/report.h"

#include <algorithm>
#include <map>

namespace collcheck::analyzer {
namespace {

std::string escape(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

// The colors are part of the report's contract (the legend, and the browser test, rely on them).
const char *cellColor(Cell c) {
  switch (c) {
  case Cell::Matched:
    return "#b7e1b5";
  case Cell::Mismatch:
    return "#d62728";
  case Cell::Reordered:
    return "#ff7f0e";
  case Cell::Missing:
    return "#7b1fa2";
  case Cell::Extra:
    return "#1f77b4";
  case Cell::NotReached:
    return "#9e9e9e";
  case Cell::Stuck:
    return "#000000";
  case Cell::Unknown:
    return "#e0e0e0";
  case Cell::Absent:
    return "#ffffff";
  }
  return "#ffffff";
}

void picture(std::ostream &out, const CommPicture &p) {
  size_t ranks = p.worldRanks.size();
  if (ranks == 0 || p.columns.empty())
    return;
  const int cellW = 14;
  const int cellH = static_cast<int>(std::clamp<size_t>(640 / ranks, 3, 16));
  const int left = 70, top = 34, gapW = 10;
  int width = left;
  for (const PictureColumn &c : p.columns)
    width += cellW + (c.gapBefore ? gapW : 0);
  int height = top + static_cast<int>(ranks) * cellH + 4;
  out << "<h3>" << escape(p.label) << " <small>" << ranks << " ranks, " << p.positions
      << " positions, " << p.columns.size() << " shown</small></h3>\n";
  out << "<div class=\"pic\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width + 10
      << "\" height=\"" << height << "\" shape-rendering=\"crispEdges\">\n";
  out << "<text x=\"2\" y=\"12\" class=\"axis\">seq &#8594;</text>\n";
  // Rank labels: every rank when they fit, else every k-th.
  size_t step = std::max<size_t>(1, (12 + cellH - 1) / cellH);
  for (size_t r = 0; r < ranks; r += step)
    out << "<text x=\"" << left - 6 << "\" y=\"" << top + static_cast<int>(r) * cellH + cellH
        << "\" class=\"rank\" text-anchor=\"end\">rank " << p.worldRanks[r] << "</text>\n";
  int x = left;
  for (const PictureColumn &c : p.columns) {
    if (c.gapBefore) {
      out << "<text x=\"" << x + 1 << "\" y=\"" << top + 12 << "\" class=\"axis\">&#8230;</text>\n";
      x += gapW;
    }
    out << "<g><title>seq " << c.seq << ": " << escape(c.call) << "</title>\n";
    if (c.divergent)
      out << "<rect class=\"mark\" x=\"" << x << "\" y=\"" << top - 10 << "\" width=\"" << cellW - 1
          << "\" height=\"7\" fill=\"#d62728\"/>\n";
    if (c.cells.empty()) {
      out << "<rect x=\"" << x << "\" y=\"" << top << "\" width=\"" << cellW - 1 << "\" height=\""
          << static_cast<int>(ranks) * cellH << "\" fill=\"" << cellColor(Cell::Matched)
          << "\"/>\n";
    } else {
      // Runs of equal cells are one rectangle: a 1024-rank column stays a few elements.
      for (size_t r = 0; r < ranks;) {
        size_t e = r;
        while (e + 1 < ranks && c.cells[e + 1] == c.cells[r])
          ++e;
        out << "<rect x=\"" << x << "\" y=\"" << top + static_cast<int>(r) * cellH << "\" width=\""
            << cellW - 1 << "\" height=\"" << static_cast<int>(e - r + 1) * cellH << "\" fill=\""
            << cellColor(c.cells[r]) << "\"><title>seq " << c.seq << ", "
            << (e == r ? "rank " + std::to_string(p.worldRanks[r])
                       : "ranks " + std::to_string(p.worldRanks[r]) + "-" +
                             std::to_string(p.worldRanks[e]))
            << ": " << cellName(c.cells[r]) << " &#8212; " << escape(c.call) << "</title></rect>\n";
        r = e + 1;
      }
    }
    out << "</g>\n";
    x += cellW;
  }
  out << "</svg></div>\n";
}

void legend(std::ostream &out) {
  out << "<p class=\"legend\">";
  for (Cell c : {Cell::Matched, Cell::Mismatch, Cell::Missing, Cell::Extra, Cell::Reordered,
                 Cell::Stuck, Cell::NotReached, Cell::Unknown}) {
    out << "<span><i style=\"background:" << cellColor(c) << "\"></i>" << cellName(c) << "</span>";
  }
  out << "</p>\n";
}

} // namespace

void writeHtml(std::ostream &out, const ReportInput &in) {
  FindingCounts counts = countFindings(in.result.findings);
  std::string inputs;
  for (const std::string &i : in.inputs)
    inputs += (inputs.empty() ? "" : " ") + i;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<title>collcheck: " << escape(inputs) << "</title>\n"
      << "<style>\n"
         "body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}\n"
         "h1{font-size:20px;margin:0 0 6px}h2{font-size:17px;margin:18px 0 6px}"
         "h3{font-size:15px;margin:12px 0 4px}small{color:#666;font-weight:normal}\n"
         ".summary{font-size:15px;padding:8px 10px;border-radius:4px;background:#f3f3f3}\n"
         ".summary.bad{background:#fdecea}.summary.ok{background:#e8f5e9}\n"
         ".pic{overflow-x:auto;border:1px solid #ddd;padding:4px;background:#fff}\n"
         ".rank,.axis{font:10px monospace;fill:#444}\n"
         ".legend span{margin-right:14px;white-space:nowrap}.legend i{display:inline-block;"
         "width:12px;height:12px;margin-right:4px;vertical-align:-2px;border:1px solid #999}\n"
         ".finding{border-left:5px solid #999;padding:4px 10px;margin:8px 0;background:#fafafa}\n"
         ".finding.error{border-color:#d62728}.finding.warning{border-color:#9c27b0}"
         ".finding.note{border-color:#1f77b4}\n"
         ".sev{font-weight:bold;text-transform:uppercase;font-size:12px}"
         ".error .sev{color:#d62728}.warning .sev{color:#9c27b0}.note .sev{color:#1f77b4}\n"
         "code{background:#eee;padding:0 3px;border-radius:3px}ul{margin:4px 0}\n"
         "</style></head><body>\n";
  out << "<h1>collcheck report</h1>\n<p>" << escape(inputs) << " &middot; job "
      << escape(in.traces.jobId.empty() ? "(no id)" : in.traces.jobId) << "</p>\n";
  out << "<p class=\"summary " << (counts.errors || counts.warnings ? "bad" : "ok") << "\">"
      << escape(summaryLine(in)) << "</p>\n";
  for (const std::string &note : in.siteNotes)
    out << "<p class=\"note\">" << escape(note) << "</p>\n";

  std::map<uint64_t, bool> divergent;
  for (const CommPicture &p : in.result.pictures)
    for (const PictureColumn &c : p.columns)
      divergent[p.commId] = divergent[p.commId] || c.divergent;
  bool anyPicture = false;
  for (const CommPicture &p : in.result.pictures) {
    if (!divergent[p.commId])
      continue;
    if (!anyPicture) {
      out << "<h2>Participation</h2>\n";
      legend(out);
      anyPicture = true;
    }
    picture(out, p);
  }

  out << "<h2>Findings</h2>\n";
  if (in.result.findings.empty())
    out << "<p>No findings: every collective matched on every rank.</p>\n";
  for (const Finding &f : in.result.findings) {
    std::string sev(rules::severityName(f.severity));
    out << "<div class=\"finding " << sev << "\"><div><span class=\"sev\">" << sev
        << "</span> <code>" << escape(f.ruleId) << "</code> " << escape(findingLocation(f))
        << (f.repeats > 1 ? " &middot; " + std::to_string(f.repeats) + " times" : "")
        << "</div>\n<p>" << escape(f.message) << "</p>\n";
    if (!f.groups.empty() || !f.notes.empty() || !f.callSites.empty()) {
      out << "<ul>";
      for (const RankGroup &g : f.groups)
        out << "<li><b>" << escape(g.role) << "</b>: " << escape(describeRanks(g.ranks))
            << (g.detail.empty() ? "" : ": " + escape(g.detail)) << "</li>";
      for (const CallSite &s : f.callSites)
        out << "<li><b>called at</b>: " << escape(describeRanks(s.ranks)) << ": <code>"
            << escape(describeCallSite(s)) << "</code>"
            << (s.resolved || s.hint.empty() ? "" : " <i>(" + escape(s.hint) + ")</i>") << "</li>";
      for (const std::string &n : f.notes)
        out << "<li>" << escape(n) << "</li>";
      out << "</ul>\n";
    }
    out << "</div>\n";
  }
  if (!in.traces.files.empty()) {
    out << "<h2>Inputs</h2>\n<p>" << in.traces.files.size() << " trace file(s), world size "
        << in.traces.worldSize << ", " << in.result.recordsRead << " records read.</p>\n";
  }
  out << "</body></html>\n";
}

} // namespace collcheck::analyzer
