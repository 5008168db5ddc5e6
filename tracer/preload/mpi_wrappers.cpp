// The exported MPI_* wrappers: generated from mpi_collectives.def for the collectives, written out
// for initialization and communicator management. Each wrapper records (start<Name>, also used by
// the Fortran bindings), forwards to PMPI_*, and stamps the duration; all policy lives in the core.
#include "tracer/preload/mpi_recording.h"

namespace collcheck::tracer::COLLCHECK_MPI_NS {
namespace {

// Records `type` and returns the factor that turns a count of its items into the record's units
// (format/record.h, kFlagDerived: 1 for a named type, elements or units per item for a derived
// one). The derived type's description goes into aux, which the kinds that count a total there
// overwrite.
COLLCHECK_HOT uint64_t setType(Record &rec, MPI_Datatype type) {
  uint64_t derived = 0;
  format::DataType mapped = mapDataType(type, derived);
  rec.dataType = static_cast<uint8_t>(mapped);
  if (mapped != format::DataType::Derived && derived == 0) [[likely]]
    return 1;
  rec.flags |= format::kFlagDerived;
  rec.aux = derived;
  return format::derivedFactor(mapped, derived);
}

// A count of items in the record's units; a negative count (erroneous, reported as such) as
// passed.
COLLCHECK_HOT uint64_t units(int count, uint64_t factor) {
  return count < 0 ? static_cast<uint64_t>(static_cast<int64_t>(count))
                   : static_cast<uint64_t>(count) * factor;
}

COLLCHECK_HOT bool inPlace(const void *buffer) { return buffer == MPI_IN_PLACE; }

COLLCHECK_HOT void fillRooted(Record &rec, int count, MPI_Datatype type, int root) {
  rec.peer = root;
  rec.count = units(count, setType(rec, type));
}

COLLCHECK_HOT void fillReduction(Record &rec, const void *sendbuf, int count, MPI_Datatype type,
                                 MPI_Op op, int root) {
  fillRooted(rec, count, type, root);
  rec.op = static_cast<uint8_t>(mapOp(op));
  if (inPlace(sendbuf))
    rec.flags |= format::kFlagInPlace;
}

// Gather, allgather, alltoall: the per-rank send count (the receive count where the send buffer is
// MPI_IN_PLACE, since the send arguments are then ignored).
void fillSendSide(Record &rec, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  int recvcount, MPI_Datatype recvtype, int root) {
  if (inPlace(sendbuf)) {
    fillRooted(rec, recvcount, recvtype, root);
    rec.flags |= format::kFlagInPlace;
  } else {
    fillRooted(rec, sendcount, sendtype, root);
  }
}

// Scatter: the per-rank receive count (the send count at an MPI_IN_PLACE root).
void fillRecvSide(Record &rec, const void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int sendcount, MPI_Datatype sendtype, int root) {
  if (inPlace(recvbuf)) {
    fillRooted(rec, sendcount, sendtype, root);
    rec.flags |= format::kFlagInPlace;
  } else {
    fillRooted(rec, recvcount, recvtype, root);
  }
}

// The sum of the first `n` entries of a count array (a negative count, erroneous, as 0).
uint64_t total(const int counts[], int n) {
  uint64_t sum = 0;
  for (int i = 0; counts && i < n; ++i)
    sum += static_cast<uint64_t>(counts[i] > 0 ? counts[i] : 0);
  return sum;
}

// The same over a v-collective's peers (or the local group's members).
uint64_t total(const int counts[], const CommState *comm, bool localGroup = false) {
  return comm ? total(counts, localGroup ? comm->size : peers(comm)) : 0;
}

// Whether the root's arguments are valid here: everywhere for calls without a root (-1), at the
// root itself, and on an intercommunicator only where MPI_ROOT is passed (MPI_PROC_NULL elsewhere).
bool significantHere(const CommState *comm, int root) {
  if (root == -1)
    return true;
  if (comm && comm->remoteSize >= 0)
    return root == MPI_ROOT;
  return comm && comm->rank == root;
}

// A total counted in items of `from`, in the units of `rec`, whose count is in items of `to`: the
// two sides of a v-collective may pass different types of one signature (3 MPI_INT sent, one
// contiguous triple received). Where both are recorded in the same units (the same basic type, or
// the same mixed unit), by the factor the tracer knows; otherwise through the sizes in bytes.
uint64_t inUnitsOf(uint64_t count, MPI_Datatype from, MPI_Datatype to, const Record &rec) {
  uint64_t toFactor = format::derivedFactor(static_cast<format::DataType>(rec.dataType), rec.aux);
  if (!(rec.flags & format::kFlagDerived))
    toFactor = 1;
  if (from == to)
    return count * toFactor;
  uint64_t derived = 0;
  format::DataType mapped = mapDataType(from, derived);
  bool fromDerived = mapped == format::DataType::Derived || derived != 0;
  if (static_cast<uint8_t>(mapped) == rec.dataType && mapped != format::DataType::Derived &&
      (mapped != format::DataType::Mixed ||
       format::derivedMixedHash(derived) == format::derivedMixedHash(rec.aux)))
    return count * (fromDerived ? format::derivedFactor(mapped, derived) : 1);
  int fromBytes = typeSize(from), toBytes = typeSize(to);
  return fromBytes > 0 && toBytes > 0
             ? count * static_cast<uint64_t>(fromBytes) / static_cast<uint64_t>(toBytes) * toFactor
             : count * toFactor;
}

// Whether a record's totals can be told in its units: not for a derived type of unknown signature
// (its aux keeps the size the analyzer leaves the totals alone for).
bool countsUnits(const Record &rec) {
  return rec.dataType != static_cast<uint8_t>(format::DataType::Derived);
}

// The fixed-count gather, scatter, allgather and alltoall: the side not in `count`, `count` items
// of `from` per peer where the record counts items of `own`, into op and aux (format::OtherSide).
// Recorded in the record's units, so that 3 MPI_INT against one contiguous triple is no
// difference; equal to `count`, the usual case, it leaves aux (a derived type's description)
// alone. Not recorded where it means nothing here (the root's side at another rank, the side
// MPI_IN_PLACE ignores), on an intercommunicator (the root's count is then the other group's,
// whose records are matched apart), for a negative count (negative-count's) or where the record's
// units are not known (a derived type of unknown signature). Costs no MPI call where both sides
// pass one type; otherwise a look-up in the handle cache, and MPI_Type_size only where the two
// types are recorded in different units.
void recordOtherSide(Record &rec, int count, MPI_Datatype from, MPI_Datatype own) {
  if (count < 0 || (rec.flags & format::kFlagIntercomm) || !countsUnits(rec))
    return;
  uint64_t other = inUnitsOf(static_cast<uint64_t>(count), from, own, rec);
  if (other == rec.count) {
    rec.op = static_cast<uint8_t>(format::OtherSide::SameAsCount);
    return;
  }
  rec.op = static_cast<uint8_t>(format::OtherSide::InAux);
  rec.aux = other;
}

// Gather, allgather, alltoall: the send side, and the receive count where it is significant.
void fillExchange(Record &rec, const CommState *comm, const void *sendbuf, int sendcount,
                  MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, int root) {
  fillSendSide(rec, sendbuf, sendcount, sendtype, recvcount, recvtype, root);
  if (!inPlace(sendbuf) && significantHere(comm, root))
    recordOtherSide(rec, recvcount, recvtype, sendtype);
}

// Scatter: the receive side, and the root's send count.
void fillScatter(Record &rec, const CommState *comm, int sendcount, MPI_Datatype sendtype,
                 const void *recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  fillRecvSide(rec, recvbuf, recvcount, recvtype, sendcount, sendtype, root);
  if (!inPlace(recvbuf) && significantHere(comm, root))
    recordOtherSide(rec, sendcount, sendtype, recvtype);
}

void fillGatherv(Record &rec, const CommState *comm, const void *sendbuf, int sendcount,
                 MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype, int root) {
  int own = inPlace(sendbuf) && comm && recvcounts ? recvcounts[comm->rank] : sendcount;
  fillSendSide(rec, sendbuf, own, sendtype, own, recvtype, root);
  if (!countsUnits(rec))
    return;
  uint64_t all = significantHere(comm, root)
                     ? inUnitsOf(total(recvcounts, comm), recvtype,
                                 inPlace(sendbuf) ? recvtype : sendtype, rec)
                     : 0;
  rec.aux = all;
}

void fillScatterv(Record &rec, const CommState *comm, const int sendcounts[], MPI_Datatype sendtype,
                  const void *recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  int own = inPlace(recvbuf) && comm && sendcounts ? sendcounts[comm->rank] : recvcount;
  fillRecvSide(rec, recvbuf, own, recvtype, own, sendtype, root);
  if (!countsUnits(rec))
    return;
  uint64_t all = significantHere(comm, root)
                     ? inUnitsOf(total(sendcounts, comm), sendtype,
                                 inPlace(recvbuf) ? sendtype : recvtype, rec)
                     : 0;
  rec.aux = all;
}

void fillAlltoallv(Record &rec, const CommState *comm, const void *sendbuf, const int sendcounts[],
                   MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  bool sendIgnored = inPlace(sendbuf);
  MPI_Datatype type = sendIgnored ? recvtype : sendtype;
  uint64_t factor = setType(rec, type);
  rec.count = (sendIgnored ? total(recvcounts, comm) : total(sendcounts, comm)) * factor;
  if (countsUnits(rec))
    rec.aux = inUnitsOf(total(recvcounts, comm), recvtype, type, rec);
  if (sendIgnored)
    rec.flags |= format::kFlagInPlace;
}

// Bytes of the first `n` entries of per-peer counts and datatypes.
uint64_t bytes(const int counts[], const MPI_Datatype types[], int n) {
  uint64_t sum = 0;
  for (int i = 0; counts && types && i < n; ++i)
    sum += static_cast<uint64_t>(counts[i]) * static_cast<uint64_t>(typeSize(types[i]));
  return sum;
}

uint64_t bytes(const int counts[], const MPI_Datatype types[], const CommState *comm) {
  return comm ? bytes(counts, types, peers(comm)) : 0;
}

// Alltoallw has one datatype per peer: the signature is compared in bytes.
void fillAlltoallw(Record &rec, const CommState *comm, const void *sendbuf, const int sendcounts[],
                   const MPI_Datatype sendtypes[], const int recvcounts[],
                   const MPI_Datatype recvtypes[]) {
  rec.dataType = static_cast<uint8_t>(format::DataType::Byte);
  bool sendIgnored = inPlace(sendbuf);
  rec.count = sendIgnored ? bytes(recvcounts, recvtypes, comm) : bytes(sendcounts, sendtypes, comm);
  rec.aux = bytes(recvcounts, recvtypes, comm);
  if (sendIgnored)
    rec.flags |= format::kFlagInPlace;
}

// The neighborhood all-to-alls: what this process sends its destinations, in elements of its one
// send type (v) or in bytes (w, one type per neighbor). The counts of different processes differ
// with their neighborhoods; only participation is compared.
void fillNeighborAlltoallv(Record &rec, MPI_Comm comm, const int sendcounts[],
                           MPI_Datatype sendtype) {
  rec.count = total(sendcounts, neighbors(comm, false)) * setType(rec, sendtype);
}

void fillNeighborAlltoallw(Record &rec, MPI_Comm comm, const int sendcounts[],
                           const MPI_Datatype sendtypes[]) {
  rec.dataType = static_cast<uint8_t>(format::DataType::Byte);
  rec.count = bytes(sendcounts, sendtypes, neighbors(comm, false));
}

void fillReduceScatter(Record &rec, const CommState *comm, const void *sendbuf,
                       const int recvcounts[], MPI_Datatype type, MPI_Op op) {
  int own = comm && recvcounts ? recvcounts[comm->rank] : 0;
  fillReduction(rec, sendbuf, own, type, op, -1);
  if (countsUnits(rec)) // one count per member
    rec.aux = inUnitsOf(total(recvcounts, comm, /*localGroup=*/true), type, type, rec);
}

int missingReal(const char *name) {
  warn(name);
  return MPI_ERR_INTERN;
}

} // namespace
} // namespace collcheck::tracer::COLLCHECK_MPI_NS

