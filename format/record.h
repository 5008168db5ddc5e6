// The collcheck trace format, version 4: one file per traced process, a 4096-byte header followed
// by 64-byte records. Documented in docs/trace-format.md; this header is the normative layout.
// Depends on nothing but the C++ standard library, so the preload library, the analyzer and the
// benchmarks share it.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace collcheck::format {

inline constexpr char kMagic[8] = {'C', 'O', 'L', 'L', 'C', 'H', 'K', '\0'};
inline constexpr uint32_t kVersion = 4;
// The oldest version readers accept: version 1 has no CapturedValues records, only ValueCapture
// ones; version 2 has no call sites (bytes 2..3 of every record hold the NCCL group ordinal);
// up to version 3, flag bits 5 and 6 of value records meant something else
// (kFlagsBefore4CaptureOutput, kFlagsBefore4Integral). Otherwise they are the same.
inline constexpr uint32_t kOldestVersion = 1;
inline constexpr uint32_t kHeaderSize = 4096;
inline constexpr uint32_t kRecordSize = 64;
inline constexpr uint32_t kEndianTag = 0x01020304;
// Readers reject headers claiming more ranks: a corrupt header, not a job (2,097,152 ranks is over
// three times the largest MPI jobs run, and it bounds the per-rank tables the analyzer builds).
inline constexpr int32_t kMaxWorldSize = 1 << 21;
inline constexpr const char *kFileSuffix = ".cctrace";

enum class Kind : uint8_t {
#define X(name, text, category) name,
#include "format/kinds.def"
#undef X
  Count
};

enum class Category : uint8_t { Collective, PointToPoint, Meta };

std::string_view kindName(Kind kind);
Category kindCategory(Kind kind);
inline bool isSequenced(Kind kind) { return kindCategory(kind) != Category::Meta; }
inline bool isKnownKind(uint8_t raw) { return raw < static_cast<uint8_t>(Kind::Count); }
// By a record's raw kind, for the readers' inner loops: the collectives are the kinds before Send
// and the neighborhood ones appended after the meta kinds (kinds.def); the calls, which take a
// sequence number on their communicator, are those and Send and Recv.
inline bool isCollectiveKind(uint8_t raw) {
  return raw < static_cast<uint8_t>(Kind::Send) ||
         (raw >= static_cast<uint8_t>(Kind::NeighborAllGather) &&
          raw <= static_cast<uint8_t>(Kind::NeighborAllToAllw));
}
inline bool isCallKind(uint8_t raw) {
  return raw <= static_cast<uint8_t>(Kind::Recv) || isCollectiveKind(raw);
}

// Element datatypes of MPI and NCCL mapped to one vocabulary, so that a signature compares equal
// whichever API issued it. Values are part of the format: append only.
enum class DataType : uint8_t {
  None = 0,
  Int8,
  Uint8,
  Int16,
  Uint16,
  Int32,
  Uint32,
  Int64,
  Uint64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  LongDouble,
  Float8E4M3,
  Float8E5M2,
  Byte,    // MPI_BYTE, MPI_PACKED
  Char,    // MPI_CHAR (character data, distinct from Int8 in MPI's type matching)
  Bool,    // MPI_C_BOOL, MPI_CXX_BOOL
  Pair,    // MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_2INT ... (MAXLOC/MINLOC pairs)
  Derived, // an MPI derived type whose signature is not known: Record::aux its size (kFlagDerived)
  Unknown,
  // Added after Unknown, so that the values before keep their meaning in older traces.
  Complex32,   // MPI_C_FLOAT_COMPLEX, MPI_CXX_FLOAT_COMPLEX, MPI_COMPLEX: two float32
  Complex64,   // MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX: two float64
  ComplexLong, // MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX: two long doubles
  // Added after ComplexLong. A reader that predates them names them "invalid".
  Mixed,   // an MPI derived type of several basic types, by its signature (kFlagDerived below)
  Invalid, // a handle MPI rejected as a datatype (MPI_DATATYPE_NULL, a freed type)
  Count
};
std::string_view dataTypeName(DataType type);
// Bytes of one element; 0 where it depends (Derived, Unknown, Pair, Mixed, Invalid).
uint32_t dataTypeSize(DataType type);

