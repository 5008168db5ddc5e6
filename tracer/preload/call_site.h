// Where the application made each call: the return address of the outermost wrapper (and, where
// the calling function keeps a frame pointer, its caller's), turned into a 16-bit index into this
// process's call-site table (format/record.h, CallSite). A site seen
// before costs a look-up in a small per-thread cache; the first sight of one (or a miss in that
// cache) takes the slow path, which assigns the index, writes the CallSite record and, where the
// address lies in no module known yet, the module map (dl_iterate_phdr). Hot path: no lock, no
// syscall.
#pragma once

#include "format/record.h"
#include "tracer/preload/core.h"

#include <cstdint>

namespace collcheck::tracer {

namespace detail {
// The return address of the outermost wrapper on this thread, and the frame pointer its caller
// had (the wrapper's saved %rbp), set by the wrapper before it records (null: not known, the
// record gets no site).
extern COLLCHECK_TLS const void *caller;
extern COLLCHECK_TLS const void *callerFrame;
// A site an outer layer set for every call this thread makes until it clears it: a line of a
// Python program (collcheck_site_enter), or the Fortran caller of an MPI binding that calls the C
// function (mpi_fortran.cpp, under MPICH). kNoSite: none, the call's own caller is its site.
extern COLLCHECK_TLS uint16_t outerSite;
// This thread's stack, [low, high): a frame is read only inside it. Zero until the first site's
// slow path in the thread.
extern COLLCHECK_TLS uintptr_t stackLow, stackHigh;

// A site is the return address and, where the function that made the call keeps a frame pointer
// (found once per return address, on its first sight), that function's own return address: the
// line that called the application's wrapper around MPI or NCCL.
struct SiteCacheEntry {
  uintptr_t address;
  uintptr_t from; // 0: the caller's caller is not followed (or not known)
  uint16_t site;
  bool walk; // `address` lies in a function that keeps a frame pointer
};
inline constexpr size_t kSiteCacheEntries = 128; // siteCacheSlot keeps 7 bits
extern COLLCHECK_TLS SiteCacheEntry siteCache[kSiteCacheEntries];
inline size_t siteCacheSlot(uintptr_t address) {
  // A multiplicative hash, top bits: the low bits alone collide for call instructions a multiple of
  // 32 bytes apart, and colliding sites called in turn take the slow path on every call.
  return static_cast<size_t>((address * 0x9e3779b97f4a7c15ull) >> 57);
}
// The return address in the frame `frame` of a function that keeps a frame pointer, 0 where the
// frame lies outside this thread's stack, or below the frame running now (a caller's frame is
// above it; the part of the main thread's stack below may not be mapped): never read there.
COLLCHECK_HOT uintptr_t returnAddressOf(const void *frame) {
  auto at = reinterpret_cast<uintptr_t>(frame);
  if (!frame || at - stackLow >= stackHigh - stackLow || stackHigh - at < 2 * sizeof(uintptr_t) ||
      (at & (sizeof(uintptr_t) - 1)) ||
      at <= reinterpret_cast<uintptr_t>(__builtin_frame_address(0)))
    return 0;
  return static_cast<const uintptr_t *>(frame)[1];
}
// Slow path: the site of an address not in this thread's cache (assigned and written at its first
// sight in the process); fills the cache entry.
uint16_t lookupSite(uintptr_t address, const void *frame);
} // namespace detail

// Sets the caller of the call being recorded. The wrappers pass __builtin_return_address(0) and
// COLLCHECK_CALLER_FRAME.
COLLCHECK_HOT void setCaller(const void *address, const void *frame) {
  detail::caller = address;
  detail::callerFrame = frame;
}
// The frame pointer of the function that called the wrapper this expands in: the wrapper's saved
// %rbp (using __builtin_frame_address gives the wrapper a frame pointer of its own).
#define COLLCHECK_CALLER_FRAME (*static_cast<const void *const *>(__builtin_frame_address(0)))

// The site index of this thread's current caller, format::kNoSite when none.
COLLCHECK_HOT uint16_t currentSite() {
  if (detail::outerSite != format::kNoSite) [[unlikely]]
    return detail::outerSite;
  auto address = reinterpret_cast<uintptr_t>(detail::caller);
  const detail::SiteCacheEntry &e = detail::siteCache[detail::siteCacheSlot(address)];
  if (e.address == address) [[likely]] {
    // The empty entry (address 0) holds kNoSite: an unknown caller costs nothing.
    if (!e.walk || detail::returnAddressOf(detail::callerFrame) == e.from) [[likely]]
      return e.site;
  }
  return detail::lookupSite(address, detail::callerFrame);
}

// The index of a source site (a line of a Python program): numbered with the others, its CallSite
// and Module records written at its first sight in the process (under the slow path's mutex).
uint16_t internSourceSite(const char *file, const char *function, uint32_t line);

// In a forked child: its new trace file starts a new table (the parent's records are in the
// parent's file). Runs in the thread that survived the fork.
void forgetCallSitesAfterFork();

} // namespace collcheck::tracer
