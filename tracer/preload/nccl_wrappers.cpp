// The exported nccl* wrappers. The sequenced operations are generated from nccl_collectives.def;
// communicator life cycle, groups and reduction operators are written out. Forwarding goes to the
// next definition of the same function, or to NCCL's pnccl* entry point, wherever the library was
// loaded (also with dlopen(RTLD_LOCAL)).
#include "tracer/preload/call_site.h"
#include "tracer/preload/capture.h"
#include "tracer/preload/core.h"
#include "tracer/preload/resolve.h"

#include <nccl.h>

#include <atomic>
#include <cstring>
#include <vector>

using namespace collcheck::tracer;
using collcheck::format::CommOrigin;
using collcheck::format::DataType;
using collcheck::format::ReduceOp;
namespace format = collcheck::format;

#define COLLCHECK_NCCL_REAL(name)                                                                  \
  static RealFunction<decltype(&name)> resolved(#name, "p" #name);                                 \
  const auto real = resolved.get();                                                                \
  if (!real) [[unlikely]] {                                                                        \
    warn(#name ": the real NCCL library was not found in this process");                           \
    return ncclSystemError;                                                                        \
  }

namespace {

DataType mapDataType(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
    return DataType::Int8;
  case ncclUint8:
    return DataType::Uint8;
  case ncclInt32:
    return DataType::Int32;
  case ncclUint32:
    return DataType::Uint32;
  case ncclInt64:
    return DataType::Int64;
  case ncclUint64:
    return DataType::Uint64;
  case ncclFloat16:
    return DataType::Float16;
  case ncclFloat32:
    return DataType::Float32;
  case ncclFloat64:
    return DataType::Float64;
  case ncclBfloat16:
    return DataType::BFloat16;
  case ncclFloat8e4m3:
    return DataType::Float8E4M3;
  case ncclFloat8e5m2:
    return DataType::Float8E5M2;
  default:
    return DataType::Unknown;
  }
}

double halfToDouble(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  double mantissa = bits & 0x3ff;
  double value = exponent == 0 ? mantissa / 1024.0 * 0x1p-14
                               : (1.0 + mantissa / 1024.0) * __builtin_ldexp(1.0, exponent - 15);
  if (exponent == 0x1f)
    value = mantissa == 0 ? __builtin_inf() : __builtin_nan("");
  return bits & 0x8000 ? -value : value;
}

// A host-resident PreMulSum scalar as a double; false for types whose scalar is not recorded.
bool scalarValue(const void *scalar, ncclDataType_t type, double &out) {
  switch (type) {
  case ncclFloat64:
    std::memcpy(&out, scalar, sizeof(double));
    return true;
  case ncclFloat32: {
    float f;
    std::memcpy(&f, scalar, sizeof f);
    out = f;
    return true;
  }
  case ncclFloat16: {
    uint16_t bits;
    std::memcpy(&bits, scalar, sizeof bits);
    out = halfToDouble(bits);
    return true;
  }
  case ncclBfloat16: {
    uint16_t bits;
    std::memcpy(&bits, scalar, sizeof bits);
    uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &wide, sizeof f);
    out = f;
    return true;
  }
  case ncclInt32:
  case ncclUint32:
  case ncclInt64:
  case ncclUint64:
  case ncclInt8:
  case ncclUint8: {
    int64_t v = 0;
    size_t size = type == ncclInt32 || type == ncclUint32 ? 4
                  : type == ncclInt8 || type == ncclUint8 ? 1
                                                          : 8;
    std::memcpy(&v, scalar, size);
    out = static_cast<double>(v);
    return true;
  }
  default:
    return false;
  }
}

// PreMulSum operators per (communicator, op value): the scalar each collective using it is
// recorded with. Written when an operator is created or destroyed (slow path), read lock-free. A
// slot is claimed (Filling), filled, then published (Ready); a destroyed operator's slot is left
// Dead, which lookups pass over and creations reuse, so a job that makes and destroys operators
// for ever never fills the table.
constexpr size_t kOpSlots = 4096;
constexpr size_t kOpProbes = 64;
enum OpSlotState : uint8_t { kOpEmpty, kOpFilling, kOpReady, kOpDead };
struct OpSlot {
  std::atomic<uint8_t> state{kOpEmpty};
  std::atomic<uint64_t> key{0};
  std::atomic<uint64_t> scalarBits{0};
  std::atomic<bool> scalarKnown{false};
};
OpSlot premulOps[kOpSlots];

uint64_t opKey(ncclComm_t comm, ncclRedOp_t op) {
  return mix64(reinterpret_cast<uintptr_t>(comm)) ^ static_cast<uint64_t>(op);
}

OpSlot *findOp(ncclComm_t comm, ncclRedOp_t op) {
  uint64_t key = opKey(comm, op);
  size_t i = key & (kOpSlots - 1);
  for (size_t probe = 0; probe < kOpProbes; ++probe, i = (i + 1) & (kOpSlots - 1)) {
    uint8_t state = premulOps[i].state.load(std::memory_order_acquire);
    if (state == kOpEmpty)
      return nullptr;
    if (state == kOpReady && premulOps[i].key.load(std::memory_order_relaxed) == key)
      return &premulOps[i];
  }
  return nullptr;
}

void rememberOp(ncclComm_t comm, ncclRedOp_t op, bool known, double scalar) {
  uint64_t key = opKey(comm, op);
  uint64_t bits;
  std::memcpy(&bits, &scalar, sizeof bits);
  // NCCL hands out an op value again once it was destroyed; one not destroyed through the tracer
  // (made before it was loaded) may still hold a slot: it is refilled in place.
  OpSlot *slot = findOp(comm, op);
  size_t i = key & (kOpSlots - 1);
  for (size_t probe = 0; !slot && probe < kOpProbes; ++probe, i = (i + 1) & (kOpSlots - 1)) {
    uint8_t state = premulOps[i].state.load(std::memory_order_acquire);
    if ((state == kOpEmpty || state == kOpDead) &&
        premulOps[i].state.compare_exchange_strong(state, kOpFilling))
      slot = &premulOps[i];
  }
  if (!slot)
    return; // full: its collectives are recorded as PreMulSum with the scalar unknown
  slot->state.store(kOpFilling, std::memory_order_relaxed);
  slot->key.store(key, std::memory_order_relaxed);
  slot->scalarBits.store(bits, std::memory_order_relaxed);
  slot->scalarKnown.store(known, std::memory_order_relaxed);
  slot->state.store(kOpReady, std::memory_order_release);
}

void forgetOp(ncclComm_t comm, ncclRedOp_t op) {
  if (OpSlot *slot = findOp(comm, op))
    slot->state.store(kOpDead, std::memory_order_release);
}

// In place, for the calls whose one buffer holds every rank's block (AllGather, ReduceScatter, and
// Gather and Scatter at the root): the other buffer is block `index` of it, `count` elements each.
void markBlockInPlace(Record &rec, const void *block, const void *whole, int64_t index,
                      size_t count, ncclDataType_t type) {
  uint32_t bytes = format::dataTypeSize(mapDataType(type));
  if (index >= 0 && block && whole && bytes &&
      static_cast<const char *>(block) ==
          static_cast<const char *>(whole) + static_cast<size_t>(index) * count * bytes)
    rec.flags |= format::kFlagInPlace;
}

void fillData(Record &rec, const void *sendbuff, const void *recvbuff, size_t count,
              ncclDataType_t type, int rootOrPeer) {
  rec.count = count;
  rec.dataType = static_cast<uint8_t>(mapDataType(type));
  rec.peer = rootOrPeer;
  rec.flags |= format::kFlagNccl;
  if (sendbuff && sendbuff == recvbuff)
    rec.flags |= format::kFlagInPlace;
}

void fillReduction(Record &rec, ncclComm_t comm, const void *sendbuff, const void *recvbuff,
                   size_t count, ncclDataType_t type, ncclRedOp_t op, int root) {
  fillData(rec, sendbuff, recvbuff, count, type, root);
  switch (op) {
  case ncclSum:
    rec.op = static_cast<uint8_t>(ReduceOp::Sum);
    return;
  case ncclProd:
    rec.op = static_cast<uint8_t>(ReduceOp::Prod);
    return;
  case ncclMax:
    rec.op = static_cast<uint8_t>(ReduceOp::Max);
    return;
  case ncclMin:
    rec.op = static_cast<uint8_t>(ReduceOp::Min);
    return;
  case ncclAvg:
    rec.op = static_cast<uint8_t>(ReduceOp::Avg);
    return;
  default:
    break;
  }
  const OpSlot *slot = findOp(comm, op);
  if (!slot) {
    // Every op value past the built-in ones is a PreMulSum (NCCL makes no other kind), whether
    // its creation was seen or not: only its scalar is unknown here.
    bool created = static_cast<int>(op) >= static_cast<int>(ncclNumOps) &&
                   static_cast<int>(op) <= static_cast<int>(ncclMaxRedOp);
    rec.op = static_cast<uint8_t>(created ? ReduceOp::PreMulSum : ReduceOp::User);
    if (created)
      rec.flags |= format::kFlagScalarUnknown;
    else
      rec.aux = static_cast<uint64_t>(op);
    return;
  }
  rec.op = static_cast<uint8_t>(ReduceOp::PreMulSum);
  if (slot->scalarKnown.load(std::memory_order_relaxed))
    rec.aux = slot->scalarBits.load(std::memory_order_relaxed);
  else
    rec.flags |= format::kFlagScalarUnknown;
}

CommState *commOf(ncclComm_t comm) { return findComm(reinterpret_cast<uintptr_t>(comm)); }

void recordVersionOnce() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  static RealFunction<decltype(&ncclGetVersion)> getVersion("ncclGetVersion", "pncclGetVersion");
  int version = 0;
  if (auto fn = getVersion.get(); fn && fn(&version) == ncclSuccess)
    setNcclVersion(version);
}

