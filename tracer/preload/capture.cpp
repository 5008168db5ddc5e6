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

// The call this thread is in and its values record (CallScope: one recorded call at a time per
// thread), from the entry to the return.
COLLCHECK_TLS const Record *heldCall = nullptr;
COLLCHECK_TLS Record *heldValues = nullptr;

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

// Fills `rec` as a CapturedValues record of `n` values of `call` (inputs or outputs); false where
// narrow slots were asked for and a value does not fit one.
bool packValues(Record &rec, const Record &call, int n, const double *values, bool outputs,
                bool narrow) {
  auto type = static_cast<DataType>(call.dataType);
  rec = Record{};
  rec.commId = call.commId;
  rec.commRank = call.commRank;
  rec.seqThread = call.seqThread;
  rec.kind = static_cast<uint8_t>(Kind::CapturedValues);
  rec.dataType = call.dataType;
  rec.op = static_cast<uint8_t>(n | (outputs ? format::kPackedOutputs : format::kPackedInputs) |
                                (narrow ? format::kPackedNarrow : 0));
  rec.flags = call.flags & format::kFlagNccl;
  for (int i = 0; i < n; ++i) {
    char *at = reinterpret_cast<char *>(&rec) + format::packedSlotOffset(i, narrow);
    if (!narrow) {
      std::memcpy(at, &values[i], sizeof(double));
      continue;
    }
    uint32_t bits;
    if (!narrowBits(type, values[i], bits))
      return false;
    std::memcpy(at, &bits, sizeof bits);
  }
  return true;
}

// Publishes the values as one record (narrow slots where they fit), marked to take the output in
// its duration when `outputLater`; the slot, or null.
Record *publishValues(const Record &call, int n, const double *values, bool outputs,
                      bool outputLater) {
  Record rec;
  if (!packValues(rec, call, n, values, outputs, true))
    packValues(rec, call, n, values, outputs, false);
  if (outputLater)
    rec.op |= format::kPackedOutputInDuration;
  return writeRecord(rec);
}

} // namespace

bool holdInputs(const Record &call, const void *input) {
  if (detail::resultLimit > 0 || !isCountReduction(call) ||
      call.count > format::kPackedMaxElements || !input || !hostMemoryAt(input, call.tscStart))
      [[unlikely]]
    return false;
  auto type = static_cast<DataType>(call.dataType);
  double inputs[format::kPackedMaxElements];
  int n = static_cast<int>(call.count);
  for (int i = 0; i < n; ++i)
    if (!readElement(input, static_cast<uint64_t>(i), type, inputs[i]))
      return false;
  heldValues = publishValues(call, n, inputs, false, n == 1);
  heldCall = &call;
  return true;
}

void detail::publishOutput(const Record &call, double value) {
  publishValues(call, 1, &value, true, false);
}

void publishHeld(const Record &call, const void *output) {
  Record *values = heldValues;
  heldCall = nullptr;
  heldValues = nullptr;
  int n = static_cast<int>(call.count);
  double outputs[format::kPackedMaxElements];
  auto type = static_cast<DataType>(call.dataType);
  for (int i = 0; i < n; ++i)
    if (!output || !readElement(output, static_cast<uint64_t>(i), type, outputs[i]))
      return;
  if (n == 1 && values && outputs[0] >= 0 && outputs[0] < 2147483648.0 &&
      outputs[0] == static_cast<double>(int64_t(outputs[0]))) {
    // Beside the inputs, in the field written after publication (record.h): no record more.
    std::atomic_ref<uint32_t>(values->duration)
        .store(format::kDurationOutputWritten | static_cast<uint32_t>(outputs[0]),
               std::memory_order_relaxed);
    return;
  }
  publishValues(call, n, outputs, true, false);
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