enum class ReduceOp : uint8_t {
  None = 0,
  Sum,
  Prod,
  Max,
  Min,
  Avg,       // ncclAvg: sum then divide by the communicator size
  PreMulSum, // ncclRedOpCreatePreMulSum: multiply by a scalar, then sum (scalar in Record::aux)
  LogicalAnd,
  BitwiseAnd,
  LogicalOr,
  BitwiseOr,
  LogicalXor,
  BitwiseXor,
  MaxLoc,
  MinLoc,
  Replace,
  NoOp,
  User, // MPI_Op_create or an NCCL op the tracer did not see created
  Count
};
std::string_view reduceOpName(ReduceOp op);

// How a communicator came to be (Record::op of a CommCreate record) or went away (CommRelease).
enum class CommOrigin : uint8_t {
  World = 0,
  Self,
  Dup,
  Split,
  SplitType,
  Create,
  CreateGroup,
  Unknown, // first seen in a call, created by a function the tracer does not wrap
  NcclInitRank,
  NcclInitAll,
  NcclSplit,
  NcclShrink,
  Count
};
std::string_view commOriginName(CommOrigin origin);

enum class CommReleaseHow : uint8_t {
  Free = 0,
  NcclDestroy,
  NcclAbort,
  NcclFinalize,
  Disconnect, // MPI_Comm_disconnect
  Count
};
std::string_view commReleaseName(CommReleaseHow how);

// How the local loss was normalized before the gradient reduction (Normalization records, op).
enum class LossNormalization : uint8_t {
  Unknown = 0,
  LocalMean,  // divided by this rank's valid count n_r
  GlobalMean, // divided by the global count N
  Sum,        // not divided
  Multiplier, // multiplied by an explicit factor (Record::aux, double)
  Count
};
std::string_view lossNormalizationName(LossNormalization n);

// Record::flags bits. From version 4 each bit means one thing on every record kind.
enum : uint8_t {
  kFlagNccl = 1u << 0,          // issued through the NCCL API (else MPI)
  kFlagNonBlocking = 1u << 1,   // MPI_I* form, recorded when issued
  kFlagInPlace = 1u << 2,       // MPI_IN_PLACE or NCCL sendbuff == recvbuff
  kFlagDerived = 1u << 3,       // an MPI derived datatype: see derivedFactor() for the encoding
  kFlagScalarUnknown = 1u << 4, // PreMulSum scalar lives on the device: not recorded
  kFlagIntercomm = 1u << 5,     // a sequenced MPI call on an intercommunicator: its root and its
                                // count totals speak of the other group
  kFlagPersistent = 1u << 6,    // a persistent collective's initialization (MPI_<name>_init)
  kFlagDeviceBuffer = 1u << 7,  // ValueCapture: copied from device memory
};
// Up to version 3, bits 5 and 6 of value records (ValueCapture, CapturedValues) meant "an output
// value" and "an integer type". Version 4 says the side in ValueCapture's `op` (kPackedInputs or
// kPackedOutputs, as CapturedValues does) and leaves the type to `dataType`.
inline constexpr uint8_t kFlagsBefore4CaptureOutput = 1u << 5;
inline constexpr uint8_t kFlagsBefore4Integral = 1u << 6;
inline constexpr bool isValueKind(uint8_t kind) {
  return kind == static_cast<uint8_t>(Kind::ValueCapture) ||
         kind == static_cast<uint8_t>(Kind::CapturedValues);
}
// The flags of a record with one meaning per bit, whatever version wrote it: the old meanings of
// bits 5 and 6 on value records are dropped (capturedValues() reads the side either way).
inline constexpr uint8_t recordFlags(uint8_t kind, uint8_t flags, uint32_t version) {
  return version < 4 && isValueKind(kind)
             ? static_cast<uint8_t>(flags & ~(kFlagsBefore4CaptureOutput | kFlagsBefore4Integral))
             : flags;
}