using namespace collcheck::tracer;
using namespace collcheck::tracer::COLLCHECK_MPI_NS;
namespace format = collcheck::format;

// The entry points: in the Open MPI build the library's exported MPI functions, which hand a call
// in a process whose MPI is MPICH's to the MPICH build's function of the same name behind
// `collcheck_mpich_` (declared here with this build's parameter types: handles of either ABI
// travel in the same registers, an MPICH integer in the low half); in the MPICH build those
// functions, hidden. COLLCHECK_MPI_BEGIN opens the function's body.
#ifdef COLLCHECK_MPI_ABI_MPICH
#define COLLCHECK_MPI_BEGIN(name, params, args)                                                    \
  extern "C" __attribute__((visibility("hidden"))) int collcheck_mpich_##name params {
#elif defined(COLLCHECK_HAVE_MPICH_ABI)
#define COLLCHECK_MPI_BEGIN(name, params, args)                                                    \
  extern "C" int collcheck_mpich_##name params;                                                    \
  COLLCHECK_EXPORT int name params {                                                               \
    if (currentMpiAbi() == MpiAbi::Mpich) [[unlikely]]                                             \
      return collcheck_mpich_##name args;
#else
#define COLLCHECK_MPI_BEGIN(name, params, args) COLLCHECK_EXPORT int name params {
#endif
// An entry point the other ABI has no counterpart of (Open MPI's MPIX_ names).
#define COLLCHECK_MPI_BEGIN_ALONE(name, params, args) COLLCHECK_EXPORT int name params {
// The head of the hand-written wrappers below: `real`, the library's PMPI_<name>, or an error
// when it has none (as COLLCHECK_FORTRAN_REAL heads the Fortran ones).
#define COLLCHECK_MPI_REAL(name)                                                                   \
  static RealFunction<decltype(&PMPI_##name)> resolved("PMPI_" #name);                             \
  const auto real = resolved.get();                                                                \
  if (!real) {                                                                                     \
    return missingReal("PMPI_" #name " not found");                                                \
  }                                                                                                \
  static_assert(true, "a statement for the caller's semicolon")

// CAPTURING(input, output) in a fill names the buffers of a call whose values may be captured.
#define CAPTURING(input, output)                                                                   \
  do {                                                                                             \
    captureInput = (input);                                                                        \
    captureOutput = (output);                                                                      \
  } while (0)

// record<Name>: the recording half of a wrapper, inlined into the C wrapper, and behind
// start<Name> for the Fortran bindings (mpi_fortran.cpp). Its parameters are the C function's; a
// fill reads only some of them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define COLLCHECK_MPI_START(name, kind, params, args, fill, extraFlags)                            \
  COLLCHECK_HOT static Started record##name params {                                               \
    Started started;                                                                               \
    started.record = reserveSlot();                                                                \
    if (!started.record) [[unlikely]]                                                              \
      return started;                                                                              \
    const void *captureInput = nullptr, *captureOutput = nullptr;                                  \
    CommState *state = commOf(comm);                                                               \
    Record rec{};                                                                                  \
    stamp(rec, format::Kind::kind, state);                                                         \
    rec.group = currentSite();                                                                     \
    if (state && state->remoteSize >= 0) [[unlikely]]                                              \
      rec.flags |= format::kFlagIntercomm;                                                         \
    fill;                                                                                          \
    rec.flags |= (extraFlags);                                                                     \
    /* A persistent initialization carries no values: its buffers are read when it starts. */      \
    const bool captures = !((extraFlags)&format::kFlagPersistent) && capturesValues(rec);          \
    /* A one-element count in the call's own record; more, or other cases, beside it. */           \
    started.holdsValues = captures && holdInline(rec, captureInput);                               \
    commit(*started.record, rec);                                                                  \
    /* A nonblocking call's output is not ready when it returns: its inputs alone. */              \
    const bool blocking = !((extraFlags)&format::kFlagNonBlocking);                                \
    if (started.holdsValues) {                                                                     \
      if (blocking)                                                                                \
        started.captureOutput = captureOutput;                                                     \
    } else if (captures) [[unlikely]] {                                                            \
      if (!holdInputs(*started.record, captureInput))                                              \
        captureValues(rec, captureInput, false, kNoStream);                                        \
      else if (!blocking)                                                                          \
        publishHeld(*started.record, nullptr);                                                     \
      if (blocking)                                                                                \
        started.captureOutput = captureOutput;                                                     \
    }                                                                                              \
    return started;                                                                                \
  }                                                                                                \
  Started collcheck::tracer::COLLCHECK_MPI_NS::start##name params { return record##name args; }
#define COLLECTIVE(blocking, lowerBlocking, nonblocking, lowerNonblocking, kind, params, args,     \
                   fill)                                                                           \
  COLLCHECK_MPI_START(blocking, kind, params, args, fill, 0)                                       \
  COLLCHECK_MPI_START(nonblocking, kind, COLLCHECK_WITH_REQUEST params,                            \
                      COLLCHECK_WITH_REQUEST_ARG args, fill, format::kFlagNonBlocking)             \
  COLLCHECK_MPI_START(blocking##_init, kind, COLLCHECK_WITH_INFO_REQUEST params,                   \
                      COLLCHECK_WITH_INFO_REQUEST_ARG args, fill, format::kFlagPersistent)
#include "tracer/preload/mpi_collectives.def"
#undef COLLECTIVE
#pragma GCC diagnostic pop

// One exported wrapper: `exported` records through `record`, then forwards to the real function
// named `realName` (or, where there is none, `fallbackName`, when not null), of type `Real`.
#define COLLCHECK_MPI_FORWARD(begin, exported, Real, realName, fallbackName, record, params, args) \
  begin(exported, params, args) static RealFunction<Real> resolved(realName, fallbackName);        \
  const auto real = resolved.get();                                                                \
  if (!real) [[unlikely]]                                                                          \
    return missingReal(realName " not found; is this an MPI program?");                            \
  MpiScope scope;                                                                                  \
  Started started =                                                                                \
      scope.outermost()                                                                            \
          ? (setCaller(__builtin_return_address(0), COLLCHECK_CALLER_FRAME), record args)          \
          : Started{};                                                                             \
  int rc = real args;                                                                              \
  finish(started, rc != MPI_SUCCESS);                                                              \
  return rc;                                                                                       \
  }
