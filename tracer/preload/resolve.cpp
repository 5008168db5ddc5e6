#include "tracer/preload/resolve.h"

#include <cstddef>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace collcheck::tracer {
namespace {

// Marks this object so the search below never returns one of our own wrappers.
int anchor;

const char *selfPath() {
  static const char *path = [] {
    Dl_info info{};
    return dladdr(&anchor, &info) ? info.dli_fname : "";
  }();
  return path;
}

// dl_iterate_phdr holds the loader's list lock while it calls back, and dlopen, dlsym and dladdr
// take the loader's main lock: called from the callback they would wait on a thread that is loading
// a library while it waits for the list lock. So the walk only collects the names; the lookups
// follow it, each object pinned by RTLD_NOLOAD (one unloaded meanwhile is skipped).
int collectName(dl_phdr_info *info, size_t, void *data) {
  // No exception may unwind through the loader's C frames: out of memory ends the walk.
  try {
    if (info->dlpi_name && *info->dlpi_name)
      static_cast<std::vector<std::string> *>(data)->emplace_back(info->dlpi_name);
    return 0;
  } catch (...) {
    return 1;
  }
}

void *searchLoaded(const char *name) {
  const char *self = selfPath();
  std::vector<std::string> paths;
  dl_iterate_phdr(collectName, &paths);
  for (const std::string &path : paths) {
    if (path == self)
      continue;
    void *handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
      continue;
    void *symbol = dlsym(handle, name);
    dlclose(handle); // RTLD_NOLOAD took a reference; the object stays loaded by its owner
    if (!symbol)
      continue;
    Dl_info where{};
    if (dladdr(symbol, &where) && where.dli_fname && std::strcmp(where.dli_fname, self) == 0)
      continue;
    return symbol;
  }
  return nullptr;
}

void *resolveOne(const char *name) {
  if (void *symbol = dlsym(RTLD_NEXT, name))
    return symbol;
  return searchLoaded(name);
}

} // namespace

void *resolveNext(const char *name, const char *fallbackName) {
  if (void *symbol = resolveOne(name))
    return symbol;
  return fallbackName ? resolveOne(fallbackName) : nullptr;
}

uint64_t objectsLoaded() {
  uint64_t adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t size, void *data) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
          *static_cast<uint64_t *>(data) = info->dlpi_adds;
        return 1; // the count is the same in every object's entry: stop at the first
      },
      &adds);
  return adds;
}

void warn(const char *message) {
  static const char prefix[] = "collcheck: ";
  [[maybe_unused]] ssize_t a = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  [[maybe_unused]] ssize_t b = write(STDERR_FILENO, message, std::strlen(message));
  [[maybe_unused]] ssize_t c = write(STDERR_FILENO, "\n", 1);
}

} // namespace collcheck::tracer
