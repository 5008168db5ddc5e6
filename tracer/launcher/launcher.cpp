// `collcheck run -o DIR -- COMMAND...`: runs COMMAND (mpirun, srun, torchrun or a plain program)
// with the preload library and the output folder in its environment, so every process it starts
// that makes collective calls writes one trace file into DIR. The command is executed directly,
// never through a shell; its exit status is returned.
#include "commands.h"
#include "format/reader.h"

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

namespace collcheck::cli {
namespace {

constexpr const char *kUsage =
    "usage: collcheck run -o DIR [--preload LIB] -- COMMAND [ARGS...]\n"
    "  Runs COMMAND with the collcheck tracer preloaded; every process that makes MPI or NCCL\n"
    "  collective calls writes DIR/<host>-<pid>.cctrace. Works with mpirun, srun, torchrun and\n"
    "  plain commands. LIB (or $COLLCHECK_PRELOAD) may be a ':'-separated list, e.g. a\n"
    "  sanitizer runtime before the library. The same library can be used by hand:\n"
    "    LD_PRELOAD=<lib>/libcollcheck_preload.so COLLCHECK_OUTPUT=DIR <command>\n";

std::string executableDir() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0)
    return ".";
  path[n] = '\0';
  return std::filesystem::path(path).parent_path().string();
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

int runMain(Args args) {
  std::string output, preloadPath;
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
  // Open MPI forwards these to processes it starts on other nodes; srun and torchrun pass the
  // whole environment anyway.
  prependList("OMPI_MCA_mca_base_env_list", "LD_PRELOAD;COLLCHECK_OUTPUT;COLLCHECK_JOB_ID", ';');

  std::vector<char *> argv;
  for (size_t k = i; k < args.size(); ++k)
    argv.push_back(const_cast<char *>(args[k]));
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
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  Recorded recorded = summarize(absolute);
  std::fprintf(stderr, "collcheck: %zu trace file%s in %s, %llu records", recorded.files,
               recorded.files == 1 ? "" : "s", absolute.c_str(),
               static_cast<unsigned long long>(recorded.records));
  if (recorded.unreadable)
    std::fprintf(stderr, ", %zu unreadable", recorded.unreadable);
  std::fputc('\n', stderr);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 1;
}

} // namespace collcheck::cli