void registerCreated(ncclComm_t created, uint64_t id, int rank, int size, uint64_t parentId,
                     CommOrigin origin, int64_t color, uint64_t ordinal,
                     std::span<const int32_t> members) {
  recordVersionOnce();
  if (CommState *state = registerComm(reinterpret_cast<uintptr_t>(created), id, rank, size))
    recordCommCreate(*state, parentId, origin, color, ordinal, members, format::kFlagNccl);
}

// Rank and size of a communicator made by split or shrink (-1 while it is still initializing).
void rankAndSize(ncclComm_t comm, int &rank, int &size) {
  static RealFunction<decltype(&ncclCommUserRank)> userRank("ncclCommUserRank",
                                                            "pncclCommUserRank");
  static RealFunction<decltype(&ncclCommCount)> count("ncclCommCount", "pncclCommCount");
  rank = size = -1;
  if (auto fn = userRank.get(); fn && fn(comm, &rank) != ncclSuccess)
    rank = -1;
  if (auto fn = count.get(); fn && fn(comm, &size) != ncclSuccess)
    size = -1;
}

Record *recordMeta(format::Kind kind) {
  Record rec = stampMeta(kind);
  rec.flags = format::kFlagNccl;
  return writeRecord(rec);
}

std::atomic<uint64_t> initAllOrdinal{0};

} // namespace