// An MPI derived datatype (kFlagDerived) is recorded by its type signature, the sequence of basic
// types it stands for, as MPI matches it. The signature of one item is u^k, where u is the
// shortest sequence it repeats (its unit); a call's count then counts units, so that 1 item of
// MPI_Type_contiguous(4, MPI_INT) and 4 MPI_INT are both 4 units of int32. By dataType:
// - a basic type (homogeneous signature, u = one element): count in elements of that type; aux,
//   on kinds whose table entry gives it no other use, the elements per item (k);
// - Mixed (u of several types): count in units; aux, on those kinds, packed by derivedMixedAux:
//   bits 0..31 a hash of u (types and run lengths), 32..47 units per item (k), 48..63 the bytes
//   of u (0 where more than 65535);
// - Derived: the signature is not known (tracers before signatures, a type beyond what the tracer
//   flattens): count in items; aux, on those kinds, the type's size in bytes.
// The kinds whose aux counts a total (gatherv, scatterv, allgatherv, alltoallv, MPI's
// reduce_scatter) keep it for the total, in the same units as count.
inline constexpr uint64_t derivedMixedAux(uint32_t unitHash, uint64_t unitsPerItem,
                                          uint64_t unitBytes) {
  return uint64_t{unitHash} | (unitsPerItem & 0xffff) << 32 |
         (unitBytes <= 0xffff ? unitBytes : 0) << 48;
}
inline constexpr uint32_t derivedMixedHash(uint64_t aux) { return static_cast<uint32_t>(aux); }
inline constexpr uint64_t derivedMixedUnitsPerItem(uint64_t aux) { return (aux >> 32) & 0xffff; }
inline constexpr uint64_t derivedMixedUnitBytes(uint64_t aux) { return aux >> 48; }
// Units per item of a derived type recorded as (dataType, aux): what a count of items is
// multiplied by to give the record's count (1 for Derived, counted in items).
inline constexpr uint64_t derivedFactor(DataType type, uint64_t aux) {
  return type == DataType::Derived ? 1
         : type == DataType::Mixed ? derivedMixedUnitsPerItem(aux)
                                   : aux;
}

// Record::duration: written once when the call returns. Zero: it never returned (the process was
// stuck in it or died in it). Otherwise bits 0..30 hold the duration in timestamp-counter ticks
// divided by 16, plus one, saturating at kDurationSaturated (about 11 s at 3 GHz), and bit 31 says
// the call returned an error. Ticks, not nanoseconds, so the hot path has no division;
// durationNanos() converts with the file's calibration.
inline constexpr uint32_t kDurationFailedBit = 0x80000000u;
inline constexpr uint32_t kDurationSaturated = 0x7fffffffu;
inline constexpr int kDurationShift = 4;

// One record: 64 bytes, little-endian, naturally aligned. Field meaning per kind in
// docs/trace-format.md. `check` is written last with a release store: zero means "reserved, not
// published"; otherwise it is a 16-bit hash of bytes 2..3 and 8..63 with the low bit forced to 1,
// so a torn or corrupted record is detected rather than misread. `duration` is the only field
// written after publication (when the call returns); zero means the call had not returned.
struct Record {
  uint16_t check;
  // Version 3: on a call (isCallKind) the call-site index (CallSite records; 0: none), elsewhere
  // the NCCL group ordinal on this thread, mod 65536 (0: not inside a group). Versions 1 and 2:
  // the group ordinal on every record. Read it with callSite() / groupOrdinal().
  uint16_t group;
  uint32_t duration; // see kDurationFailedBit: 0 = did not return (hang or crash)
  uint64_t commId;
  uint64_t seqThread; // bits 0..47 sequence number on commId, bits 48..63 thread index
  uint64_t tscStart;  // timestamp counter at entry (see FileHeader calibration)
  uint64_t count;     // element count (per kind: docs/trace-format.md)
  uint64_t aux;       // second count, PreMulSum scalar (double bits), parent comm id, ...
  int32_t commRank;   // rank of the caller in commId
  int32_t peer;       // root or peer rank in commId; -1 when none
  uint32_t window;    // optimizer update window (0 until the first WindowBegin)
  uint8_t kind;
  uint8_t dataType;
  uint8_t op;
  uint8_t flags;

