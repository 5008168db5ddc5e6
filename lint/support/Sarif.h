// SARIF 2.1.0 output for code-scanning upload: one run, the lint rules of the catalogue as
// tool.driver.rules, repository-relative artifact URIs under the %SRCROOT% base.
#pragma once

#include "support/Report.h"

#include <string>
#include <vector>

namespace collcheck::lint {

struct SarifOptions {
  std::string sourceRoot; // absolute; artifact URIs are relative to it
  std::string toolVersion;
  bool executionSuccessful = true;
};

std::string writeSarif(const std::vector<ReportedFinding> &findings,
                       const std::vector<ToolNotification> &notifications,
                       const SarifOptions &options);

} // namespace collcheck::lint
