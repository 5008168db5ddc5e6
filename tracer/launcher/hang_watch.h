// `collcheck run --hang-timeout S`: watches the trace files of a running job and diagnoses a hang
// while the job is stuck, instead of after someone notices, kills it and runs `analyze`.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace collcheck::launcher {

struct HangWatch {
  double timeoutSeconds = 0;               // 0: no watch, only wait for the job
  bool kill = false;                       // --on-hang kill: end the job once diagnosed
  double graceSeconds = 10;                // between SIGTERM and SIGKILL
  std::vector<std::string> analyzeOptions; // handed to `collcheck analyze` (--json F, ...)
};

// This program's own path (/proc/self/exe), empty where it cannot be read.
std::string executablePath();

// Waits for `child` (the job) and returns its wait status. With a timeout, polls the trace files
// in `dir`: once some rank has been inside a blocking collective and no rank has recorded or
// finished anything for the timeout, it runs `collcheck analyze` on the traces as they are, once,
// then ends the job if asked to.
int watchJob(pid_t child, const std::string &dir, const HangWatch &watch);

} // namespace collcheck::launcher
