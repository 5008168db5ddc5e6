// `collcheck run -o DIR -- COMMAND...`: the tracer's entry point into the `collcheck` tool. The
// command line (cli/main.cpp) calls it; the launcher knows nothing of the other subcommands.
#pragma once

#include <span>

namespace collcheck::launcher {

// Takes the arguments after `run` and returns the process exit status: the command's own (128 +
// the signal that ended it), or 2 for a usage error.
int runMain(std::span<const char *const> args);

} // namespace collcheck::launcher
