#include "support/Sarif.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace collcheck::lint {
namespace {

TEST(Sarif, RequiredStructure) {
  ReportedFinding finding;
  finding.ruleId = "uncompensated-mean";
  finding.level = "warning";
  finding.message = "local mean averaged across ranks";
  finding.where = {"/repo/src/train.cpp", 12, 3, 12, 40};
  finding.notes.push_back({{"/repo/src/train.cpp", 10, 16}, "local mean formed here"});
  finding.fixes.push_back({{"/repo/src/train.cpp", 12, 30, 12, 37}, "ncclSum"});
  ReportedFinding outside = finding;
  outside.where.file = "/elsewhere/x.cpp";
  ToolNotification note{"note", "the code does not compile here", {"/repo/src/train.cpp", 3, 1}};
  SarifOptions options{"/repo", "9.9", true};
  auto sarif = nlohmann::json::parse(writeSarif({finding, outside}, {note}, options));

  EXPECT_EQ(sarif["version"], "2.1.0");
  EXPECT_NE(sarif["$schema"].get<std::string>().find("sarif-2.1.0"), std::string::npos);
  const auto &run = sarif["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "collcheck-lint");
  EXPECT_EQ(run["tool"]["driver"]["version"], "9.9");
  bool found = false;
  for (const auto &rule : run["tool"]["driver"]["rules"])
    found = found || rule["id"] == "uncompensated-mean";
  EXPECT_TRUE(found);
  EXPECT_EQ(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///repo/");

  const auto &result = run["results"][0];
  EXPECT_EQ(result["ruleId"], "uncompensated-mean");
  EXPECT_EQ(run["tool"]["driver"]["rules"][result["ruleIndex"].get<int>()]["id"],
            "uncompensated-mean");
  EXPECT_EQ(result["level"], "warning");
  const auto &location = result["locations"][0]["physicalLocation"];
  EXPECT_EQ(location["artifactLocation"]["uri"], "src/train.cpp");
  EXPECT_EQ(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ(location["region"]["startLine"], 12);
  EXPECT_EQ(location["region"]["startColumn"], 3);
  EXPECT_EQ(result["relatedLocations"][0]["message"]["text"], "local mean formed here");
  EXPECT_EQ(result["codeFlows"][0]["threadFlows"][0]["locations"].size(), 1u);
  EXPECT_EQ(result["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"],
            "ncclSum");

  // A file outside the root keeps an absolute URI rather than a wrong relative one.
  EXPECT_EQ(run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "file:///elsewhere/x.cpp");
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"][0]["level"], "note");
}

TEST(RelativeTo, InsideAndOutside) {
  EXPECT_EQ(relativeTo("/repo", "/repo/a/b.cpp"), "a/b.cpp");
  EXPECT_EQ(relativeTo("/repo/", "/repo/./a/../b.cpp"), "b.cpp");
  EXPECT_EQ(relativeTo("/repo", "/repository/b.cpp"), "");
  EXPECT_EQ(relativeTo("/repo", "/other/b.cpp"), "");
}

} // namespace
} // namespace collcheck::lint
