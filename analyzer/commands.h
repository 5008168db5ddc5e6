// Subcommands of the `collcheck` tool. Each takes the arguments after its name and returns the
// process exit status (0 clean, 1 findings, 2 unusable input or usage).
#pragma once

#include <span>
#include <string_view>

namespace collcheck::cli {

using Args = std::span<const char *const>;

int runMain(Args args);     // tracer/launcher: collcheck run -o DIR -- CMD...
int dumpMain(Args args);    // collcheck dump FILE...: records as JSON Lines
int analyzeMain(Args args); // collcheck analyze DIR
int rulesMain(Args args);   // collcheck rules
int explainMain(Args args); // collcheck explain RULE

} // namespace collcheck::cli