#define CAPTURING(input, output)                                                                   \
  do {                                                                                             \
    captureInput = (input);                                                                        \
    captureOutput = (output);                                                                      \
  } while (0)

#define NCCL_CALL(function, kind, params, args, fill)                                              \
  COLLCHECK_EXPORT ncclResult_t nccl##function params {                                            \
    COLLCHECK_NCCL_REAL(nccl##function)                                                            \
    CallScope scope;                                                                               \
    Record *record = scope.outermost() ? reserveSlot() : nullptr;                                  \
    const void *captureInput = nullptr, *captureOutput = nullptr;                                  \
    if (record) [[likely]] {                                                                       \
      setCaller(__builtin_return_address(0), COLLCHECK_CALLER_FRAME);                              \
      Record rec{};                                                                                \
      stamp(rec, format::Kind::kind, commOf(comm));                                                \
      rec.group = currentSite();                                                                   \
      fill;                                                                                        \
      commit(*record, rec);                                                                        \
      if (!capturesValues(rec)) [[likely]]                                                         \
        captureInput = captureOutput = nullptr;                                                    \
      else                                                                                         \
        captureValues(rec, captureInput, false, stream);                                           \
    }                                                                                              \
    ncclResult_t rc = real args;                                                                   \
    endRecord(record, rc != ncclSuccess && rc != ncclInProgress);                                  \
    /* Inside a group the operation runs at ncclGroupEnd: its output is not there yet. */          \
    if (captureOutput && rc == ncclSuccess && detail::groupDepth == 0)                             \
      captureValues(*record, captureOutput, true, stream);                                         \
    return rc;                                                                                     \
  }
#include "tracer/preload/nccl_collectives.def"
#undef NCCL_CALL

