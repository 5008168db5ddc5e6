// Finds the real implementation of an intercepted function, once per function.
#pragma once

#include <atomic>
#include <cstdint>

namespace collcheck::tracer {

// The next definition of `name` after this library: dlsym(RTLD_NEXT) first; when the defining
// library was loaded with dlopen(RTLD_LOCAL) (Python extension modules load NCCL that way) it is
// not in the global scope, so every loaded object is searched (dl_iterate_phdr + RTLD_NOLOAD).
// `fallbackName` (e.g. NCCL's pnccl* entry point) is tried the same way. Null when none exists.
void *resolveNext(const char *name, const char *fallbackName = nullptr);

// How many objects the dynamic loader has loaded since the process started (dlpi_adds): it grows
// with every dlopen that loads something, so a lookup that failed is worth repeating only once it
// has grown. Takes the loader's list lock for one step of its walk; 0 where the loader does not
// count.
uint64_t objectsLoaded();

// A real function resolved on its first call. Constant-initialized (no guard on the hot path); a
// failed lookup is retried on the next call, since the library may be loaded later (dlopen).
template <typename Function> class RealFunction {
public:
  constexpr RealFunction(const char *name, const char *fallbackName = nullptr)
      : name_(name), fallbackName_(fallbackName) {}
  Function get() {
    void *fn = cached_.load(std::memory_order_acquire);
    if (!fn) [[unlikely]] {
      fn = resolveNext(name_, fallbackName_);
      cached_.store(fn, std::memory_order_release);
    }
    return reinterpret_cast<Function>(fn);
  }

private:
  const char *name_;
  const char *fallbackName_;
  std::atomic<void *> cached_{nullptr};
};

// Writes "collcheck: <message>" to stderr with plain write(2): no allocation, no stdio locks.
void warn(const char *message);

} // namespace collcheck::tracer
