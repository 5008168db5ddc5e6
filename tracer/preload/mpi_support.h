// What the MPI wrappers need beyond the core: the real PMPI entry points, the predefined handles
// and the mapping of MPI datatypes and operations into the trace vocabulary. The preload library
// must load into processes without libmpi, so nothing here references an MPI symbol at link time:
// every function and predefined object is looked up at run time.
#pragma once

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
// Open MPI's extensions declare its persistent collectives (MPIX_<name>_init): the wrappers'
// definitions are then checked against them.
#if !defined(COLLCHECK_MPI_ABI_MPICH) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

// The MPI code is compiled once per MPI ABI it knows: against Open MPI's mpi.h (handles are
// addresses of objects in libmpi; these wrappers are the library's exported MPI functions) and,
// where MPICH's headers were found at build time, against MPICH's (handles are integers; the
// same wrappers under other names, which the exported ones hand a call to in a process whose MPI
// is MPICH or one of its derivatives). Each build has a namespace of its own.
#ifdef COLLCHECK_MPI_ABI_MPICH
#define COLLCHECK_MPI_NS mpich
#else
#define COLLCHECK_MPI_NS mpi
#endif

#include "tracer/preload/call_site.h"
#include "tracer/preload/core.h"
#include "tracer/preload/handle_cache.h"
#include "tracer/preload/resolve.h"

#include <span>
#include <type_traits>
#include <vector>

