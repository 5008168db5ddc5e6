#include "tests/support/scratch.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace collcheck::testing {
namespace {

struct ScratchRoot {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("collcheck-test-" + std::to_string(getpid()));
  // A child forked by a test (and ending through exit) must not remove its parent's folder.
  pid_t owner = getpid();

  ~ScratchRoot() {
    if (getpid() != owner)
      return;
    const char *keep = std::getenv("COLLCHECK_KEEP_SCRATCH");
    if (keep && *keep && std::string(keep) != "0") {
      std::fprintf(stderr, "scratch kept: %s\n", path.c_str());
      return;
    }
    std::error_code ignored; // a folder that cannot be removed must not fail a passing test
    std::filesystem::remove_all(path, ignored);
  }
};

ScratchRoot &root() {
  static ScratchRoot instance;
  return instance;
}

} // namespace

std::string freshDir(const std::string &name) {
  std::filesystem::path dir = root().path / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir.parent_path());
  return dir.string();
}

} // namespace collcheck::testing
