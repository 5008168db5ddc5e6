// What the tracer learnt about an MPI handle (a datatype's mapping and size, an operation's
// mapping), kept so that a call with a handle seen before makes no MPI call and runs no loop to
// record it. Two levels:
// - per thread, the last handle looked up (handleMemo): one compare on the hot path;
// - per process, a small open-addressed table (HandleCache), lock-free for readers.
// A handle the program frees may come back as another object (MPI_Type_free, then a new type at
// the same address): the free wrappers call forget(), which removes the handle from the table and
// advances `generation`, so that every thread's memo of an older generation misses once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace collcheck::tracer {

// What one handle maps to: a format enumerator and, for a derived datatype, the aux value that
// describes its signature or size (format/record.h, kFlagDerived).
struct HandleFacts {
  uint8_t mapped = 0;
  uint64_t bytes = 0;
};

// Advanced by every forget() of any table; a memo is valid only in the generation it was made in.
// Starts at 1, so that a thread's zero-initialized memo never matches.
inline std::atomic<uint32_t> handleGeneration{1};

struct HandleMemo {
  uintptr_t handle = 0;
  uint32_t generation = 0;
  HandleFacts facts;
  bool matches(uintptr_t h) const {
    return h == handle && generation == handleGeneration.load(std::memory_order_acquire);
  }
};

template <size_t SlotsLog2> class HandleCache {
public:
  static constexpr size_t kSlots = size_t{1} << SlotsLog2;
  static constexpr size_t kProbes = 8;
  // No MPI handle is 1 or 2: Open MPI's are pointers, MPICH's tag their kind in high bits.
  static constexpr uintptr_t kFilling = 1, kForgotten = 2;

  bool find(uintptr_t handle, HandleFacts &facts) const {
    size_t i = slotOf(handle);
    for (size_t probe = 0; probe < kProbes; ++probe, i = (i + 1) & (kSlots - 1)) {
      const Slot &s = slots_[i];
      uintptr_t key = s.handle.load(std::memory_order_acquire);
      if (key == 0)
        return false;
      if (key != handle)
        continue; // another handle's slot, one being filled, or a forgotten one
      // Acquire loads: the key's second read below cannot move before them (plain loads on x86;
      // a fence would say the same, but ThreadSanitizer does not model fences).
      HandleFacts read{s.mapped.load(std::memory_order_acquire),
                       s.bytes.load(std::memory_order_acquire)};
      // The slot may have been forgotten and refilled while it was read: read its key again.
      if (s.handle.load(std::memory_order_relaxed) != handle)
        return false;
      facts = read;
      return true;
    }
    return false;
  }

  // Adds `handle`; a full neighbourhood only costs the next lookup the slow path again.
  void insert(uintptr_t handle, const HandleFacts &facts) {
    size_t i = slotOf(handle);
    for (size_t probe = 0; probe < kProbes; ++probe, i = (i + 1) & (kSlots - 1)) {
      Slot &s = slots_[i];
      uintptr_t key = s.handle.load(std::memory_order_relaxed);
      if (key == handle)
        return; // another thread added it meanwhile
      // Acquire on success: the new facts cannot be stored before kFilling is.
      if ((key != 0 && key != kForgotten) ||
          !s.handle.compare_exchange_strong(key, kFilling, std::memory_order_acquire,
                                            std::memory_order_relaxed))
        continue;
      s.mapped.store(facts.mapped, std::memory_order_relaxed);
      s.bytes.store(facts.bytes, std::memory_order_relaxed);
      s.handle.store(handle, std::memory_order_release);
      return;
    }
  }

  // The program freed `handle`: no thread may take its facts for a later object's.
  void forget(uintptr_t handle) {
    size_t i = slotOf(handle);
    for (size_t probe = 0; probe < kProbes; ++probe, i = (i + 1) & (kSlots - 1)) {
      uintptr_t key = handle;
      slots_[i].handle.compare_exchange_strong(key, kForgotten, std::memory_order_acq_rel);
    }
    handleGeneration.fetch_add(1, std::memory_order_acq_rel);
  }

private:
  struct Slot {
    std::atomic<uintptr_t> handle{0};
    std::atomic<uint8_t> mapped{0};
    std::atomic<uint64_t> bytes{0};
  };
  static size_t slotOf(uintptr_t handle) {
    return static_cast<size_t>((handle * 0x9e3779b97f4a7c15ull) >> (64 - SlotsLog2));
  }
  Slot slots_[kSlots];
};

} // namespace collcheck::tracer
