// --sarif: SARIF 2.1.0. Rule ids are the catalogue's (stable); a finding's location is the source
// line where its first ranks made the call (repository-relative, against %SRCROOT%, when the
// source lies under the working directory, so that code-scanning tools place it on the line),
// else the trace file of the first rank it names; its logical location the communicator and
// sequence range. Every rank group's call site is a related location.
#include "analyzer/report/report.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

namespace collcheck::analyzer {

namespace {
const char *level(Severity s) {
  return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note";
}

// A percent-encoded URI path: the characters RFC 3986 allows in a path stay as they are.
std::string uriPath(const std::string &path) {
  static const char *hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~!$&'()*+,;=:@", c))
      out += static_cast<char>(c);
    else
      out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

// The artifact location of a source file: relative to %SRCROOT% (the working directory) where it
// lies under it, else an absolute file URI.
nlohmann::ordered_json sourceArtifact(const std::string &file, const std::filesystem::path &root) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(file).lexically_normal();
  if (p.is_absolute() && !root.empty()) {
    fs::path rel = p.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..")
      return {{"uri", uriPath(rel.generic_string())}, {"uriBaseId", "%SRCROOT%"}};
  }
  if (p.is_absolute())
    return {{"uri", "file://" + uriPath(p.generic_string())}};
  return {{"uri", uriPath(p.generic_string())}, {"uriBaseId", "%SRCROOT%"}};
}
} // namespace

void writeSarif(std::ostream &out, const ReportInput &in) {
  using nlohmann::ordered_json;
  ordered_json rulesJson = ordered_json::array();
  std::vector<std::string> ids;
  for (const rules::Rule &r : rules::catalogue()) {
    if (r.checker == "lint")
      continue;
    ids.push_back(r.id);
    rulesJson.push_back({{"id", r.id},
                         {"name", r.title},
                         {"shortDescription", {{"text", r.summary}}},
                         {"fullDescription", {{"text", r.summary}}},
                         {"help", {{"text", r.summary}, {"markdown", r.page}}},
                         {"defaultConfiguration", {{"level", level(r.severity)}}}});
  }
  ordered_json artifacts = ordered_json::array();
  for (const TraceFile &f : in.traces.files)
    artifacts.push_back({{"location", {{"uri", f.path}}}});
  std::error_code ec;
  std::filesystem::path root = std::filesystem::current_path(ec);
  ordered_json results = ordered_json::array();
  for (const Finding &f : in.result.findings) {
    ordered_json result;
    result["ruleId"] = f.ruleId;
    auto it = std::find(ids.begin(), ids.end(), f.ruleId);
    if (it != ids.end())
      result["ruleIndex"] = it - ids.begin();
    result["level"] = level(f.severity);
    std::string text = f.message;
    for (const std::string &note : f.notes)
      text += "\n" + note;
    result["message"] = {{"text", text}};
    std::string uri;
    if (!f.files.empty())
      uri = f.files.front();
    for (const RankGroup &g : f.groups) {
      if (!uri.empty() || g.ranks.empty())
        break;
      int file = in.traces.fileOfWorldRank(g.ranks.front());
      if (file >= 0)
        uri = in.traces.files[static_cast<size_t>(file)].path;
    }
    ordered_json location;
    ordered_json related = ordered_json::array();
    const CallSite *first = nullptr;
    for (const CallSite &s : f.callSites) {
      if (!s.resolved)
        continue;
      first = first ? first : &s;
      related.push_back({{"id", related.size()},
                         {"physicalLocation",
                          {{"artifactLocation", sourceArtifact(s.file, root)},
                           {"region", {{"startLine", s.line}}}}},
                         {"message",
                          {{"text", describeRanks(s.ranks) + " called here" +
                                        (s.function.empty() ? "" : " (in " + s.function + ")")}}}});
      if (s.from && s.from->resolved)
        related.push_back(
            {{"id", related.size()},
             {"physicalLocation",
              {{"artifactLocation", sourceArtifact(s.from->file, root)},
               {"region", {{"startLine", s.from->line}}}}},
             {"message",
              {{"text", describeRanks(s.ranks) + " called " +
                            (s.function.empty() ? std::string("it") : s.function) + " here" +
                            (s.from->function.empty() ? "" : " (in " + s.from->function + ")")}}}});
    }
    if (first)
      location["physicalLocation"] = {{"artifactLocation", sourceArtifact(first->file, root)},
                                      {"region", {{"startLine", first->line}}}};
    else if (!uri.empty())
      location["physicalLocation"] = {{"artifactLocation", {{"uri", uri}}}};
    location["logicalLocations"] = ordered_json::array(
        {{{"name", findingLocation(f)},
          {"fullyQualifiedName",
           f.commId ? hexCommId(f.commId) + "/" + findingLocation(f) : findingLocation(f)},
          {"kind", f.commId ? "communicator" : "job"}}});
    result["locations"] = ordered_json::array({location});
    if (!related.empty())
      result["relatedLocations"] = related;
    // Same rule, communicator and message: the same result across runs of a job.
    result["partialFingerprints"] = {
        {"collcheck/v1", f.ruleId + ":" + f.commLabel + ":" + f.message}};
    ordered_json properties = findingJson(f);
    properties.erase("message");
    result["properties"] = properties;
    results.push_back(result);
  }
  ordered_json run;
  run["tool"] = {{"driver",
                  {{"name", "collcheck"},
                   {"version", COLLCHECK_VERSION},
                   {"semanticVersion", COLLCHECK_VERSION},
                   {"rules", rulesJson}}}};
  run["artifacts"] = artifacts;
  if (!root.empty())
    run["originalUriBaseIds"] = {
        {"%SRCROOT%", {{"uri", "file://" + uriPath(root.generic_string() + "/")}}}};
  run["results"] = results;
  run["columnKind"] = "unicodeCodePoints";
  ordered_json sarif;
  sarif["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  sarif["version"] = "2.1.0";
  sarif["runs"] = ordered_json::array({run});
  out << sarif.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

} // namespace collcheck::analyzer