  static constexpr uint64_t kSeqMask = (uint64_t{1} << 48) - 1;
  uint64_t seq() const { return seqThread & kSeqMask; }
  uint16_t thread() const { return static_cast<uint16_t>(seqThread >> 48); }
  void setSeqThread(uint64_t seq, uint16_t thread) {
    seqThread = (seq & kSeqMask) | (uint64_t{thread} << 48);
  }
  double auxDouble() const {
    double d;
    std::memcpy(&d, &aux, sizeof d);
    return d;
  }
  void setAuxDouble(double d) { std::memcpy(&aux, &d, sizeof d); }
};
static_assert(sizeof(Record) == kRecordSize, "a record is 64 bytes");
static_assert(offsetof(Record, kind) == 60);

// MPI's fixed-count gather, scatter, allgather and alltoall pass a count and a type for each side
// of the exchange, and MPI has every pair's type signatures match. The record's count is one side
// (docs/trace-format.md); `op`, which these kinds have no other use for, says what was recorded of
// the other side's count per peer, converted into the record's units (significant only at the root
// for gather's receive count and scatter's send count; not recorded for the side MPI_IN_PLACE
// ignores). Where it equals `count`, the usual case, aux keeps its meaning (the derived type);
// where it differs, aux holds it and no longer describes a derived type. Writers before this leave
// `op` 0: not recorded.
enum class OtherSide : uint8_t {
  NotRecorded = 0,
  InAux = 1, // aux: the other side's count per peer
  SameAsCount = 2,
};
// Whether a record's `op` carries OtherSide: MPI's gather, scatter, allgather and alltoall.
inline bool carriesOtherSide(const Record &r) {
  return !(r.flags & kFlagNccl) && (r.kind == static_cast<uint8_t>(Kind::Gather) ||
                                    r.kind == static_cast<uint8_t>(Kind::Scatter) ||
                                    r.kind == static_cast<uint8_t>(Kind::AllGather) ||
                                    r.kind == static_cast<uint8_t>(Kind::AllToAll));
}
// The other side's count per peer, in the record's units, into `out`; false where not recorded.
inline bool otherSideCount(const Record &r, uint64_t &out) {
  if (!carriesOtherSide(r))
    return false;
  if (r.op == static_cast<uint8_t>(OtherSide::SameAsCount))
    out = r.count;
  else if (r.op == static_cast<uint8_t>(OtherSide::InAux))
    out = r.aux;
  else
    return false;
  return true;
}

// --- call sites (version 3) ---------------------------------------------------------------------
// A call records where the application made it as a 16-bit index into its file's call-site table:
// one CallSite record per distinct return address (written before the first call that uses it),
// and the module map the addresses fall in (one Module record per loaded object, its path and
// build id in ModuleText records). Index 0: no site recorded; kSiteOverflow: the table was full.
inline constexpr uint16_t kNoSite = 0;
inline constexpr uint16_t kSiteOverflow = 0xffff;
inline constexpr uint16_t kMaxSites = 0xfffe;
// The site of a call record, kNoSite for other kinds and for traces before version 3.
inline uint16_t callSite(const Record &r, uint32_t version) {
  return version >= 3 && isCallKind(r.kind) ? r.group : kNoSite;
}
// The NCCL group ordinal a record carries (0: none). Version 3 call records carry their site
// there instead: a call's group is that of its thread's GroupStart before it.
inline uint16_t groupOrdinal(const Record &r, uint32_t version) {
  return version >= 3 && isCallKind(r.kind) ? 0 : r.group;
}
// CallSite: group = site index, commId = the return address, count = its offset in the module,
// peer = module index (-1: in no known module), no timestamp; where the calling function keeps a
// frame pointer, its own return address: aux = the address (0: none), tscStart = its offset in its
// module, window = that module's index + 1 (0: in none).
// Module: commRank = module index, commId = load address (the bias ELF addresses are relative
// to), count = bytes from the lowest to the highest loadable segment end, peer = path length,
// window = build-id length (0: none), tscStart = the lowest segment's address relative to the
// load address. ModuleText: commRank = module index, peer = offset in the module's text (build id
// bytes, then the path), window = bytes here (at most kModuleTextBytes), bytes 8..47 the text.
//
// Version 4 adds source sites: a call made through a language runtime (Python) names the line of
// the program's source that made it. The Module record of a source function has `op` =
// kModuleSource, no addresses, and its text is the function's name (in place of the build id;
// `window` its length) then the file's path; a CallSite record with `op` = kSiteSourceLine names a
// line of it: count = the line, peer = that module's index, commId 0.
inline constexpr uint8_t kModuleSource = 1;
inline constexpr uint8_t kSiteSourceLine = 1;
inline constexpr size_t kModuleTextOffset = 8;
inline constexpr uint32_t kModuleTextBytes = 40;
inline constexpr uint32_t kMaxModuleText = 4096 + 64;

