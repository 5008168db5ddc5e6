// The analysis reads with one descriptor per trace file (the read-ahead thread's and the copied
// chunks' pread): a job of thousands of ranks exceeds the usual soft limit of 1,024 open files,
// and the files past it would then be read through their mappings instead, the way this machine
// was measured to read more slowly (load/reading_cost.h), or without the thread reading ahead.
#pragma once

#include <cstdint>

namespace collcheck::analyzer {

// Raises this process's soft limit of open files to `wanted` where it is lower, up to the hard
// limit (which an unprivileged process may not pass). Returns the soft limit in force afterwards.
uint64_t raiseDescriptorLimit(uint64_t wanted);

} // namespace collcheck::analyzer
