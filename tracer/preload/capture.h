// Value capture, as ValueCapture records next to the call:
// - count reductions: the objective checks need each rank's valid-item count, and without
//   annotations it travels in a small SUM all-reduce. Its input and output values are recorded.
//   Bounded (COLLCHECK_CAPTURE_MAX elements, default 4) and opt-out (COLLCHECK_CAPTURE=0).
// - reduction results, opt-in (COLLCHECK_CAPTURE_RESULTS=K): the first K output elements of every
//   all-reduce, so `collcheck analyze --reference` can compare a run with a reference run.
#pragma once

#include "tracer/preload/core.h"

namespace collcheck::tracer {

namespace detail {
extern uint32_t captureLimit; // count reductions: 0 = capture off
extern uint32_t resultLimit;  // leading output elements of every all-reduce: 0 = off
} // namespace detail

inline bool isCountReduction(const Record &rec) {
  return rec.op == static_cast<uint8_t>(format::ReduceOp::Sum) && rec.count > 0 &&
         rec.count <= detail::captureLimit;
}
// True for a published call whose values are captured. Not through a derived datatype: its
// elements need not lie next to each other in the buffer.
inline bool capturesValues(const Record &rec) {
  return rec.kind == static_cast<uint8_t>(Kind::AllReduce) && !(rec.flags & format::kFlagDerived) &&
         (isCountReduction(rec) || detail::resultLimit > 0);
}

// Records the call's input values (count reductions only) or output values read from `buffer`:
// directly from host memory, by an asynchronous copy on `stream` from device memory
// (device_copy.h). `kNoStream` for MPI calls: their device buffers are not captured.
inline void *const kNoStream = reinterpret_cast<void *>(~uintptr_t{0});
void captureValues(const Record &call, const void *buffer, bool output, void *stream);

// Writes the ValueCapture records of `elements` values of `call`'s type at `values` (host memory).
void recordCapturedValues(const Record &call, const void *values, uint64_t elements, bool output,
                          uint8_t extraFlags);

// Reads the capture settings from the environment (once, when the trace file is opened).
void configureCapture();

// MPI count reductions (no results asked for): the input values go into one CapturedValues record
// (record.h) before the call, published, so that a call that never returns keeps them; when the
// call returns, a one-element output that is a non-negative 31-bit integer is stored in that
// record's duration, any other output in a CapturedValues record of its own. False where the
// call's values are not taken this way (device or unknown memory, a type read as no count,
// results asked for): captureValues() then applies.
bool holdInputs(const Record &call, const void *input);
// After the held call returned: its outputs read from `output`; null where the call failed or
// returns before its result is ready (nonblocking): nothing more.
void publishHeld(const Record &call, const void *output);
// A one-element MPI count reduction, where durations are not measured and no results asked for:
// its input read from `input` into the record being filled (format::holdsValues: no record beside
// the call). False where it does not apply (holdInputs() then may).
bool holdInline(Record &rec, const void *input);
// After such a call returned: its output from `output` (null: failed, or not ready) into the
// record's duration, where it fits; elsewhere a CapturedValues record.
void finishInline(Record &call, const void *output, bool failed);
// After a call that asked for its output values (Started::captureOutput in mpi_recording.h).
void finishCapture(const Record &call, const void *output, bool failed);

} // namespace collcheck::tracer
