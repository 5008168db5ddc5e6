// What a launcher (mpirun, srun) tells the processes it starts through their environment. Header
// only: both the analyzer and its MPI plugin (a library of its own) read it.
#pragma once

#include <cerrno>
#include <cstdlib>

namespace collcheck::analyzer::distributed {

// A process count the launcher set; 0 when the variable is unset or not a positive number.
inline long launcherCount(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  return (*end == '\0' && errno == 0 && value > 0) ? value : 0;
}

} // namespace collcheck::analyzer::distributed
