#pragma once

namespace collcheck::tracer {

// Records a fatal signal before the process dies of it (fatal_signal.cpp). Called once, when the
// trace file is created.
void installFatalSignalRecorder();

} // namespace collcheck::tracer
