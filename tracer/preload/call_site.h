// Where the application made each call: the return address of the outermost wrapper, turned into
// a 16-bit index into this process's call-site table (format/record.h, CallSite). A site seen
// before costs a look-up in a small per-thread cache; the first sight of one (or a miss in that
// cache) takes the slow path, which assigns the index, writes the CallSite record and, where the
// address lies in no module known yet, the module map (dl_iterate_phdr). Hot path: no lock, no
// syscall.
#pragma once

#include "core.h"

#include <cstdint>

namespace collcheck::tracer {

namespace detail {
// The return address of the outermost wrapper on this thread, set by the wrapper before it
// records (null: not known, the record gets no site).
extern COLLCHECK_TLS const void *caller;

struct SiteCacheEntry {
  uintptr_t address;
  uint16_t site;
};
inline constexpr size_t kSiteCacheEntries = 32;
extern COLLCHECK_TLS SiteCacheEntry siteCache[kSiteCacheEntries];
inline size_t siteCacheSlot(uintptr_t address) {
  // Return addresses of neighbouring calls differ in their low bits; a program's sites spread well
  // over a few of them.
  return static_cast<size_t>((address ^ (address >> 9)) & (kSiteCacheEntries - 1));
}
// Slow path: the site of an address not in this thread's cache (assigned and written at its first
// sight in the process); fills the cache entry.
uint16_t lookupSite(uintptr_t address);
} // namespace detail

// Sets the caller of the call being recorded; the wrappers pass __builtin_return_address(0).
inline void setCaller(const void *address) { detail::caller = address; }

// The site index of this thread's current caller, format::kNoSite when none.
inline uint16_t currentSite() {
  auto address = reinterpret_cast<uintptr_t>(detail::caller);
  const detail::SiteCacheEntry &e = detail::siteCache[detail::siteCacheSlot(address)];
  if (e.address == address) [[likely]]
    return e.site; // the empty entry (address 0) holds kNoSite: an unknown caller costs nothing
  return detail::lookupSite(address);
}

// In a forked child: its new trace file starts a new table (the parent's records are in the
// parent's file). Runs in the thread that survived the fork.
void forgetCallSitesAfterFork();

} // namespace collcheck::tracer
