// libFuzzer target: one trace file's bytes through format::Reader and every slot accessor. The
// reader must reject or classify any input without crashing, hanging or growing without bound.
#include "format/reader.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int fd = memfd_create("collcheck-fuzz-trace", 0);
  if (fd < 0)
    return 0;
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    return 0;
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::string error;
  auto reader = collcheck::format::Reader::open(path, error);
  if (!reader) {
    if (error.find(path) == std::string::npos) // every rejection names the file
      __builtin_trap();
    return 0;
  }
  uint64_t kinds = 0;
  for (uint64_t i = 0; i < reader->slotCount(); ++i)
    if (reader->usable(i))
      kinds += reader->slot(i).kind;
  const auto &s = reader->summary();
  if (s.published + s.holes + s.torn + s.corrupt != reader->slotCount())
    __builtin_trap(); // every slot is classified exactly once
  return static_cast<int>(kinds & 0);
}