// An MPI all-reduce that is a one-element count reduction holds its own values (version 4), where
// the writer measures no durations: `peer` = kPeerHoldsValues (an all-reduce has no root), `aux`
// the input (double bits), and `duration`, written when the call returns, bits 0..30: 1 returned
// with its output elsewhere (a CapturedValues record, or none), n >= 2 the output n - 2 (a
// non-negative integer below 2^31 - 2); bit 31 failed, as on any call. No record beside the call.
inline constexpr int32_t kPeerHoldsValues = -2;
inline constexpr uint32_t kHeldOutputBias = 2;
inline bool holdsValues(const Record &r) {
  return r.kind == static_cast<uint8_t>(Kind::AllReduce) && r.peer == kPeerHoldsValues &&
         !(r.flags & kFlagNccl);
}

inline bool returned(const Record &r) { return r.duration != 0; }
// Whether the caller waits in the call until its peers arrive: NCCL calls and MPI's non-blocking
// ones return once enqueued, so not being back from one says nothing.
inline bool blocksCaller(const Record &r) { return !(r.flags & (kFlagNccl | kFlagNonBlocking)); }
inline bool failed(const Record &r) { return (r.duration & kDurationFailedBit) != 0; }
// Duration in timestamp-counter ticks (a multiple of 16); 0 when the call did not return.
inline uint64_t durationTicks(const Record &r) {
  if (holdsValues(r)) // its duration holds its output: the writer measured no time
    return 0;
  return returned(r) ? uint64_t((r.duration & kDurationSaturated) - 1) << kDurationShift : 0;
}

// Payload view of a CommMembers record: up to kMembersPerRecord world ranks of the communicator,
// starting at member index seq(). The payload overlays bytes 24..59 (tscStart through window), so
// a CommMembers record has no timestamp, count or window; the member total is the count of the
// CommCreate record before it, and unused entries are -1.
inline constexpr int kMembersPerRecord = 9;

inline constexpr size_t kMembersOffset = 24;
static_assert(kMembersOffset + kMembersPerRecord * sizeof(int32_t) <= offsetof(Record, kind));
int32_t memberAt(const Record &r, int i);
void setMemberAt(Record &r, int i, int32_t worldRank);

// Payload of a CapturedValues record (version 2): a count reduction's values, in one record
// instead of one ValueCapture record per value. commId, seq, thread, commRank and dataType are
// the call's; the payload overlays bytes 24..47 and 52..59 (timestamp, count, aux and window), so
// it has none of those. `op` says what it holds: bits 0..2 the element count (1..4), bit 3 inputs
// present, bit 4 outputs present, bit 5 narrow slots, bit 6 the output in `duration`. Slots hold
// the inputs, then the outputs: wide slots (4) a double each; narrow slots (8) 4 bytes each: a
// float for float32, a uint32 for uint32, else an int32 (an integer value that fits one).
// Writers put a call's inputs and outputs into one record, written when the call returns, where
// they fit it (every value in a narrow slot, or at most 4 in wide ones); a call that never returns
// then has none. Otherwise (3 or 4 elements that need wide slots) the inputs are written before the
// call, so that a call that never returns keeps them, and the outputs into a record of their own
// when it returns. The version-4 writers of 2026-12-07 published the inputs before every call and
// stored a one-element output that is a non-negative integer below 2^31 in that record's
// `duration` when the call returned (bit 31 set: written; bits 0..30 the value; op bit 6): read
// still, written no more.
inline constexpr uint8_t kPackedElementsMask = 0x7;
inline constexpr uint8_t kPackedInputs = 1u << 3;
inline constexpr uint8_t kPackedOutputs = 1u << 4;
inline constexpr uint8_t kPackedNarrow = 1u << 5;
inline constexpr uint8_t kPackedOutputInDuration = 1u << 6;
inline constexpr uint32_t kDurationOutputWritten = 0x80000000u;
inline constexpr int kPackedMaxElements = 4;
inline size_t packedSlotOffset(int slot, bool narrow) {
  size_t offset = 24 + static_cast<size_t>(slot) * (narrow ? 4 : 8);
  return offset >= offsetof(Record, commRank) ? offset + 4 : offset; // commRank stays the call's
}

