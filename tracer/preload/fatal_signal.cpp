// A process that dies of a fatal signal leaves one ProcessSignal record, so that the analyzer can
// say "crashed with SIGSEGV" instead of guessing between a crash, a kill and a hang. The handler
// is installed only where the application left the default action (its own handlers, Python's or
// a debugger's, are never replaced), runs once (SA_RESETHAND), writes only into a chunk already
// mapped, and raises the signal again, so that the process ends exactly as it would have: same
// signal, same core dump, same exit status for the launcher.
#include "tracer/preload/fatal_signal.h"
#include "tracer/preload/core.h"

#include <cerrno>
#include <csignal>

namespace collcheck::tracer {
namespace {

// SIGTERM too: a launcher ending the other ranks after one failed is worth telling from a crash.
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM};

void onFatalSignal(int signal) {
  int saved = errno;
  recordProcessSignal(signal);
  errno = saved;
  raise(signal); // the default action again (SA_RESETHAND), delivered now (SA_NODEFER)
}

} // namespace

void installFatalSignalRecorder() {
  for (int signal : kSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
        (current.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction action {};
    action.sa_handler = onFatalSignal;
    action.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
  }
}

} // namespace collcheck::tracer
