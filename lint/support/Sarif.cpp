#include "support/Sarif.h"

#include "catalogue.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

namespace collcheck::lint {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char *kSchema = "https://json.schemastore.org/sarif-2.1.0.json";
constexpr const char *kRootBase = "%SRCROOT%";

std::string fileUri(const std::string &absolutePath) {
  std::string uri = "file://";
  for (char c : absolutePath) {
    if (c == ' ')
      uri += "%20";
    else if (c == '%')
      uri += "%25";
    else
      uri += c;
  }
  return uri;
}

Json artifactLocation(const std::string &root, const std::string &file) {
  std::string relative = relativeTo(root, file);
  if (relative.empty())
    return Json{{"uri", fileUri(file)}};
  return Json{{"uri", relative}, {"uriBaseId", kRootBase}};
}

Json region(const ReportedLocation &where) {
  Json r{{"startLine", std::max(where.line, 1u)}};
  if (where.column > 0)
    r["startColumn"] = where.column;
  if (where.endLine > 0)
    r["endLine"] = where.endLine;
  if (where.endColumn > 0)
    r["endColumn"] = where.endColumn;
  return r;
}

Json physicalLocation(const std::string &root, const ReportedLocation &where) {
  return Json{{"artifactLocation", artifactLocation(root, where.file)}, {"region", region(where)}};
}

} // namespace

std::string relativeTo(const std::string &root, const std::string &path) {
  if (root.empty() || path.empty())
    return {};
  std::filesystem::path rootPath = std::filesystem::path(root).lexically_normal();
  std::filesystem::path filePath = std::filesystem::path(path).lexically_normal();
  std::filesystem::path relative = filePath.lexically_relative(rootPath);
  if (relative.empty() || *relative.begin() == "..")
    return {};
  return relative.generic_string();
}

std::string writeSarif(const std::vector<ReportedFinding> &findings,
                       const std::vector<ToolNotification> &notifications,
                       const SarifOptions &options) {
  Json rules = Json::array();
  std::map<std::string, size_t> ruleIndex;
  for (const rules::Rule &rule : rules::catalogue()) {
    if (rule.checker != "lint" && rule.checker != "both")
      continue;
    ruleIndex[rule.id] = rules.size();
    rules.push_back(
        Json{{"id", rule.id},
             {"name", rule.title},
             {"shortDescription", {{"text", rule.summary}}},
             {"fullDescription", {{"text", rule.title}}},
             {"help", {{"text", rule.page}, {"markdown", rule.page}}},
             {"defaultConfiguration", {{"level", std::string(rules::severityName(rule.severity))}}},
             {"properties", {{"tags", Json::array({"correctness", "distributed-training"})}}}});
  }

  Json results = Json::array();
  for (const ReportedFinding &finding : findings) {
    Json result{{"ruleId", finding.ruleId}};
    if (auto it = ruleIndex.find(finding.ruleId); it != ruleIndex.end())
      result["ruleIndex"] = it->second;
    result["level"] = finding.level;
    result["message"] = {{"text", finding.message}};
    result["locations"] =
        Json::array({{{"physicalLocation", physicalLocation(options.sourceRoot, finding.where)}}});
    if (!finding.notes.empty()) {
      Json related = Json::array();
      Json flow = Json::array();
      int id = 1;
      for (const ReportedNote &note : finding.notes) {
        Json location{{"id", id++},
                      {"physicalLocation", physicalLocation(options.sourceRoot, note.where)},
                      {"message", {{"text", note.message}}}};
        flow.push_back({{"location", location}});
        related.push_back(std::move(location));
      }
      result["relatedLocations"] = std::move(related);
      result["codeFlows"] = Json::array({{{"threadFlows", Json::array({{{"locations", flow}}})}}});
    }
    if (!finding.fixes.empty()) {
      Json changes = Json::array();
      for (const ReportedFix &fix : finding.fixes)
        changes.push_back(
            {{"artifactLocation", artifactLocation(options.sourceRoot, fix.range.file)},
             {"replacements", Json::array({{{"deletedRegion", region(fix.range)},
                                            {"insertedContent", {{"text", fix.replacement}}}}})}});
      result["fixes"] = Json::array({{{"description", {{"text", "Apply the suggested change"}}},
                                      {"artifactChanges", changes}}});
    }
    results.push_back(std::move(result));
  }

  Json toolNotifications = Json::array();
  for (const ToolNotification &n : notifications) {
    Json item{{"level", n.level}, {"message", {{"text", n.message}}}};
    if (!n.where.file.empty())
      item["locations"] =
          Json::array({{{"physicalLocation", physicalLocation(options.sourceRoot, n.where)}}});
    toolNotifications.push_back(std::move(item));
  }

  std::string rootUri = fileUri(options.sourceRoot);
  if (!rootUri.ends_with("/"))
    rootUri += "/";
  Json sarif{
      {"$schema", kSchema},
      {"version", "2.1.0"},
      {"runs",
       Json::array(
           {{{"tool",
              {{"driver",
                {{"name", "collcheck-lint"}, {"version", options.toolVersion}, {"rules", rules}}}}},
             {"originalUriBaseIds", {{kRootBase, {{"uri", rootUri}}}}},
             {"invocations", Json::array({{{"executionSuccessful", options.executionSuccessful},
                                           {"toolExecutionNotifications", toolNotifications}}})},
             {"columnKind", "utf16CodeUnits"},
             {"results", results}}})}};
  // Messages quote source text, which need not be valid UTF-8: replace what is not.
  return sarif.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace collcheck::lint
