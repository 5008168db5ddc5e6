// `collcheck run -o DIR -- COMMAND...`: runs COMMAND (mpirun, srun, torchrun or a plain program)
// with the preload library and the output folder in its environment, so every process it starts
// that makes collective calls writes one trace file into DIR. The command is executed directly,
// never through a shell; its exit status is returned.
#include "tracer/launcher/launcher.h"
#include "format/reader.h"
#include "tracer/launcher/hang_watch.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <filesystem>
#include <random>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace collcheck::launcher {
namespace {

constexpr const char *kUsage =
    "usage: collcheck run -o DIR [--preload LIB] [--hang-timeout S [--on-hang kill]\n"
    "                     [--json F] [--html F] [--sarif F]] -- COMMAND [ARGS...]\n"
    "  Runs COMMAND with the collcheck tracer preloaded; every process that makes MPI or NCCL\n"
    "  collective calls writes DIR/<host>-<pid>.cctrace. Works with mpirun, srun, torchrun and\n"
    "  plain commands. DIR must hold no traces yet. LIB (or $COLLCHECK_PRELOAD) may be a\n"
    "  ':'-separated list, e.g. a sanitizer runtime before the library. The same library can\n"
    "  be used by hand:\n"
    "    LD_PRELOAD=<lib>/libcollcheck_preload.so COLLCHECK_OUTPUT=DIR <command>\n"
    "  --hang-timeout S: when some process has been inside a collective and no process has\n"
    "  recorded anything for S seconds, print the hang diagnosis (collcheck analyze DIR, with\n"
    "  --json/--html/--sarif F written too) while the job is stuck; the job is left running\n"
    "  unless --on-hang kill (SIGTERM, then SIGKILL after 10 s).\n";

// The variables every traced process needs, wherever its launcher starts it.
constexpr const char *kForwarded[] = {"LD_PRELOAD", "COLLCHECK_OUTPUT", "COLLCHECK_JOB_ID"};

std::string executableDir() {
  std::string self = executablePath();
  return self.empty() ? "." : std::filesystem::path(self).parent_path().string();
}

// The preload library: --preload, $COLLCHECK_PRELOAD, or next to the tool (build and install
// layouts: ../lib).
std::string findPreload(const std::string &explicitPath) {
  if (!explicitPath.empty())
    return explicitPath;
  if (const char *env = getenv("COLLCHECK_PRELOAD"); env && *env)
    return env;
  std::string dir = executableDir();
  for (const char *candidate : {"/../lib/libcollcheck_preload.so", "/libcollcheck_preload.so",
                                "/../lib/collcheck/libcollcheck_preload.so"}) {
    std::string path = dir + candidate;
    if (access(path.c_str(), R_OK) == 0)
      return std::filesystem::weakly_canonical(path).string();
  }
  return {};
}

std::string randomJobId() {
  std::random_device device;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", device(), device());
  return text;
}

void prependList(const char *name, const std::string &value, char separator) {
  const char *old = getenv(name);
  std::string combined = value;
  if (old && *old)
    combined += separator + std::string(old);
  setenv(name, combined.c_str(), 1);
}

// Where COMMAND is found on PATH, symlinks resolved (Debian's mpirun is an alternatives link to
// orterun or mpiexec.hydra).
std::filesystem::path resolveCommand(const std::string &command) {
  std::error_code ec;
  if (command.find('/') != std::string::npos)
    return std::filesystem::weakly_canonical(command, ec);
  const char *path = getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = std::min(dirs.find(':', start), dirs.size());
    std::filesystem::path candidate =
        std::filesystem::path(std::string(dirs.substr(start, end - start))) / command;
    if (access(candidate.c_str(), X_OK) == 0)
      return std::filesystem::weakly_canonical(candidate, ec);
    start = end + 1;
  }
  return command;
}

enum class Launcher { OpenMpi, Hydra, Slurm, Torchrun, Other };

