// Value capture, as ValueCapture records next to the call:
// - count reductions: the objective checks need each rank's valid-item count, and without
//   annotations it travels in a small SUM all-reduce. Its input and output values are recorded.
//   Bounded (COLLCHECK_CAPTURE_MAX elements, default 4) and opt-out (COLLCHECK_CAPTURE=0).
// - reduction results, opt-in (COLLCHECK_CAPTURE_RESULTS=K): the first K output elements of every
//   all-reduce, so `collcheck analyze --reference` can compare a run with a reference run.
#pragma once

#include "tracer/preload/core.h"
#include "tracer/preload/device_copy.h"

#include <cstring>

namespace collcheck::tracer {

namespace detail {
extern uint32_t captureLimit; // count reductions: 0 = capture off
extern uint32_t resultLimit;  // leading output elements of every all-reduce: 0 = off
} // namespace detail

COLLCHECK_HOT bool isCountReduction(const Record &rec) {
  return rec.op == static_cast<uint8_t>(format::ReduceOp::Sum) && rec.count > 0 &&
         rec.count <= detail::captureLimit;
}
// True for a published call whose values are captured. Not through a derived datatype: its
// elements need not lie next to each other in the buffer.
COLLCHECK_HOT bool capturesValues(const Record &rec) {
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
// Element `index` of `buffer` (host memory) of `type`, as a double; false for a type not read as a
// count (half types and others).
COLLCHECK_HOT bool readElement(const void *buffer, uint64_t index, format::DataType type,
                               double &value) {
  using format::DataType;
  const auto *bytes = static_cast<const unsigned char *>(buffer);
  auto load = [&](auto sample) {
    std::memcpy(&sample, bytes + index * sizeof sample, sizeof sample);
    value = static_cast<double>(sample);
    return true;
  };
  switch (type) {
  case DataType::Int8:
    return load(int8_t{});
  case DataType::Uint8:
    return load(uint8_t{});
  case DataType::Int16:
    return load(int16_t{});
  case DataType::Uint16:
    return load(uint16_t{});
  case DataType::Int32:
    return load(int32_t{});
  case DataType::Uint32:
    return load(uint32_t{});
  case DataType::Int64:
    return load(int64_t{});
  case DataType::Uint64:
    return load(uint64_t{});
  case DataType::Float32:
    return load(float{});
  case DataType::Float64:
    return load(double{});
  default:
    return false;
  }
}

namespace detail {
void publishOutput(const Record &call, double value); // a CapturedValues record of one output
} // namespace detail

// A one-element MPI count reduction, where durations are not measured and no results asked for:
// its input read from `input` into the record being filled (format::holdsValues: no record beside
// the call). False where it does not apply (holdInputs() then may).
COLLCHECK_HOT bool holdInline(Record &rec, const void *input) {
  if (rec.count != 1 || detail::measureDurations || detail::resultLimit > 0 ||
      !isCountReduction(rec) || !input || !hostMemoryAt(input, rec.tscStart)) [[unlikely]]
    return false;
  double value;
  if (!readElement(input, 0, static_cast<format::DataType>(rec.dataType), value))
    return false;
  rec.setAuxDouble(value);
  rec.peer = format::kPeerHoldsValues;
  return true;
}
// After such a call returned: its output from `output` (null: failed, or not ready) into the
// record's duration, where it fits; elsewhere a CapturedValues record.
COLLCHECK_HOT void finishInline(Record &call, const void *output, bool failed) {
  uint32_t code = 1; // returned, the output not here
  double value;
  if (output && !failed &&
      readElement(output, 0, static_cast<format::DataType>(call.dataType), value)) {
    constexpr double kLimit = double(format::kDurationSaturated - format::kHeldOutputBias);
    if (value >= 0 && value <= kLimit && value == static_cast<double>(int64_t(value))) [[likely]]
      code = static_cast<uint32_t>(value) + format::kHeldOutputBias;
    else
      detail::publishOutput(call, value);
  }
  if (failed)
    code |= format::kDurationFailedBit;
  std::atomic_ref<uint32_t>(call.duration).store(code, std::memory_order_relaxed);
}
// After a call that asked for its output values (Started::captureOutput in mpi_recording.h).
void finishCapture(const Record &call, const void *output, bool failed);

} // namespace collcheck::tracer
