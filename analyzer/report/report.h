// Reporters: each turns one analysis result into one output format. They read the finding model
// and the job summary; none of them knows how findings were made.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/model/analysis_result.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace collcheck::analyzer {

struct ReportInput {
  const TraceSet &traces;
  const AnalysisResult &result;
  std::vector<std::string> inputs; // what was analyzed, as named on the command line
  Severity failOn = Severity::Warning;
  bool failNever = false;
  std::vector<std::string> siteNotes =
      {}; // what limits the call sites shown (old traces, no libdw)
};

struct FindingCounts {
  uint64_t errors = 0, warnings = 0, notes = 0;
  uint64_t total() const { return errors + warnings + notes; }
};
FindingCounts countFindings(const std::vector<Finding> &findings);
// "world seq 7 (window 3)", "world seq 7-70000", or the file / "job" for findings without one.
std::string findingLocation(const Finding &f);
// "4 ranks, 2 communicators, 1234 collectives checked: 2 errors, 1 warning"
std::string summaryLine(const ReportInput &in);

void writeText(std::ostream &out, const ReportInput &in, bool color);
void writeJson(std::ostream &out, const ReportInput &in);
void writeSarif(std::ostream &out, const ReportInput &in);
void writeHtml(std::ostream &out, const ReportInput &in);
// Chrome trace JSON (opens in the Perfetto UI): one track per rank and communicator, one slice
// per call, the findings as instant events. Reads the traces again, one file at a time.
bool writePerfetto(const std::string &path, const ReportInput &in, std::string &error);

nlohmann::ordered_json findingJson(const Finding &f);

} // namespace collcheck::analyzer