Launcher identify(const std::string &command) {
  std::filesystem::path real = resolveCommand(command);
  std::string name = real.filename().string();
  std::error_code ec;
  auto beside = [&](const char *tool) {
    return std::filesystem::exists(real.parent_path() / tool, ec);
  };
  if (name == "orterun" || name == "prterun" || name.ends_with(".openmpi"))
    return Launcher::OpenMpi;
  if (name == "mpiexec.hydra" || name.ends_with(".mpich") || name == "hydra_pmi_proxy")
    return Launcher::Hydra;
  if (name == "mpirun" || name == "mpiexec") // an installation from source: its siblings tell
    return beside("ompi_info")                                   ? Launcher::OpenMpi
           : beside("mpichversion") || beside("hydra_pmi_proxy") ? Launcher::Hydra
                                                                 : Launcher::Other;
  if (name == "srun")
    return Launcher::Slurm;
  if (name == "torchrun")
    return Launcher::Torchrun;
  return Launcher::Other;
}

// Makes the launch line carry the tracer's variables to every process it starts, on every node,
// the way the user's own line would: Open MPI forwards only what -x names (and refuses -x beside
// the mca_base_env_list parameter, so the line is the one place to say it); srun forwards the
// whole environment unless --export narrows it. Hydra and torchrun pass the environment on.
// Returns false for a command whose launching collcheck does not know.
bool forwardTracerVariables(std::vector<std::string> &command) {
  switch (identify(command[0])) {
  case Launcher::OpenMpi: {
    std::vector<std::string> options;
    for (const char *name : kForwarded) {
      options.push_back("-x");
      options.push_back(name);
    }
    command.insert(command.begin() + 1, options.begin(), options.end());
    return true;
  }
  case Launcher::Slurm:
    // srun's options cannot be told from the program's without its whole grammar; a program's
    // own --export argument is rare enough to accept.
    for (size_t i = 1; i < command.size(); ++i) {
      std::string &arg = command[i];
      std::string *value = arg.starts_with("--export=")                  ? &arg
                           : arg == "--export" && i + 1 < command.size() ? &command[++i]
                                                                         : nullptr;
      if (!value)
        continue;
      std::string_view list = *value;
      if (list.starts_with("--export="))
        list.remove_prefix(9);
      if (list.starts_with("ALL"))
        continue;
      std::string names;
      for (const char *name : kForwarded)
        names += std::string(names.empty() ? "" : ",") + name;
      // NONE narrowed to the tracer's variables; a list gets them added.
      std::string prefix = value == &arg && arg.starts_with("--export=") ? "--export=" : "";
      *value = prefix + (list == "NONE" ? names : std::string(list) + "," + names);
    }
    return true;
  case Launcher::Hydra:
  case Launcher::Torchrun:
    return true;
  case Launcher::Other:
    return false;
  }
  return false;
}

pid_t child = -1;
void forward(int signal) {
  if (child > 0)
    kill(child, signal);
}

struct Recorded {
  size_t files = 0;
  uint64_t records = 0;
  size_t unreadable = 0;
};

Recorded summarize(const std::string &dir) {
  Recorded total;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != format::kFileSuffix)
      continue;
    std::string error;
    auto reader = format::Reader::open(entry.path().string(), error);
    ++total.files;
    if (!reader) {
      ++total.unreadable;
      continue;
    }
    total.records += reader->summary().published;
  }
  return total;
}

} // namespace

