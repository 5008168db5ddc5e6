#include "capture.h"

#include "device_copy.h"
#include "resolve.h"

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

bool readElement(const void *buffer, uint64_t index, DataType type, double &value) {
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
    return false; // half types and others: not a count
  }
}

bool integral(DataType type) { return type != DataType::Float32 && type != DataType::Float64; }

// The inputs of the call this thread is in (CallScope: one recorded call at a time per thread).
COLLCHECK_TLS const Record *heldCall = nullptr;
COLLCHECK_TLS double heldInputs[format::kPackedMaxElements];

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

// One CapturedValues record of `n` elements: `inputs` and/or `outputs` (null: absent).
bool packValues(const Record &call, int n, const double *inputs, const double *outputs,
                bool narrow) {
  auto type = static_cast<DataType>(call.dataType);
  Record rec{};
  rec.commId = call.commId;
  rec.commRank = call.commRank;
  rec.seqThread = call.seqThread;
  rec.kind = static_cast<uint8_t>(Kind::CapturedValues);
  rec.dataType = call.dataType;
  rec.op = static_cast<uint8_t>(n | (inputs ? format::kPackedInputs : 0) |
                                (outputs ? format::kPackedOutputs : 0) |
                                (narrow ? format::kPackedNarrow : 0));
  rec.flags = static_cast<uint8_t>((integral(type) ? format::kFlagIntegral : 0) |
                                   (call.flags & format::kFlagNccl));
  int slot = 0;
  for (const double *side : {inputs, outputs}) {
    if (!side)
      continue;
    for (int i = 0; i < n; ++i, ++slot) {
      char *at = reinterpret_cast<char *>(&rec) + format::packedSlotOffset(slot, narrow);
      if (!narrow) {
        std::memcpy(at, &side[i], sizeof(double));
        continue;
      }
      uint32_t bits;
      if (!narrowBits(type, side[i], bits))
        return false;
      std::memcpy(at, &bits, sizeof bits);
    }
  }
  Record *slotInFile = reserveSlot();
  if (!slotInFile)
    return true;
  commit(*slotInFile, rec);
  endRecord(slotInFile, false);
  return true;
}

} // namespace

bool holdInputs(const Record &call, const void *input) {
  if (detail::resultLimit > 0 || !isCountReduction(call) ||
      call.count > format::kPackedMaxElements || !input || memoryKind(input) != MemoryKind::Host)
      [[unlikely]]
    return false;
  auto type = static_cast<DataType>(call.dataType);
  for (uint64_t i = 0; i < call.count; ++i)
    if (!readElement(input, i, type, heldInputs[i]))
      return false;
  heldCall = &call;
  return true;
}

void publishHeld(const Record &call, const void *output) {
  heldCall = nullptr;
  int n = static_cast<int>(call.count);
  double outputs[format::kPackedMaxElements];
  auto type = static_cast<DataType>(call.dataType);
  bool haveOutputs = output != nullptr;
  for (int i = 0; haveOutputs && i < n; ++i)
    haveOutputs = readElement(output, static_cast<uint64_t>(i), type, outputs[i]);
  const double *out = haveOutputs ? outputs : nullptr;
  int values = n * (haveOutputs ? 2 : 1);
  // Narrow slots first (eight of them), wide where the values fit four; else inputs and outputs
  // in a record each (wide: at most four values).
  if (packValues(call, n, heldInputs, out, true))
    return;
  if (values <= 4 && packValues(call, n, heldInputs, out, false))
    return;
  packValues(call, n, heldInputs, nullptr, false);
  if (out)
    packValues(call, n, nullptr, out, false);
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
    Record *r = beginRecord(Kind::ValueCapture);
    if (!r)
      return;
    r->commId = call.commId;
    r->commRank = call.commRank;
    r->setSeqThread(call.seq(), call.thread());
    r->window = call.window;
    r->count = i;
    r->peer = static_cast<int32_t>(elements);
    r->dataType = call.dataType;
    r->setAuxDouble(value);
    r->flags = static_cast<uint8_t>((output ? format::kFlagCaptureOutput : 0) |
                                    (integral(type) ? format::kFlagIntegral : 0) |
                                    (call.flags & format::kFlagNccl) | extraFlags);
    publish(r);
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
