#include "analyzer/model/signature.h"

#include <cstdio>

namespace collcheck::analyzer {

bool isRooted(Kind kind) {
  switch (kind) {
  case Kind::Broadcast:
  case Kind::Reduce:
  case Kind::Gather:
  case Kind::Gatherv:
  case Kind::Scatter:
  case Kind::Scatterv:
    return true;
  default:
    return false;
  }
}

bool isReduction(Kind kind) {
  switch (kind) {
  case Kind::Reduce:
  case Kind::AllReduce:
  case Kind::ReduceScatter:
  case Kind::ReduceScatterBlock:
  case Kind::Scan:
  case Kind::Exscan:
    return true;
  default:
    return false;
  }
}

bool hasVariableCounts(const Record &r) {
  switch (kindOf(r)) {
  case Kind::ReduceScatter:
    return !(r.flags & format::kFlagNccl);
  case Kind::Gatherv:
  case Kind::Scatterv:
  case Kind::AllGatherv:
  case Kind::AllToAllv:
  case Kind::AllToAllw:
    return true;
  default:
    return false;
  }
}

bool otherSideDiffers(const Record &r) {
  return r.op == static_cast<uint8_t>(format::OtherSide::InAux) && format::carriesOtherSide(r);
}

bool isPointToPoint(Kind kind) { return kind == Kind::Send || kind == Kind::Recv; }

bool isNeighborhood(Kind kind) {
  switch (kind) {
  case Kind::NeighborAllGather:
  case Kind::NeighborAllGatherv:
  case Kind::NeighborAllToAll:
  case Kind::NeighborAllToAllv:
  case Kind::NeighborAllToAllw:
    return true;
  default:
    return false;
  }
}

namespace {

using format::DataType;

DataType dataTypeOf(const Record &r) { return static_cast<DataType>(r.dataType); }

// Whether aux describes the record's derived type (format/record.h, kFlagDerived): not on the
// kinds that count a total there, nor where it holds the other side's count (format::OtherSide).
bool describesDerived(const Record &r) {
  return (r.flags & format::kFlagDerived) && !hasVariableCounts(r) &&
         !(format::carriesOtherSide(r) && r.op == static_cast<uint8_t>(format::OtherSide::InAux));
}

// A derived type recorded by its size (older traces, or a signature the tracer did not flatten).
bool derivedSized(const Record &r) {
  return dataTypeOf(r) == DataType::Derived && describesDerived(r);
}

// The items the application passed, where the record counts units of a derived type: count /
// units per item; 0 when that is not known.
uint64_t itemsPassed(const Record &r) {
  if (!describesDerived(r) || dataTypeOf(r) == DataType::Derived)
    return 0;
  uint64_t factor = format::derivedFactor(dataTypeOf(r), r.aux);
  return factor && r.count % factor == 0 ? r.count / factor : 0;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// One unit of a record's datatype: "int32", "mixed signature 1a2b3c4d of 8 bytes".
std::string unitName(const Record &r) {
  if (dataTypeOf(r) != DataType::Mixed)
    return std::string(format::dataTypeName(dataTypeOf(r)));
  if (!describesDerived(r))
    return "mixed signature";
  std::string name = "mixed signature " + hex32(format::derivedMixedHash(r.aux));
  if (uint64_t bytes = format::derivedMixedUnitBytes(r.aux))
    name += " of " + std::to_string(bytes) + " bytes";
  return name;
}

// What the call passed, in count and type: "16 x int32", "1 x derived (4 x int32)", "12 x int32
// in a derived type" (a v-collective: the counts in elements), "2 x derived of 12 bytes".
std::string describeElements(const Record &r) {
  // An MPI count is an int: a negative one the application passed arrives sign-extended.
  std::string count =
      r.count >> 63 ? std::to_string(static_cast<int64_t>(r.count)) : std::to_string(r.count);
  if (!(r.flags & format::kFlagDerived) || r.count >> 63)
    return count + " x " + unitName(r);
  if (dataTypeOf(r) == DataType::Derived)
    return count + " x derived" +
           (derivedSized(r) ? " of " + std::to_string(r.aux) + " bytes" : "");
  if (uint64_t items = itemsPassed(r)) {
    uint64_t factor = format::derivedFactor(dataTypeOf(r), r.aux);
    return std::to_string(items) + " x derived (" +
           (factor == 1 ? "" : std::to_string(factor) + " x ") + unitName(r) + ")";
  }
  return count + " x " + unitName(r) + " in a derived type";
}

} // namespace

uint64_t payloadBytes(const Record &r, uint64_t count) {
  if (derivedSized(r))
    return count * r.aux;
  if (dataTypeOf(r) == DataType::Mixed)
    return describesDerived(r) ? count * format::derivedMixedUnitBytes(r.aux) : 0;
  return count * format::dataTypeSize(dataTypeOf(r));
}

bool onIntercomm(const Record &r) {
  // The bit means something else on value captures; a sequenced MPI call carries it as said.
  return !(r.flags & format::kFlagNccl) && (r.flags & format::kFlagIntercomm) &&
         r.kind != static_cast<uint8_t>(Kind::ValueCapture);
}

uint32_t signatureDifferences(const Record &a, const Record &b) {
  Kind kind = kindOf(a);
  if (a.kind != b.kind || (a.flags & kFormFlags) != (b.flags & kFormFlags))
    return kFieldKind;
  if (kind == Kind::Barrier || isNeighborhood(kind))
    return 0;
  uint32_t diff = 0;
  // On an intercommunicator the root group passes MPI_ROOT at the root and MPI_PROC_NULL at the
  // others, by design: the roots of one group's records are not comparable.
  if (isRooted(kind) && a.peer != b.peer && !onIntercomm(a))
    diff |= kFieldRoot;
  // Derived types are recorded by their signature (format/record.h, kFlagDerived): a homogeneous
  // one as its basic type, counted in elements, so it compares with that type passed directly.
  if (a.dataType != b.dataType) {
    diff |= kFieldDataType;
  } else if (derivedSized(a) && derivedSized(b) && a.aux != b.aux) {
    diff |= kFieldDataType; // two derived types of different sizes
  } else if (dataTypeOf(a) == DataType::Mixed && describesDerived(a) && describesDerived(b) &&
             format::derivedMixedHash(a.aux) != format::derivedMixedHash(b.aux)) {
    diff |= kFieldDataType; // two mixed signatures with different units
  }
  if (!hasVariableCounts(a) && a.count != b.count)
    diff |= kFieldCount;
  if (isReduction(kind)) {
    if (a.op != b.op) {
      diff |= kFieldOp;
    } else if (a.op == static_cast<uint8_t>(format::ReduceOp::PreMulSum) &&
               !(a.flags & format::kFlagScalarUnknown) && !(b.flags & format::kFlagScalarUnknown) &&
               a.aux != b.aux) {
      diff |= kFieldScalar;
    }
  }
  return diff;
}

std::string_view fieldName(SignatureField field) {
  switch (field) {
  case kFieldKind:
    return "kind";
  case kFieldCount:
    return "count";
  case kFieldDataType:
    return "datatype";
  case kFieldOp:
    return "op";
  case kFieldScalar:
    return "scalar";
  case kFieldRoot:
    return "root";
  }
  return "field";
}

std::string describeField(const Record &r, SignatureField field) {
  switch (field) {
  case kFieldKind:
    return std::string(format::kindName(kindOf(r))) +
           ((r.flags & format::kFlagNonBlocking)  ? " (non-blocking)"
            : (r.flags & format::kFlagPersistent) ? " (persistent init)"
                                                  : "");
  case kFieldCount: {
    std::string count = "count " + std::to_string(r.count);
    if (itemsPassed(r))
      count += " (" + describeElements(r) + ")";
    return count;
  }
  case kFieldDataType: {
    std::string name = unitName(r);
    if (derivedSized(r))
      name += " of " + std::to_string(r.aux) + " bytes";
    else if (dataTypeOf(r) != DataType::Derived && dataTypeOf(r) != DataType::Mixed &&
             (r.flags & format::kFlagDerived))
      name += describesDerived(r)
                  ? " (a derived type of " +
                        std::to_string(format::derivedFactor(dataTypeOf(r), r.aux)) + " x " +
                        unitName(r) + ")"
                  : " (in a derived type)";
    return "datatype " + name;
  }
  case kFieldOp:
    return "op " + std::string(format::reduceOpName(static_cast<format::ReduceOp>(r.op)));
  case kFieldScalar: {
    char buf[64];
    std::snprintf(buf, sizeof buf, "scalar %g", r.auxDouble());
    return buf;
  }
  case kFieldRoot:
    return "root " + std::to_string(r.peer);
  }
  return {};
}

std::string describeCall(const Record &r) {
  Kind kind = kindOf(r);
  std::string out(format::kindName(kind));
  if (r.flags & format::kFlagNonBlocking)
    out = "i" + out;
  else if (r.flags & format::kFlagPersistent)
    out += "_init";
  if (kind == Kind::Barrier)
    return out;
  out += "(" + describeElements(r);
  if (isReduction(kind)) {
    auto op = static_cast<format::ReduceOp>(r.op);
    out += ", " + std::string(format::reduceOpName(op));
    if (op == format::ReduceOp::PreMulSum) {
      if (r.flags & format::kFlagScalarUnknown) {
        out += " scalar on device";
      } else {
        char buf[48];
        std::snprintf(buf, sizeof buf, " %g", r.auxDouble());
        out += buf;
      }
    }
  }
  if (isRooted(kind))
    out += ", root " + std::to_string(r.peer);
  if (isPointToPoint(kind))
    out += std::string(kind == Kind::Send ? ", to " : ", from ") + std::to_string(r.peer);
  if (hasVariableCounts(r))
    out += ", total " + std::to_string(r.aux);
  // The side the count is not, where it differs (format::OtherSide): a scatter's root sends it,
  // the others receive it from each rank.
  uint64_t other = 0;
  if (format::otherSideCount(r, other) && other != r.count)
    out +=
        (kind == Kind::Scatter ? ", sends " : ", receives ") + std::to_string(other) + " per rank";
  return out + ")";
}

} // namespace collcheck::analyzer