#define COLLCHECK_MPI_WRAPPER(name, params, args)                                                  \
  COLLCHECK_MPI_FORWARD(COLLCHECK_MPI_BEGIN, MPI_##name, decltype(&PMPI_##name), "PMPI_" #name,    \
                        nullptr, record##name, params, args)

#define COLLECTIVE(blocking, lowerBlocking, nonblocking, lowerNonblocking, kind, params, args,     \
                   fill)                                                                           \
  COLLCHECK_MPI_WRAPPER(blocking, params, args)                                                    \
  COLLCHECK_MPI_WRAPPER(nonblocking, COLLCHECK_WITH_REQUEST params, COLLCHECK_WITH_REQUEST_ARG args)
#include "tracer/preload/mpi_collectives.def"
#undef COLLECTIVE

// Persistent collectives: MPI-4's MPI_<name>_init, and the same under Open MPI 4's MPIX_ prefix
// (its pcollreq extension). The initialization is recorded as the collective operation: the
// standard has the initializations follow every rule of collective calls, ordering included, and
// they carry the operation's arguments. The starts (MPI_Start, MPI_Startall) are not recorded.
// The real function is looked up by name only (an older mpi.h declares none of them). Where the
// MPI library has no profiling entry for it, the call goes on to the next definition of the name
// itself: a program's own stand-in for an older library (in a shared library loaded after this
// one) keeps working.
#define COLLCHECK_MPI_INIT_WRAPPER(begin, prefix, name, params, args)                              \
  COLLCHECK_MPI_FORWARD(begin, prefix##name##_init, int(*) COLLCHECK_WITH_INFO_REQUEST params,     \
                        "P" #prefix #name "_init", #prefix #name "_init", record##name##_init,     \
                        COLLCHECK_WITH_INFO_REQUEST params, COLLCHECK_WITH_INFO_REQUEST_ARG args)

