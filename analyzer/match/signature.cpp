#include "signature.h"

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

bool derivedSized(const Record &r) {
  return r.dataType == static_cast<uint8_t>(format::DataType::Derived) &&
         (r.flags & format::kFlagDerivedSize) && !hasVariableCounts(r);
}

} // namespace

uint64_t payloadBytes(const Record &r, uint64_t count) {
  if (derivedSized(r))
    return count * r.aux;
  return count * format::dataTypeSize(static_cast<format::DataType>(r.dataType));
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
  if (a.dataType != b.dataType) {
    diff |= kFieldDataType;
  } else if (derivedSized(a) && a.aux != b.aux) {
    diff |= kFieldDataType; // two derived types of different sizes
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
  auto dtype = static_cast<format::DataType>(r.dataType);
  switch (field) {
  case kFieldKind:
    return std::string(format::kindName(kindOf(r))) +
           ((r.flags & format::kFlagNonBlocking)  ? " (non-blocking)"
            : (r.flags & format::kFlagPersistent) ? " (persistent init)"
                                                  : "");
  case kFieldCount:
    return "count " + std::to_string(r.count);
  case kFieldDataType: {
    std::string name(format::dataTypeName(dtype));
    if (derivedSized(r))
      name += " of " + std::to_string(r.aux) + " bytes";
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
  // An MPI count is an int: a negative one the application passed arrives sign-extended.
  std::string count =
      r.count >> 63 ? std::to_string(static_cast<int64_t>(r.count)) : std::to_string(r.count);
  out += "(" + count + " x " +
         std::string(format::dataTypeName(static_cast<format::DataType>(r.dataType)));
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
  return out + ")";
}

} // namespace collcheck::analyzer
