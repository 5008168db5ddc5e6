// What must agree across the ranks of one collective, per kind: the kind itself (blocking or not),
// element count, datatype, reduction op (with the PreMulSum scalar) and root. The per-kind count
// rules (who sends and who receives how much) are written once here and in rules/pages/.
#pragma once

#include "format/record.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace collcheck::analyzer {

using format::Kind;
using format::Record;

inline Kind kindOf(const Record &r) { return static_cast<Kind>(r.kind); }
bool isRooted(Kind kind);    // broadcast, reduce, gather(v), scatter(v)
bool isReduction(Kind kind); // carries a reduction op
// v-variants and MPI_Reduce_scatter (per-rank receive counts): counts differ per rank by design.
bool hasVariableCounts(const Record &r);
// Whether a record holds the other side of MPI's fixed-count exchanges (format::OtherSide) and it
// differs from its count: the one case where the rules of a position where every rank matched
// read each rank's record of such a kind (the v-variants' records are read always).
bool otherSideDiffers(const Record &r);
bool isPointToPoint(Kind kind);
// MPI's neighborhood collectives: each process exchanges with the neighbors its communicator's
// topology gives it, in counts and datatypes of its own; only the kind is compared.
bool isNeighborhood(Kind kind);

// Fields of a collective's signature; a bit set.
enum SignatureField : uint32_t {
  kFieldKind = 1u << 0, // different collective, or blocking against non-blocking
  kFieldCount = 1u << 1,
  kFieldDataType = 1u << 2,
  kFieldOp = 1u << 3,
  kFieldScalar = 1u << 4, // both PreMulSum, different scalars
  kFieldRoot = 1u << 5,
};

// The flags that tell a call's form: blocking, nonblocking (MPI_I<name>) or a persistent
// collective's initialization (MPI_<name>_init). Calls of different forms never match.
inline constexpr uint8_t kFormFlags = format::kFlagNonBlocking | format::kFlagPersistent;

// The fields in which two records of the same position disagree (0: same signature).
// Whether a record is a call on an MPI intercommunicator (format::kFlagIntercomm).
bool onIntercomm(const format::Record &r);

uint32_t signatureDifferences(const Record &a, const Record &b);
inline bool sameSignature(const Record &a, const Record &b) {
  // The common case, all equal, decided without a call in four word compares: count and aux are
  // bytes 32..47, peer 52..55, kind, datatype, op and flags 60..63 (of the flags only the form's
  // bits, blocking or not and persistent or not, are part of the signature).
  uint32_t tailA, tailB;
  std::memcpy(&tailA, &a.kind, sizeof tailA);
  std::memcpy(&tailB, &b.kind, sizeof tailB);
  constexpr uint32_t kTailMask = 0x00ffffffu | (uint32_t{kFormFlags} << 24);
  if (((tailA ^ tailB) & kTailMask) == 0 && a.count == b.count && a.aux == b.aux &&
      a.peer == b.peer)
    return true;
  return signatureDifferences(a, b) == 0;
}

// Bytes of the payload a count describes; 0 when the element size is unknown.
uint64_t payloadBytes(const Record &r, uint64_t count);
// "allreduce(1024 x float32, sum)", "broadcast(16 x int32, root 0)", "barrier".
std::string describeCall(const Record &r);
// "kind", "count", "datatype", "op", "scalar", "root".
std::string_view fieldName(SignatureField field);
// The one field named: "count 1024", "datatype float32", "op sum", "scalar 0.25", "root 0".
std::string describeField(const Record &r, SignatureField field);

} // namespace collcheck::analyzer