#ifdef COLLCHECK_MPI_ABI_MPICH
#define COLLECTIVE(blocking, lowerBlocking, nonblocking, lowerNonblocking, kind, params, args,     \
                   fill)                                                                           \
  COLLCHECK_MPI_INIT_WRAPPER(COLLCHECK_MPI_BEGIN, MPI_, blocking, params, args)
#else
#define COLLECTIVE(blocking, lowerBlocking, nonblocking, lowerNonblocking, kind, params, args,     \
                   fill)                                                                           \
  COLLCHECK_MPI_INIT_WRAPPER(COLLCHECK_MPI_BEGIN, MPI_, blocking, params, args)                    \
  COLLCHECK_MPI_INIT_WRAPPER(COLLCHECK_MPI_BEGIN_ALONE, MPIX_, blocking, params, args)
#endif
#include "tracer/preload/mpi_collectives.def"
#undef COLLECTIVE

// --- initialization -----------------------------------------------------------------------------

COLLCHECK_MPI_BEGIN(MPI_Init, (int *argc, char ***argv), (argc, argv))
COLLCHECK_MPI_REAL(Init);
MpiScope scope;
Record *record = scope.outermost() ? startInit(-1) : nullptr;
int rc = real(argc, argv);
finishInit(record, scope.outermost(), rc == MPI_SUCCESS, MPI_THREAD_SINGLE);
return rc;
}

