#include "tracer/launcher/hang_watch.h"

#include "format/reader.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace collcheck::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// What one file shows of its process: how far it got, and whether it waits inside a call.
struct FileState {
  uint64_t published = 0;
  bool lastReturned = true; // its last call returned (or it made none)
  bool inside = false;      // its last call is a blocking collective that has not returned
  bool operator==(const FileState &) const = default;
};

FileState readState(const std::string &path) {
  FileState state;
  std::string error;
  auto reader = format::Reader::open(path, error);
  if (!reader)
    return state; // still being created, or damaged: the analysis will say which
  state.published = reader->summary().published;
  if (reader->header().finished)
    return state;
  for (uint64_t i = reader->slotCount(); i-- > 0;) {
    if (!reader->usable(i))
      continue;
    const format::Record &r = reader->slot(i);
    if (!format::isCallKind(r.kind))
      continue;
    state.lastReturned = format::returned(r);
    state.inside =
        !state.lastReturned && format::isCollectiveKind(r.kind) && format::blocksCaller(r);
    break;
  }
  return state;
}

std::map<std::string, FileState> snapshot(const std::string &dir) {
  std::map<std::string, FileState> files;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == format::kFileSuffix)
      files[entry.path().string()] = readState(entry.path().string());
  return files;
}

// `collcheck analyze DIR OPTIONS`, as a process of its own: the diagnosis is the same analysis a
// user would run after the job, on the traces as they are now.
void diagnose(const std::string &dir, const HangWatch &watch) {
  std::string self = executablePath();
  if (self.empty())
    self = "collcheck";
  std::vector<std::string> words{self, "analyze", dir};
  words.insert(words.end(), watch.analyzeOptions.begin(), watch.analyzeOptions.end());
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t analyzer = fork();
  if (analyzer == 0) {
    dup2(STDERR_FILENO,
         STDOUT_FILENO); // beside collcheck's other messages, not in the job's output
    execv(self.c_str(), argv.data());
    std::fprintf(stderr, "collcheck run: cannot run %s: %s\n", self.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (analyzer > 0 && waitpid(analyzer, &status, 0) < 0 && errno == EINTR) {
  }
}

bool reaped(pid_t child, int &status, bool block) {
  for (;;) {
    pid_t r = waitpid(child, &status, block ? 0 : WNOHANG);
    if (r == child)
      return true;
    if (r < 0 && errno == EINTR)
      continue;
    return false;
  }
}

} // namespace

std::string executablePath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0)
    return {};
  path[n] = '\0';
  return path;
}

int watchJob(pid_t child, const std::string &dir, const HangWatch &watch) {
  int status = 0;
  if (watch.timeoutSeconds <= 0) {
    reaped(child, status, true);
    return status;
  }
  // Polling a few times per timeout: the files' headers and tails, nothing the job waits for.
  auto poll = std::chrono::duration<double>(std::min(1.0, watch.timeoutSeconds / 4));
  auto timeout = std::chrono::duration<double>(watch.timeoutSeconds);
  std::map<std::string, FileState> last;
  Clock::time_point changed = Clock::now();
  bool diagnosed = false;
  Clock::time_point termSent{};
  while (!reaped(child, status, false)) {
    std::this_thread::sleep_for(poll);
    if (diagnosed) {
      if (watch.kill && Clock::now() - termSent > std::chrono::duration<double>(watch.graceSeconds))
        ::kill(child, SIGKILL);
      continue;
    }
    auto now = Clock::now();
    std::map<std::string, FileState> files = snapshot(dir);
    if (files != last) {
      last = std::move(files);
      changed = now;
      continue;
    }
    size_t inside = 0;
    for (const auto &[path, state] : last)
      inside += state.inside;
    if (inside == 0 || now - changed < timeout)
      continue;
    diagnosed = true;
    std::fprintf(stderr,
                 "collcheck run: %zu process%s inside a collective and no process has recorded "
                 "anything for %.0f s: the job looks hung; diagnosis follows\n",
                 inside, inside == 1 ? " is" : "es are", watch.timeoutSeconds);
    diagnose(dir, watch);
    if (watch.kill) {
      std::fprintf(stderr, "collcheck run: ending the job (--on-hang kill)\n");
      ::kill(child, SIGTERM);
      termSent = Clock::now();
    } else {
      std::fprintf(stderr, "collcheck run: the job is left running (--on-hang kill ends it)\n");
    }
  }
  return status;
}

} // namespace collcheck::launcher
