// Subcommands of the `collcheck` tool that cli/ implements. Each takes the arguments after its
// name and returns the process exit status (0 clean, 1 findings, 2 unusable input or usage).
// `collcheck run` is the tracer's (tracer/launcher/launcher.h).
#pragma once

#include <span>
#include <string_view>

namespace collcheck::cli {

using Args = std::span<const char *const>;

int dumpMain(Args args);    // collcheck dump FILE...: records as JSON Lines
int analyzeMain(Args args); // collcheck analyze DIR
int rulesMain(Args args);   // collcheck rules
int explainMain(Args args); // collcheck explain RULE

} // namespace collcheck::cli
