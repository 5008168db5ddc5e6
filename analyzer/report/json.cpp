// --json: the whole result as one JSON document; schema in docs/report-schema.json.
#include "analyzer/report/report.h"

namespace collcheck::analyzer {

void writeJson(std::ostream &out, const ReportInput &in) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema"] = "collcheck-report";
  j["version"] = 1;
  j["tool"] = {{"name", "collcheck"}, {"version", COLLCHECK_VERSION}};
  j["inputs"] = in.inputs;
  ordered_json files = ordered_json::array();
  for (size_t i = 0; i < in.traces.files.size(); ++i) {
    const TraceFile &f = in.traces.files[i];
    uint64_t records = i < in.result.recordsPerFile.size() ? in.result.recordsPerFile[i] : 0;
    files.push_back({{"path", f.path},
                     {"world_rank", f.worldRank},
                     {"records", records},
                     {"finished", f.finished}});
  }
  j["job"] = {{"id", in.traces.jobId},
              {"world_size", in.traces.worldSize},
              {"files", files},
              {"missing_ranks", in.traces.missingRanks}};
  ordered_json problems = ordered_json::array();
  std::vector<InputProblem> all = in.traces.problems;
  all.insert(all.end(), in.result.problems.begin(), in.result.problems.end());
  for (const InputProblem &p : all)
    problems.push_back({{"file", p.file.empty() ? ordered_json(nullptr) : ordered_json(p.file)},
                        {"reason", p.reason},
                        {"unusable", p.unusable}});
  j["problems"] = problems;
  ordered_json comms = ordered_json::array();
  for (const CommSummary &c : in.result.communicators) {
    ordered_json members = ordered_json::array();
    for (size_t r = 0; r < c.comm.worldRankOf.size(); ++r)
      members.push_back(c.comm.worldRankOf[r] >= 0 ? ordered_json(c.comm.worldRankOf[r])
                                                   : ordered_json(nullptr));
    comms.push_back({{"id", hexCommId(c.comm.id)},
                     {"label", c.comm.label},
                     {"size", c.comm.size},
                     {"origin", format::commOriginName(c.comm.origin)},
                     {"parent", c.comm.parentId ? ordered_json(hexCommId(c.comm.parentId))
                                                : ordered_json(nullptr)},
                     {"nccl", c.comm.nccl},
                     {"members", members},
                     {"positions", c.positions},
                     {"point_to_point", c.pointToPoint},
                     {"calls_issued", c.callsIssued}});
  }
  j["communicators"] = comms;
  FindingCounts counts = countFindings(in.result.findings);
  j["summary"] = {{"ranks", in.traces.files.size()},
                  {"communicators", in.result.communicators.size()},
                  {"collectives_checked", in.result.positions},
                  {"records_read", in.result.recordsRead},
                  {"findings", in.result.findings.size()},
                  {"errors", counts.errors},
                  {"warnings", counts.warnings},
                  {"notes", counts.notes},
                  {"fail_on", in.failNever ? "never" : rules::severityName(in.failOn)},
                  {"text", summaryLine(in)},
                  {"call_site_notes", in.siteNotes}};
  ordered_json findings = ordered_json::array();
  for (const Finding &f : in.result.findings)
    findings.push_back(findingJson(f));
  j["findings"] = findings;
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

} // namespace collcheck::analyzer