COLLCHECK_MPI_BEGIN(MPI_Init_thread, (int *argc, char ***argv, int required, int *provided),
                    (argc, argv, required, provided))
COLLCHECK_MPI_REAL(Init_thread);
MpiScope scope;
Record *record = scope.outermost() ? startInit(required) : nullptr;
int rc = real(argc, argv, required, provided);
finishInit(record, scope.outermost(), rc == MPI_SUCCESS, provided ? *provided : required);
return rc;
}

COLLCHECK_MPI_BEGIN(MPI_Finalize, (void), ())
COLLCHECK_MPI_REAL(Finalize);
MpiScope scope;
Record *record = scope.outermost() ? startFinalize() : nullptr;
int rc = real();
finishFinalize(record, scope.outermost(), rc == MPI_SUCCESS);
return rc;
}

// --- communicator management ------------------------------------------------------------------

#define COLLCHECK_COMM_CREATOR(name, params, args, parent, created, origin, color)                 \
  COLLCHECK_MPI_BEGIN(MPI_##name, params, args)                                                    \
  COLLCHECK_MPI_REAL(name);                                                                        \
  MpiScope scope;                                                                                  \
  int rc = real args;                                                                              \
  if (rc == MPI_SUCCESS && scope.outermost())                                                      \
    recordCreated(parent, created, format::CommOrigin::origin, color);                             \
  return rc;                                                                                       \
  }