namespace collcheck::tracer::COLLCHECK_MPI_NS {

// The real PMPI function P<name> for the tracer's own calls (communicator sizes, groups, names).
#define COLLCHECK_PMPI(name)                                                                       \
  ([]() {                                                                                          \
    static ::collcheck::tracer::RealFunction<decltype(&P##name)> fn("P" #name);                    \
    return fn.get();                                                                               \
  }())

MPI_Comm worldComm();
MPI_Comm selfComm();
MPI_Comm nullComm();

// A handle as a key of the tracer's tables: an address (Open MPI) or an integer (MPICH).
template <typename Handle> inline uintptr_t handleKey(Handle h) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<uintptr_t>(h);
  else
    return static_cast<uintptr_t>(static_cast<uint32_t>(h));
}

#ifdef COLLCHECK_MPI_ABI_MPICH
inline bool mpiTraceable() { return true; } // reached only in a process whose MPI is MPICH's
#else
// Which MPI the process has, decided at the first MPI call, when libmpi is loaded (also by
// dlopen): Open MPI (its world communicator is an object in its libmpi), MPICH or a derivative of
// it (MPIR_Dup_fn, which MPICH's mpi.h names as MPI_DUP_FN, is there), or one this build does not
// know, whose calls are forwarded untouched and not
// recorded (a warning says so once): the application then runs as it does untraced.
enum class MpiAbi { Unknown = 0, OpenMpi = 1, Mpich = 2, Other = 3 };
extern std::atomic<int> mpiAbi;
MpiAbi detectMpiAbi();
COLLCHECK_HOT MpiAbi currentMpiAbi() {
  int abi = mpiAbi.load(std::memory_order_relaxed);
  if (abi == 0) [[unlikely]]
    return detectMpiAbi();
  return static_cast<MpiAbi>(abi);
}
COLLCHECK_HOT bool mpiTraceable() { return currentMpiAbi() == MpiAbi::OpenMpi; }
#endif

// CallScope for the MPI wrappers: the outermost call records only where the MPI is Open MPI.
class MpiScope {
public:
  COLLCHECK_HOT explicit MpiScope(bool open = true)
      : scope_(open), outermost_(scope_.outermost() && mpiTraceable()) {}
  bool open() const { return scope_.open(); }
  bool outermost() const { return outermost_; }

private:
  CallScope scope_;
  bool outermost_;
};

// A datatype as recorded: its DataType and, for a derived type, the aux value that describes it
// (format/record.h, kFlagDerived; 0 for a named type).
format::DataType mapDataTypeSlow(MPI_Datatype type, uint64_t &derived);
format::ReduceOp mapOpSlow(MPI_Op op);

// One-entry caches per thread for the common case of the same datatype and operation call after
// call, derived datatypes and user-defined operations included (handle_cache.h): a hit is one
// compare, no MPI call and no loop. The free wrappers forget a freed handle (forgetType,
// forgetOp), so a handle reused for a later object is looked up afresh.
namespace detail {
extern COLLCHECK_TLS HandleMemo lastType;
extern COLLCHECK_TLS HandleMemo lastOp;
} // namespace detail

COLLCHECK_HOT format::DataType mapDataType(MPI_Datatype type, uint64_t &derived) {
  if (detail::lastType.matches(handleKey(type))) [[likely]] {
    derived = detail::lastType.facts.bytes;
    return static_cast<format::DataType>(detail::lastType.facts.mapped);
  }
  return mapDataTypeSlow(type, derived);
}
COLLCHECK_HOT format::ReduceOp mapOp(MPI_Op op) {
  if (detail::lastOp.matches(handleKey(op))) [[likely]]
    return static_cast<format::ReduceOp>(detail::lastOp.facts.mapped);
  return mapOpSlow(op);
}
// Called by MPI_Type_free and MPI_Op_free (C and Fortran) before and after the real call.
void forgetType(MPI_Datatype type);
void forgetOp(MPI_Op op);
int typeSize(MPI_Datatype type);

// The communicator state behind a handle; a communicator first seen here (created by a function the
// tracer does not wrap, e.g. MPI_Intercomm_merge) is registered with an id derived from its member
// list, which all members compute alike.
CommState *commOfSlow(MPI_Comm comm);
COLLCHECK_HOT CommState *commOf(MPI_Comm comm) {
  if (CommState *state = findComm(handleKey(comm))) [[likely]]
    return state;
  return commOfSlow(comm);
}
// The length of a v-collective's count arrays: the group the counts are exchanged with, which is
// the remote group of an intercommunicator.
inline int peers(const CommState *comm) {
  return comm->remoteSize >= 0 ? comm->remoteSize : comm->size;
}
// The length of a neighborhood collective's count arrays: the neighbors `comm`'s topology gives
// this process, the sources it receives from or the destinations it sends to (two per dimension
// of a Cartesian grid, MPI_PROC_NULL ones included). 0 on a communicator without a topology.
int neighbors(MPI_Comm comm, bool sources);

// World ranks of the members of `comm`, in comm rank order (local calls only: group translation).
std::vector<int32_t> worldMembers(MPI_Comm comm);

// How many communicators with this member list and `key` this process met before: an ordinal every
// member computes alike where the parent's creation count is not shared by all of them. Used for
// communicators first met in a call (key 0) and for MPI_Comm_create_group, which only the group's
// members call. Communicators with different lists (the rows and the columns of a Cartesian grid)
// then get the same ids on every member whatever order each process meets them in; only those with
// the same members and key must come in the same order everywhere.
uint64_t ordinalAmongMembers(std::span<const int32_t> members, uint64_t key);

// Registers and records a communicator created by `origin` from `parent`. Safe for MPI_COMM_NULL
// results (nothing is registered, the parent's creation ordinal still advances as on every member).
void recordCreated(MPI_Comm parent, MPI_Comm created, format::CommOrigin origin, int64_t color);

// Called by MPI_Init / MPI_Init_thread after the real call succeeded.
void afterInit(int threadLevel);

// The halves of the wrappers below that the C and the Fortran bindings share; each runs only in
// the outermost intercepted call (CallScope), as its caller checks.
// MPI_Init, MPI_Init_thread: the Init record (`required`: the thread level asked for, -1 for
// MPI_Init); after the call, the world's registration where it succeeded.
Record *startInit(int required);
void finishInit(Record *record, bool outermost, bool ok, int threadLevel);
// MPI_Finalize: its record; after the call, the file marked finished.
Record *startFinalize();
void finishFinalize(Record *record, bool outermost, bool ok);
// MPI_Comm_create_group, after the call succeeded.
void recordCreatedFromGroup(MPI_Comm parent, int tag, MPI_Comm created);
// MPI_Comm_free and MPI_Comm_disconnect end a communicator's life: its release is recorded before
// the call, and its handle forgotten after it succeeded, so that a communicator the library later
// gives the same address is registered afresh instead of being taken for the dead one.
void startRelease(MPI_Comm handle, format::CommReleaseHow how);
void finishRelease(MPI_Comm handle);

} // namespace collcheck::tracer::COLLCHECK_MPI_NS