COLLCHECK_EXPORT ncclResult_t ncclGroupStart() {
  COLLCHECK_NCCL_REAL(ncclGroupStart)
  CallScope scope;
  Record *record = nullptr;
  if (scope.outermost()) {
    groupStart();
    record = recordMeta(format::Kind::GroupStart);
  }
  ncclResult_t rc = real();
  endRecord(record, rc != ncclSuccess);
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclGroupEnd() {
  COLLCHECK_NCCL_REAL(ncclGroupEnd)
  CallScope scope;
  Record *record = scope.outermost() ? recordMeta(format::Kind::GroupEnd) : nullptr;
  if (scope.outermost())
    groupEnd();
  ncclResult_t rc = real();
  endRecord(record, rc != ncclSuccess && rc != ncclInProgress);
  return rc;
}

namespace {

// The id every member of a communicator initialized from `uniqueId` computes alike.
uint64_t idFromUniqueId(const ncclUniqueId &uniqueId) {
  uint64_t h = hashBytes(&uniqueId, sizeof uniqueId, 0x6e63636c); // "nccl"
  return h == 0 ? 1 : h;
}

// A communicator made by an init call (complete, or still initializing in nonblocking mode).
bool initialized(ncclResult_t rc) { return rc == ncclSuccess || rc == ncclInProgress; }

// Registers a communicator from ncclCommInitRank*: NCCL tells only the caller's own world rank.
void recordInitialized(ncclComm_t comm, uint64_t id, int rank, int nranks) {
  int32_t self = worldRank();
  registerCreated(comm, id, rank, nranks, 0, CommOrigin::NcclInitRank, -1, 0,
                  std::span<const int32_t>(&self, 1));
}

} // namespace

COLLCHECK_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                               int rank) {
  COLLCHECK_NCCL_REAL(ncclCommInitRank)
  CallScope scope;
  ncclResult_t rc = real(comm, nranks, commId, rank);
  if (initialized(rc) && scope.outermost())
    recordInitialized(*comm, idFromUniqueId(commId), rank, nranks);
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                                     ncclUniqueId commId, int rank,
                                                     ncclConfig_t *config) {
  COLLCHECK_NCCL_REAL(ncclCommInitRankConfig)
  CallScope scope;
  ncclResult_t rc = real(comm, nranks, commId, rank, config);
  if (initialized(rc) && scope.outermost())
    recordInitialized(*comm, idFromUniqueId(commId), rank, nranks);
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                                       int nId, ncclUniqueId *commIds,
                                                       ncclConfig_t *config) {
  COLLCHECK_NCCL_REAL(ncclCommInitRankScalable)
  CallScope scope;
  ncclResult_t rc = real(newcomm, nranks, myrank, nId, commIds, config);
  if (initialized(rc) && scope.outermost() && nId > 0) {
    uint64_t id = hashBytes(commIds, sizeof(ncclUniqueId) * static_cast<size_t>(nId), 0x6e63636c);
    recordInitialized(*newcomm, id == 0 ? 1 : id, myrank, nranks);
  }
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  COLLCHECK_NCCL_REAL(ncclCommInitAll)
  CallScope scope;
  ncclResult_t rc = real(comms, ndev, devlist);
  if (rc == ncclSuccess && scope.outermost()) {
    // All ranks live in this process: the id only has to be unique, not agreed with anyone.
    int32_t self = worldRank();
    uint64_t id = childCommId(mix64(static_cast<uint64_t>(getpid())), initAllOrdinal.fetch_add(1),
                              CommOrigin::NcclInitAll, self, {});
    std::vector<int32_t> members(static_cast<size_t>(ndev), self);
    for (int i = 0; i < ndev; ++i)
      registerCreated(comms[i], id, i, ndev, 0, CommOrigin::NcclInitAll, -1, 0, members);
  }
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                            ncclComm_t *newcomm, ncclConfig_t *config) {
  COLLCHECK_NCCL_REAL(ncclCommSplit)
  CallScope scope;
  ncclResult_t rc = real(comm, color, key, newcomm, config);
  if (initialized(rc) && scope.outermost()) {
    if (CommState *parent = commOf(comm)) {
      uint64_t ordinal = parent->creations.fetch_add(1, std::memory_order_relaxed);
      if (newcomm && *newcomm) {
        int rank, size;
        rankAndSize(*newcomm, rank, size);
        int32_t self = worldRank();
        uint64_t id = childCommId(parent->id, ordinal, CommOrigin::NcclSplit, color, {});
        registerCreated(*newcomm, id, rank, size, parent->id, CommOrigin::NcclSplit, color, ordinal,
                        std::span<const int32_t>(&self, 1));
      }
    }
  }
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                             int excludeRanksCount, ncclComm_t *newcomm,
                                             ncclConfig_t *config, int shrinkFlags) {
  COLLCHECK_NCCL_REAL(ncclCommShrink)
  CallScope scope;
  ncclResult_t rc = real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  if (initialized(rc) && scope.outermost()) {
    if (CommState *parent = commOf(comm)) {
      uint64_t ordinal = parent->creations.fetch_add(1, std::memory_order_relaxed);
      if (newcomm && *newcomm) {
        int rank, size;
        rankAndSize(*newcomm, rank, size);
        int32_t self = worldRank();
        std::span<const int32_t> excluded(
            excludeRanksList, static_cast<size_t>(excludeRanksCount > 0 ? excludeRanksCount : 0));
        uint64_t id = childCommId(parent->id, ordinal, CommOrigin::NcclShrink, 0, excluded);
        registerCreated(*newcomm, id, rank, size, parent->id, CommOrigin::NcclShrink, -1, ordinal,
                        std::span<const int32_t>(&self, 1));
      }
    }
  }
  return rc;
}