int runMain(std::span<const char *const> args) {
  std::string output, preloadPath;
  HangWatch watch;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if ((arg == "-o" || arg == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (arg.starts_with("--output=")) {
      output = std::string(arg.substr(9));
    } else if (arg == "--preload" && i + 1 < args.size()) {
      preloadPath = args[++i];
    } else if (arg == "--hang-timeout" && i + 1 < args.size()) {
      char *end = nullptr;
      watch.timeoutSeconds = std::strtod(args[++i], &end);
      if (*end || !(watch.timeoutSeconds > 0)) {
        std::fprintf(stderr, "collcheck run: --hang-timeout takes seconds > 0, not %s\n", args[i]);
        return 2;
      }
    } else if (arg == "--on-hang" && i + 1 < args.size()) {
      std::string_view action = args[++i];
      if (action != "kill" && action != "report") {
        std::fprintf(stderr, "collcheck run: --on-hang takes kill or report, not %s\n", args[i]);
        return 2;
      }
      watch.kill = action == "kill";
    } else if ((arg == "--json" || arg == "--html" || arg == "--sarif") && i + 1 < args.size()) {
      watch.analyzeOptions.push_back(std::string(arg));
      watch.analyzeOptions.push_back(
          std::filesystem::absolute(args[++i]).string()); // the analyzer runs elsewhere later
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!arg.starts_with("-")) {
      break; // the command starts here (a "--" is recommended but not required)
    } else {
      std::fprintf(stderr, "collcheck run: unknown option %s\n%s", args[i], kUsage);
      return 2;
    }
  }
  if (output.empty() || i >= args.size()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (watch.timeoutSeconds <= 0 && (watch.kill || !watch.analyzeOptions.empty())) {
    std::fprintf(stderr, "collcheck run: --on-hang, --json, --html and --sarif go with "
                         "--hang-timeout\n");
    return 2;
  }
  // One library, or a colon-separated list that goes into LD_PRELOAD as it is (a sanitizer
  // runtime before an instrumented preload library): each entry must be readable.
  std::string preload = findPreload(preloadPath);
  bool readable = !preload.empty();
  for (size_t start = 0; readable && start <= preload.size();) {
    size_t end = std::min(preload.find(':', start), preload.size());
    readable = end > start && access(preload.substr(start, end - start).c_str(), R_OK) == 0;
    start = end + 1;
  }
  if (!readable) {
    std::fprintf(stderr,
                 "collcheck run: cannot find libcollcheck_preload.so (set COLLCHECK_PRELOAD or "
                 "--preload)\n");
    return 2;
  }
  std::error_code ec;
  if (Recorded earlier = summarize(output); earlier.files) {
    // Two jobs in one folder cannot be analyzed together; keeping the first is the user's call.
    std::fprintf(stderr,
                 "collcheck run: %s already holds %zu trace file%s of an earlier run; give a new "
                 "folder or remove them\n",
                 output.c_str(), earlier.files, earlier.files == 1 ? "" : "s");
    return 2;
  }
  std::filesystem::create_directories(output, ec);
  if (ec) {
    std::fprintf(stderr, "collcheck run: cannot create %s: %s\n", output.c_str(),
                 ec.message().c_str());
    return 2;
  }
  chmod(output.c_str(), 0700);
  std::string absolute = std::filesystem::absolute(output).string();

  setenv("COLLCHECK_OUTPUT", absolute.c_str(), 1);
  if (!getenv("COLLCHECK_JOB_ID"))
    setenv("COLLCHECK_JOB_ID", randomJobId().c_str(), 1);
  prependList("LD_PRELOAD", preload, ':');

  std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  bool knownLauncher = forwardTracerVariables(command);
  std::vector<char *> argv;
  for (std::string &arg : command)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  child = fork();
  if (child < 0) {
    std::fprintf(stderr, "collcheck run: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "collcheck run: cannot execute %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  // The launcher itself is not traced: only the child's environment carries LD_PRELOAD.
  unsetenv("LD_PRELOAD");
  struct sigaction action {};
  action.sa_handler = forward;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  int status = watchJob(child, absolute, watch);
  Recorded recorded = summarize(absolute);
  std::fprintf(stderr, "collcheck: %zu trace file%s in %s, %llu records", recorded.files,
               recorded.files == 1 ? "" : "s", absolute.c_str(),
               static_cast<unsigned long long>(recorded.records));
  if (recorded.unreadable)
    std::fprintf(stderr, ", %zu unreadable", recorded.unreadable);
  std::fputc('\n', stderr);
  if (recorded.files == 0 && !knownLauncher)
    std::fprintf(stderr,
                 "collcheck: no process of %s made a traced call; if it starts processes on "
                 "other nodes, make it forward LD_PRELOAD, COLLCHECK_OUTPUT and COLLCHECK_JOB_ID "
                 "(Open MPI: -x NAME; MPICH: -genvlist; Slurm: --export=ALL)\n",
                 command[0].c_str());
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 1;
}

} // namespace collcheck::launcher
