// The analysis reads with one descriptor per trace file (match/chunk_reader.h): a job of thousands
// of ranks exceeds the usual soft limit of 1,024 open files, and the files past it would then be
// read through their mappings instead, which this machine was measured to read several times more
// slowly (docs/performance.md, *Analyzer*).
#pragma once

#include <cstdint>

namespace collcheck::analyzer {

// Raises this process's soft limit of open files to `wanted` where it is lower, up to the hard
// limit (which an unprivileged process may not pass). Returns the soft limit in force afterwards.
uint64_t raiseDescriptorLimit(uint64_t wanted);

} // namespace collcheck::analyzer