#define COLLCHECK_NCCL_RELEASE(function, how, forget)                                              \
  COLLCHECK_EXPORT ncclResult_t nccl##function(ncclComm_t comm) {                                  \
    COLLCHECK_NCCL_REAL(nccl##function)                                                            \
    CallScope scope;                                                                               \
    if (scope.outermost())                                                                         \
      if (CommState *state = commOf(comm))                                                         \
        recordCommRelease(*state, format::CommReleaseHow::how, format::kFlagNccl);                 \
    ncclResult_t rc = real(comm);                                                                  \
    if (forget && scope.outermost())                                                               \
      releaseComm(reinterpret_cast<uintptr_t>(comm));                                              \
    return rc;                                                                                     \
  }
COLLCHECK_NCCL_RELEASE(CommDestroy, NcclDestroy, true)
COLLCHECK_NCCL_RELEASE(CommAbort, NcclAbort, true)
COLLCHECK_NCCL_RELEASE(CommFinalize, NcclFinalize, false)

COLLCHECK_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                                       ncclDataType_t datatype,
                                                       ncclScalarResidence_t residence,
                                                       ncclComm_t comm) {
  COLLCHECK_NCCL_REAL(ncclRedOpCreatePreMulSum)
  CallScope scope;
  // Read a host scalar before the call: NCCL reads it before returning, the caller may reuse it.
  double value = 0;
  bool known =
      residence == ncclScalarHostImmediate && scalar && scalarValue(scalar, datatype, value);
  ncclResult_t rc = real(op, scalar, datatype, residence, comm);
  if (rc == ncclSuccess && scope.outermost()) {
    rememberOp(comm, *op, known, value);
    CommState *state = commOf(comm);
    Record rec = stampMeta(format::Kind::RedOpCreate);
    rec.commId = state ? state->id : 0;
    rec.commRank = state ? state->rank : -1;
    rec.op = static_cast<uint8_t>(ReduceOp::PreMulSum);
    rec.dataType = static_cast<uint8_t>(mapDataType(datatype));
    rec.count = static_cast<uint64_t>(*op);
    rec.flags = format::kFlagNccl | (known ? 0 : format::kFlagScalarUnknown);
    if (known)
      rec.setAuxDouble(value);
    if (Record *r = writeRecord(rec))
      endRecord(r, false);
  }
  return rc;
}

COLLCHECK_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  COLLCHECK_NCCL_REAL(ncclRedOpDestroy)
  CallScope scope;
  if (scope.outermost())
    forgetOp(comm, op);
  if (scope.outermost()) {
    CommState *state = commOf(comm);
    Record rec = stampMeta(format::Kind::RedOpDestroy);
    rec.commId = state ? state->id : 0;
    rec.commRank = state ? state->rank : -1;
    rec.count = static_cast<uint64_t>(op);
    rec.flags = format::kFlagNccl;
    if (Record *r = writeRecord(rec))
      endRecord(r, false);
  }
  return real(op, comm);
}
