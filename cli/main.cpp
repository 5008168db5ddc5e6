// collcheck: one binary, one subcommand per stage (run, dump, analyze, rules, explain).
#include "cli/commands.h"
#ifdef COLLCHECK_HAVE_LAUNCHER
#include "tracer/launcher/launcher.h"
#endif

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>

namespace {

void usage(std::FILE *out) {
  std::fprintf(out,
               "usage: collcheck <command> [arguments]\n"
               "\n"
               "commands:\n"
               "  run -o DIR -- CMD...   run a job with the tracer preloaded, traces in DIR\n"
               "  analyze DIR...         check the traces of one job (collcheck analyze --help)\n"
               "  dump FILE...           print trace files as JSON Lines\n"
               "  rules                  list the rule catalogue\n"
               "  explain RULE           print one rule's page\n"
               "\n"
               "  --help, --version\n"
               "\n"
               "exit status: 0 clean, 1 findings at or above --fail-on, 2 unusable input or "
               "usage\n");
}

// A report that could not be written (a full disk, a closed pipe) must not pass for a clean run:
// what stdout still buffers is written here, and any write to it that failed makes the status 2.
int finishOutput(int status) {
  std::cout.flush();
  errno = 0;
  bool flushFailed = std::fflush(stdout) != 0;
  int error = errno;
  if (!flushFailed && !std::ferror(stdout) && std::cout)
    return status;
  std::fprintf(stderr, "collcheck: cannot write the output to stdout%s%s\n",
               flushFailed && error ? ": " : "", flushFailed && error ? std::strerror(error) : "");
  return 2;
}

int dispatch(std::string_view command, collcheck::cli::Args rest) {
  using namespace collcheck::cli;
  if (command == "--help" || command == "-h" || command == "help") {
    usage(stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("collcheck %s (trace format 1)\n", COLLCHECK_VERSION);
    return 0;
  }
  if (command == "run") {
#ifdef COLLCHECK_HAVE_LAUNCHER
    return collcheck::launcher::runMain(rest);
#else
    std::fprintf(stderr, "collcheck run: not built (the launcher is part of the tracer)\n");
    return 2;
#endif
  }
  if (command == "dump")
    return dumpMain(rest);
  if (command == "analyze")
    return analyzeMain(rest);
  if (command == "rules")
    return rulesMain(rest);
  if (command == "explain")
    return explainMain(rest);
  std::fprintf(stderr, "collcheck: unknown command '%.*s'\n\n", static_cast<int>(command.size()),
               command.data());
  usage(stderr);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  return finishOutput(
      dispatch(argv[1], collcheck::cli::Args(argv + 2, static_cast<size_t>(argc - 2))));
}