COLLCHECK_COMM_CREATOR(Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm), comm,
                       *newcomm, Dup, -1)
COLLCHECK_COMM_CREATOR(Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm),
                       (comm, info, newcomm), comm, *newcomm, Dup, -1)
COLLCHECK_COMM_CREATOR(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm),
                       (comm, color, key, newcomm), comm, *newcomm, Split, color)
COLLCHECK_COMM_CREATOR(Comm_split_type,
                       (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm),
                       (comm, split_type, key, info, newcomm), comm, *newcomm, SplitType,
                       split_type)
COLLCHECK_COMM_CREATOR(Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm),
                       (comm, group, newcomm), comm, *newcomm, Create, -1)

COLLCHECK_MPI_BEGIN(MPI_Comm_create_group,
                    (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm),
                    (comm, group, tag, newcomm))
COLLCHECK_MPI_REAL(Comm_create_group);
MpiScope scope;
int rc = real(comm, group, tag, newcomm);
if (rc == MPI_SUCCESS && scope.outermost())
  recordCreatedFromGroup(comm, tag, *newcomm);
return rc;
}

namespace {

int releaseMpiComm(int (*real)(MPI_Comm *), MPI_Comm *comm, format::CommReleaseHow how) {
  MpiScope scope;
  MPI_Comm handle = comm ? *comm : nullComm();
  if (scope.outermost())
    startRelease(handle, how);
  int rc = real(comm);
  if (rc == MPI_SUCCESS && scope.outermost())
    finishRelease(handle);
  return rc;
}

} // namespace

COLLCHECK_MPI_BEGIN(MPI_Comm_free, (MPI_Comm * comm), (comm))
COLLCHECK_MPI_REAL(Comm_free);
return releaseMpiComm(real, comm, format::CommReleaseHow::Free);
}

COLLCHECK_MPI_BEGIN(MPI_Comm_disconnect, (MPI_Comm * comm), (comm))
COLLCHECK_MPI_REAL(Comm_disconnect);
return releaseMpiComm(real, comm, format::CommReleaseHow::Disconnect);
}

// --- datatype and operation lifetimes ---------------------------------------------------------
// Not recorded; a freed handle is forgotten by the tracer's caches (mpi_support.h), before the
// call (no lookup after it returns finds the old facts) and after it (none made meanwhile either).

COLLCHECK_MPI_BEGIN(MPI_Type_free, (MPI_Datatype * type), (type))
COLLCHECK_MPI_REAL(Type_free);
MPI_Datatype handle = type ? *type : MPI_Datatype{}; // MPI_DATATYPE_NULL is a libmpi symbol
forgetType(handle);
int rc = real(type);
forgetType(handle);
return rc;
}

COLLCHECK_MPI_BEGIN(MPI_Op_free, (MPI_Op * op), (op))
COLLCHECK_MPI_REAL(Op_free);
MPI_Op handle = op ? *op : MPI_Op{};
forgetOp(handle);
int rc = real(op);
forgetOp(handle);
return rc;
}
