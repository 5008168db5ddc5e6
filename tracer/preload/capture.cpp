#include "tracer/preload/capture.h"

#include "tracer/preload/device_copy.h"
#include "tracer/preload/resolve.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace collcheck::tracer {

namespace detail {
uint32_t captureLimit = 4;
uint32_t resultLimit = 0;
} // namespace detail

namespace {

using format::DataType;

// The call this thread is in whose values are held (CallScope: one recorded call at a time per
// thread), from the entry to the return.
COLLCHECK_TLS const Record *heldCall = nullptr;
COLLCHECK_TLS bool heldInputsPublished = false; // published before the call (holdInputs)

// A value in a narrow (4-byte) slot, where it fits exactly (record.h, CapturedValues).
bool narrowBits(DataType type, double v, uint32_t &bits) {
  if (type == DataType::Float32) {
    float f = static_cast<float>(v);
    std::memcpy(&bits, &f, sizeof bits);
    return true;
  }
  if (type == DataType::Uint32) {
    bits = static_cast<uint32_t>(v);
    return true;
  }
  if (!(v >= -2147483648.0 && v <= 2147483647.0) || v != static_cast<double>(int64_t(v)))
    return false;
  int32_t k = static_cast<int32_t>(v);
  std::memcpy(&bits, &k, sizeof bits);
  return true;
}

// Starts `rec` as a CapturedValues record of `n` values of `call` per side said: every field but
// the slots.
void startValues(Record &rec, const Record &call, int n, bool inputs, bool outputs, bool narrow) {
  rec = Record{};
  rec.commId = call.commId;
  rec.commRank = call.commRank;
  rec.seqThread = call.seqThread;
  rec.kind = static_cast<uint8_t>(Kind::CapturedValues);
  rec.dataType = call.dataType;
  rec.op = static_cast<uint8_t>(n | (inputs ? format::kPackedInputs : 0) |
                                (outputs ? format::kPackedOutputs : 0) |
                                (narrow ? format::kPackedNarrow : 0));
  rec.flags = call.flags & format::kFlagNccl;
}

// Fills `rec` as a CapturedValues record of `n` values of `call` per side given (inputs, outputs:
// null where not held), inputs first; false where narrow slots were asked for and a value does not
// fit one.
bool packValues(Record &rec, const Record &call, int n, const double *inputs, const double *outputs,
                bool narrow) {
  auto type = static_cast<DataType>(call.dataType);
  startValues(rec, call, n, inputs != nullptr, outputs != nullptr, narrow);
  int slot = 0;
  for (const double *values : {inputs, outputs}) {
    for (int i = 0; values && i < n; ++i, ++slot) {
      char *at = reinterpret_cast<char *>(&rec) + format::packedSlotOffset(slot, narrow);
      if (!narrow) {
        std::memcpy(at, &values[i], sizeof(double));
        continue;
      }
      uint32_t bits;
      if (!narrowBits(type, values[i], bits))
        return false;
      std::memcpy(at, &bits, sizeof bits);
    }
  }
  return true;
}

// Publishes the values of the sides given in as few records as they fit: one, in narrow slots
// where every value fits one (8 slots) or in wide ones where there are at most 4 values; otherwise
// a record per side.
void publishValues(const Record &call, int n, const double *inputs, const double *outputs) {
  Record rec;
  int values = (inputs ? n : 0) + (outputs ? n : 0);
  if (packValues(rec, call, n, inputs, outputs, true) ||
      (values <= format::kPackedMaxElements && packValues(rec, call, n, inputs, outputs, false))) {
    writeRecord(rec);
    return;
  }
  auto publishSide = [&](const double *in, const double *out) {
    if (!packValues(rec, call, n, in, out, true))
      packValues(rec, call, n, in, out, false);
    writeRecord(rec);
  };
  if (inputs)
    publishSide(inputs, nullptr);
  if (outputs)
    publishSide(nullptr, outputs);
}

// The inputs of the call this thread is in, where they were read before it and not yet published:
// as values, or for a 4-byte type (slotIsBits) as the bits its narrow slots hold.
COLLCHECK_TLS double heldInputs[format::kPackedMaxElements];
COLLCHECK_TLS uint32_t heldInputBits[format::kPackedMaxElements];

// 4-byte types, whose narrow slot holds the value's own bits (record.h): copied, not converted.
bool slotIsBits(DataType type) {
  return type == DataType::Int32 || type == DataType::Uint32 || type == DataType::Float32;
}

// Publishes inputs (held as bits) and outputs (read from `output`, null: none) of a 4-byte type
// in one record of narrow slots.
void publishBits(const Record &call, int n, const void *output) {
  Record rec;
  startValues(rec, call, n, true, output != nullptr, true);
  uint32_t outputs[format::kPackedMaxElements];
  if (output)
    std::memcpy(outputs, output, sizeof(uint32_t) * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::memcpy(reinterpret_cast<char *>(&rec) + format::packedSlotOffset(i, true),
                &heldInputBits[i], sizeof(uint32_t));
    if (output)
      std::memcpy(reinterpret_cast<char *>(&rec) + format::packedSlotOffset(n + i, true),
                  &outputs[i], sizeof(uint32_t));
  }
  writeRecord(rec);
}

// Whether `n` values fit narrow slots (record.h, CapturedValues) as `type`.
bool allNarrow(DataType type, int n, const double *values) {
  uint32_t bits;
  for (int i = 0; i < n; ++i)
    if (!narrowBits(type, values[i], bits))
      return false;
  return true;
}

} // namespace

