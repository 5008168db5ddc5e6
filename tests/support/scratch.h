// Scratch folders for the C++ tests. Each test process gets one root folder,
// $TMPDIR/collcheck-test-PID, and removes it when it exits: the suite writes hundreds of traces per
// run, and a developer who runs it all day must not find the temporary folder full.
// COLLCHECK_KEEP_SCRATCH=1 keeps the root (its path is printed at exit) to look at a failure.
#pragma once

#include <string>

namespace collcheck::testing {

// A path NAME under this process's scratch root, removed if it existed; its parent exists.
std::string freshDir(const std::string &name);

} // namespace collcheck::testing
