// Value capture of count reductions: the objective checks need each rank's valid-item count, and
// without annotations the count travels in a small SUM all-reduce (the count reduction). For such a
// call the input and output values are recorded as ValueCapture records next to the call.
// Bounded (COLLCHECK_CAPTURE_MAX elements, default 4) and opt-out (COLLCHECK_CAPTURE=0).
#pragma once

#include "core.h"

namespace collcheck::tracer {

namespace detail {
extern uint32_t captureLimit; // 0 = capture off
} // namespace detail

// True for a published call whose values are captured: a SUM all-reduce of at most the limit.
inline bool capturesValues(const Record &rec) {
  return rec.kind == static_cast<uint8_t>(Kind::AllReduce) &&
         rec.op == static_cast<uint8_t>(format::ReduceOp::Sum) && rec.count > 0 &&
         rec.count <= detail::captureLimit;
}

// Records the call's values read from `buffer` (host memory; a device pointer, detected through
// the CUDA runtime when it is loaded, is skipped with a note on stderr once).
void captureValues(const Record &call, const void *buffer, bool output);

// Reads the capture settings from the environment (once, when the trace file is opened).
void configureCapture();

} // namespace collcheck::tracer