bool holdInputs(const Record &call, const void *input) {
  if (detail::resultLimit > 0 || !isCountReduction(call) ||
      call.count > format::kPackedMaxElements || !input || !hostMemoryAt(input, call.tscStart))
      [[unlikely]]
    return false;
  auto type = static_cast<DataType>(call.dataType);
  int n = static_cast<int>(call.count);
  if (slotIsBits(type)) { // inputs and outputs always fit one record: nothing published before
    std::memcpy(heldInputBits, input, sizeof(uint32_t) * static_cast<size_t>(n));
    heldInputsPublished = false;
  } else {
    for (int i = 0; i < n; ++i)
      if (!readElement(input, static_cast<uint64_t>(i), type, heldInputs[i]))
        return false;
    // Inputs and outputs that will share one record are published together when the call
    // returns. Where they cannot (3 or 4 values that need wide slots), the inputs are published
    // now, so that a call that never returns keeps them at no extra cost.
    heldInputsPublished = n > 2 && !allNarrow(type, n, heldInputs);
    if (heldInputsPublished)
      publishValues(call, n, heldInputs, nullptr);
  }
  heldCall = &call;
  return true;
}

void detail::publishOutput(const Record &call, double value) {
  publishValues(call, 1, nullptr, &value);
}

void publishHeld(const Record &call, const void *output) {
  const bool inputsPublished = heldInputsPublished;
  heldCall = nullptr;
  heldInputsPublished = false;
  int n = static_cast<int>(call.count);
  auto type = static_cast<DataType>(call.dataType);
  if (slotIsBits(type))
    return publishBits(call, n, output);
  double outputs[format::kPackedMaxElements];
  bool haveOutputs = output != nullptr;
  for (int i = 0; haveOutputs && i < n; ++i)
    haveOutputs = readElement(output, static_cast<uint64_t>(i), type, outputs[i]);
  const double *inputs = inputsPublished ? nullptr : heldInputs;
  if (inputs || haveOutputs)
    publishValues(call, n, inputs, haveOutputs ? outputs : nullptr);
}

void finishCapture(const Record &call, const void *output, bool failed) {
  if (heldCall == &call) {
    publishHeld(call, failed ? nullptr : output);
    return;
  }
  if (!failed)
    captureValues(call, output, true, kNoStream);
}

void configureCapture() {
  if (const char *off = getenv("COLLCHECK_CAPTURE"); off && std::strcmp(off, "0") == 0) {
    detail::captureLimit = 0;
    return;
  }
  if (const char *limit = getenv("COLLCHECK_CAPTURE_MAX"); limit && *limit)
    detail::captureLimit = static_cast<uint32_t>(std::strtoul(limit, nullptr, 10));
  if (detail::captureLimit > 64)
    detail::captureLimit = 64;
  if (const char *results = getenv("COLLCHECK_CAPTURE_RESULTS"); results && *results)
    detail::resultLimit = static_cast<uint32_t>(std::strtoul(results, nullptr, 10));
  if (detail::resultLimit > 1024)
    detail::resultLimit = 1024;
}

void recordCapturedValues(const Record &call, const void *values, uint64_t elements, bool output,
                          uint8_t extraFlags) {
  auto type = static_cast<DataType>(call.dataType);
  for (uint64_t i = 0; i < elements; ++i) {
    double value;
    if (!readElement(values, i, type, value))
      return;
    Record rec = stampMeta(Kind::ValueCapture);
    rec.commId = call.commId;
    rec.commRank = call.commRank;
    rec.setSeqThread(call.seq(), call.thread());
    rec.window = call.window;
    rec.count = i;
    rec.peer = static_cast<int32_t>(elements);
    rec.dataType = call.dataType;
    rec.setAuxDouble(value);
    rec.op = output ? format::kPackedOutputs : format::kPackedInputs;
    rec.flags = static_cast<uint8_t>((call.flags & format::kFlagNccl) | extraFlags);
    Record *r = writeRecord(rec);
    if (!r)
      return;
    endRecord(r, false);
  }
}

void captureValues(const Record &call, const void *buffer, bool output, void *stream) {
  uint64_t elements = isCountReduction(call) ? call.count : 0;
  if (output && detail::resultLimit > elements)
    elements = std::min<uint64_t>(call.count, detail::resultLimit);
  if (!buffer || elements == 0)
    return;
  MemoryKind kind = memoryKind(buffer);
  if (kind == MemoryKind::Host && !(stream != kNoStream && cudaDriverLoaded())) {
    // MPI calls, and NCCL without a GPU (the call completed when it returned): read directly.
    recordCapturedValues(call, buffer, elements, output, 0);
    return;
  }
  // With a GPU an NCCL call runs later on its stream, whatever memory it uses: copy in stream
  // order. An MPI call with a device buffer (CUDA-aware MPI) has no stream to copy on.
  if (kind != MemoryKind::Unknown && stream != kNoStream &&
      captureFromDevice(call, buffer, elements, output, stream))
    return;
  static std::atomic<bool> noted{false};
  if (!noted.exchange(true))
    warn("a count reduction's buffer could not be copied (device memory without a stream, "
         "managed memory, or all staging slots in flight): its values are not captured, the "
         "analyzer reports the reductions it cannot verify");
}

} // namespace collcheck::tracer
