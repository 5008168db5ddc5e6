#include "resolve.h"

#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

namespace collcheck::tracer {
namespace {

// Marks this object so the search below never returns one of our own wrappers.
int anchor;

struct Search {
  const char *name;
  void *found;
  const char *self;
};

const char *selfPath() {
  static const char *path = [] {
    Dl_info info{};
    return dladdr(&anchor, &info) ? info.dli_fname : "";
  }();
  return path;
}

int visit(dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<Search *>(data);
  const char *path = info->dlpi_name;
  if (!path || !*path || std::strcmp(path, search->self) == 0)
    return 0;
  void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle)
    return 0;
  void *symbol = dlsym(handle, search->name);
  dlclose(handle); // RTLD_NOLOAD took a reference; the object stays loaded by its owner
  if (!symbol)
    return 0;
  Dl_info where{};
  if (dladdr(symbol, &where) && where.dli_fname && std::strcmp(where.dli_fname, search->self) == 0)
    return 0;
  search->found = symbol;
  return 1;
}

void *searchLoaded(const char *name) {
  Search search{name, nullptr, selfPath()};
  dl_iterate_phdr(visit, &search);
  return search.found;
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

void warn(const char *message) {
  static const char prefix[] = "collcheck: ";
  [[maybe_unused]] ssize_t a = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  [[maybe_unused]] ssize_t b = write(STDERR_FILENO, message, std::strlen(message));
  [[maybe_unused]] ssize_t c = write(STDERR_FILENO, "\n", 1);
}

} // namespace collcheck::tracer