// Whether a record's tscStart (and duration) are times: not where a payload overlays them.
inline bool hasTimestamp(uint8_t kind) {
  return kind != static_cast<uint8_t>(Kind::CommMembers) &&
         kind != static_cast<uint8_t>(Kind::CapturedValues) &&
         kind != static_cast<uint8_t>(Kind::CallSite) &&
         kind != static_cast<uint8_t>(Kind::Module) &&
         kind != static_cast<uint8_t>(Kind::ModuleText);
}

// One captured value, from a ValueCapture or a CapturedValues record.
struct CapturedValue {
  uint32_t index;    // element index in the call's buffer
  uint32_t elements; // elements captured of that buffer
  bool output;       // the call's result (else its input)
  double value;
};
// The values a ValueCapture or CapturedValues record, or a call that holds its values, holds, into
// `out`; returns how many (0 for other records).
inline int capturedValues(const Record &r, CapturedValue out[2 * kPackedMaxElements]) {
  if (holdsValues(r)) {
    out[0] = {0, 1, false, r.auxDouble()};
    uint32_t d = std::atomic_ref<const uint32_t>(r.duration).load(std::memory_order_relaxed) &
                 kDurationSaturated;
    if (d < kHeldOutputBias)
      return 1;
    out[1] = {0, 1, true, static_cast<double>(d - kHeldOutputBias)};
    return 2;
  }
  if (r.kind == static_cast<uint8_t>(Kind::ValueCapture)) {
    // Writers before version 4 leave `op` 0 and say the side in flag bit 5.
    bool output = r.op ? (r.op & kPackedOutputs) != 0 : (r.flags & kFlagsBefore4CaptureOutput) != 0;
    out[0] = {static_cast<uint32_t>(r.count), r.peer > 0 ? static_cast<uint32_t>(r.peer) : 1,
              output, r.auxDouble()};
    return 1;
  }
  if (r.kind != static_cast<uint8_t>(Kind::CapturedValues))
    return 0;
  int n = r.op & kPackedElementsMask;
  if (n < 1 || n > kPackedMaxElements)
    return 0;
  bool narrow = (r.op & kPackedNarrow) != 0;
  int found = 0, slot = 0;
  for (int side = 0; side < 2; ++side) {
    if (!(r.op & (side ? kPackedOutputs : kPackedInputs)))
      continue;
    for (int i = 0; i < n; ++i, ++slot) {
      const char *at = reinterpret_cast<const char *>(&r) + packedSlotOffset(slot, narrow);
      double v;
      if (!narrow) {
        std::memcpy(&v, at, sizeof v);
      } else if (r.dataType == static_cast<uint8_t>(DataType::Float32)) {
        float f;
        std::memcpy(&f, at, sizeof f);
        v = f;
      } else if (r.dataType == static_cast<uint8_t>(DataType::Uint32)) {
        uint32_t u;
        std::memcpy(&u, at, sizeof u);
        v = u;
      } else {
        int32_t k;
        std::memcpy(&k, at, sizeof k);
        v = k;
      }
      out[found++] = {static_cast<uint32_t>(i), static_cast<uint32_t>(n), side == 1, v};
    }
  }
  if ((r.op & kPackedOutputInDuration) && n == 1) {
    uint32_t d = std::atomic_ref<const uint32_t>(r.duration).load(std::memory_order_relaxed);
    if (d & kDurationOutputWritten)
      out[found++] = {0, 1, true, static_cast<double>(d & ~kDurationOutputWritten)};
  }
  return found;
}

inline uint16_t recordHash(const Record &r) {
  // Covers bytes 2..3 (group) and 8..63; `check` itself and the mutable duration are excluded. The
  // seven 64-bit words of bytes 8..63 are rotated by distinct amounts and xor-ed: any single
  // flipped bit, and any record written only in part, changes the result. The words are assembled
  // from the fields (not loaded from memory) so that, on the hot path, no load spans several
  // narrower stores.
  uint64_t rankPeer = uint64_t(uint32_t(r.commRank)) | uint64_t(uint32_t(r.peer)) << 32;
  uint64_t tail = uint64_t(r.window) | uint64_t(r.kind) << 32 | uint64_t(r.dataType) << 40 |
                  uint64_t(r.op) << 48 | uint64_t(r.flags) << 56;
  uint64_t h =
      (r.commId ^ std::rotl(r.seqThread, 9) ^ std::rotl(r.tscStart, 18) ^ std::rotl(r.count, 27)) ^
      (std::rotl(r.aux, 36) ^ std::rotl(rankPeer, 45) ^ std::rotl(tail, 54)) ^
      (uint64_t{r.group} * 0x9e3779b97f4a7c15ull);
  h ^= h >> 32;
  h ^= h >> 16;
  return static_cast<uint16_t>((h & 0xffff) | 1u);
}
inline uint16_t loadCheck(const Record &r) {
  return std::atomic_ref<const uint16_t>(r.check).load(std::memory_order_acquire);
}
// Publishes a fully written record: computes its check and stores it with release order.
inline void publish(Record &r) {
  std::atomic_ref<uint16_t>(r.check).store(recordHash(r), std::memory_order_release);
}
inline void storeDuration(Record &r, uint64_t ticks, bool callFailed) {
  uint64_t units = ticks >> kDurationShift;
  uint32_t value =
      units >= kDurationSaturated - 1 ? kDurationSaturated : static_cast<uint32_t>(units + 1);
  if (callFailed)
    value |= kDurationFailedBit;
  std::atomic_ref<uint32_t>(r.duration).store(value, std::memory_order_relaxed);
}

// The file header. Fields after the marked line may be updated while the process runs (world rank
// learnt at MPI_Init, library versions, calibration refinements, counters); all are fixed-size.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t headerSize;
  uint32_t recordSize;
  uint32_t endianTag;
  int32_t pid;
  uint32_t flags;              // kHeader* bits
  uint64_t createdRealtimeNs;  // CLOCK_REALTIME at creation
  uint64_t createdMonotonicNs; // CLOCK_MONOTONIC at creation
  uint64_t tscAtCreate;        // timestamp counter at creation
  char host[64];
  char jobId[64]; // COLLCHECK_JOB_ID, else the launcher's job id (SLURM, PMIx, Open MPI)
  char tracerVersion[32];
  char command[256]; // argv[0] and the first arguments, truncated
  // --- mutable while the process runs ---
  double tscTicksPerNs;    // 1.0 where the counter is CLOCK_MONOTONIC itself
  uint64_t tscCalibration; // a later (tsc, monotonic) pair that refines tscTicksPerNs
  uint64_t monoCalibration;
  int32_t worldRank;       // -1 until known
  int32_t worldSize;       // -1 until known
  int32_t ncclVersion;     // ncclGetVersion, 0 when NCCL is not used
  uint32_t droppedRecords; // records lost to a full disk or a failed extension
  char mpiVersion[256];    // MPI_Get_library_version
  uint32_t threadLevel;    // MPI thread level provided, 0xffffffff when MPI_Init was not called
  uint32_t finished;       // 1 after a clean exit (MPI_Finalize or process exit)
  // The slots handed out when the trace was last marked finished: the rest of the file is its
  // preallocated, never-written end. 0 where unknown (not finished, or an older writer).
  uint64_t slotsAtFinish;
};
static_assert(sizeof(FileHeader) <= kHeaderSize);

// FileHeader::flags bits.
enum : uint32_t {
  // Record::duration holds measured durations (COLLCHECK_DURATIONS=1). Without it the tracer reads
  // the clock once per call: a returned call is marked with a zero duration.
  kHeaderDurations = 1u << 0,
};

// Converts a record's timestamp to nanoseconds since the file was created.
double nanosSinceCreate(const FileHeader &h, uint64_t tsc);
// The duration of a returned call in nanoseconds (0 when it did not return).
double durationNanos(const FileHeader &h, const Record &r);

} // namespace collcheck::format
