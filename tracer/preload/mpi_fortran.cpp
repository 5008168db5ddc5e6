// The Fortran bindings of MPI (`mpif.h`, `use mpi`, `use mpi_f08`), interposed like the C ones.
// Open MPI's Fortran entry points call PMPI_* directly, so a Fortran program's calls never reach
// the C wrappers (mpi_wrappers.cpp). Each wrapper here converts what the record needs to C (handles
// through MPI_*_f2c, the common blocks that stand for MPI_IN_PLACE and MPI_BOTTOM), records through
// the C wrappers' own recording half (mpi_recording.h, mpi_support.h), and hands its untouched
// arguments to the real Fortran entry point, which makes the call as it would have without us.
//
// Symbols: mpi_allreduce_ (the mangling of gfortran, flang and ifx on Linux) and Open MPI's
// ompi_allreduce_f, through which `use mpi_f08`'s mpi_allreduce_f08 calls. The other manglings
// (mpi_allreduce, mpi_allreduce__) are left alone: as C names they may be a program's own
// functions, which a preloaded definition would replace. A call that passes through two of them
// (mpi_allreduce_f08 to ompi_allreduce_f, or an MPI whose Fortran layer calls the C MPI_Allreduce)
// is recorded once: only the outermost intercepted call records (CallScope).
#include "tracer/preload/mpi_recording.h"

#include <dlfcn.h>
#include <type_traits>
#include <utility>
#include <vector>

namespace collcheck::tracer::mpi {
namespace {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran count arrays are read as C int arrays");

// Fortran's MPI_IN_PLACE and MPI_BOTTOM are common blocks of the MPI library, one symbol per name
// mangling; a buffer argument at one of their addresses stands for the C constant.
struct Sentinels {
  const void *inPlace[4] = {};
  const void *bottom[4] = {};
  Sentinels() {
    const char *inPlaceNames[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                  "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    const char *bottomNames[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                 "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    for (int i = 0; i < 4; ++i) {
      inPlace[i] = dlsym(RTLD_DEFAULT, inPlaceNames[i]);
      bottom[i] = dlsym(RTLD_DEFAULT, bottomNames[i]);
    }
  }
};

const void *cBuffer(const void *fortran) {
  static const Sentinels sentinels;
  for (const void *p : sentinels.inPlace)
    if (p && p == fortran)
      return MPI_IN_PLACE;
  for (const void *p : sentinels.bottom)
    if (p && p == fortran)
      return MPI_BOTTOM;
  return fortran;
}

MPI_Comm cComm(const void *fortran) {
  return COLLCHECK_PMPI(MPI_Comm_f2c)(*static_cast<const MPI_Fint *>(fortran));
}

bool succeeded(const MPI_Fint *ierr) { return !ierr || *ierr == MPI_SUCCESS; }

// The scope of a Fortran wrapper. Under Open MPI it records (the outermost call only). MPICH's
// Fortran bindings convert their arguments and call its C functions (MPI_Allreduce, through the
// PLT), whose wrappers record the call with C handles: under MPICH this one opens no scope and
// records nothing, and a collective's wrapper only hands the C wrapper its Fortran caller's site.
class FortranScope {
public:
  FortranScope() : scope_(currentMpiAbi() != MpiAbi::Mpich) {}
  FortranScope(const void *caller, const void *frame) : FortranScope() {
    if (!scope_.open() && tracer::detail::outerSite == format::kNoSite &&
        tracer::detail::callDepth == 0) {
      setCaller(caller, frame);
      tracer::detail::outerSite = currentSite();
      handedSite_ = true;
    }
  }
  ~FortranScope() {
    if (handedSite_)
      tracer::detail::outerSite = format::kNoSite;
  }
  FortranScope(const FortranScope &) = delete;
  FortranScope &operator=(const FortranScope &) = delete;
  bool outermost() const { return scope_.outermost(); }

private:
  MpiScope scope_;
  bool handedSite_ = false;
};

void missingFortran(MPI_Fint *ierr) {
  warn("a Fortran MPI entry point was not found in the MPI library");
  if (ierr)
    *ierr = MPI_ERR_INTERN;
}

// Alltoallw's per-peer datatypes, converted for the record: one array per parameter position, as
// long as the communicator has peers. None for an array MPI ignores (the send side's, when the
// send buffer is MPI_IN_PLACE), which the program may not have filled or even sized.
// An array of datatype handles, one per peer: per member of the (remote) group, or for a
// neighborhood collective per neighbor (the send side's per destination, the receive side's per
// source).
template <size_t Position>
const MPI_Datatype *cTypes(const void *fortran, MPI_Comm comm, bool ignored, bool neighborhood,
                           bool sendSide) {
  if (ignored)
    return nullptr;
  thread_local std::vector<MPI_Datatype> converted;
  const CommState *state = neighborhood ? nullptr : commOf(comm);
  int count = neighborhood ? neighbors(comm, !sendSide) : state ? peers(state) : 0;
  converted.assign(static_cast<size_t>(count), MPI_Datatype{});
  const auto *handles = static_cast<const MPI_Fint *>(fortran);
  for (size_t i = 0; i < converted.size(); ++i)
    converted[i] = COLLCHECK_PMPI(MPI_Type_f2c)(handles[i]);
  return converted.data();
}

template <class> constexpr bool kUnconverted = false;

// The C value of the Fortran argument at `Position`, whose C parameter has type T; `comm`: the
// call's communicator, already converted; `sendIgnored`: the send side's arrays are ignored.
template <class T, size_t Position, size_t SendTypes, bool Neighborhood>
T cArgument(void *fortran, MPI_Comm comm, bool sendIgnored) {
  if constexpr (std::is_same_v<T, int>)
    return *static_cast<const MPI_Fint *>(fortran);
  else if constexpr (std::is_same_v<T, MPI_Comm>)
    return comm;
  else if constexpr (std::is_same_v<T, MPI_Datatype>)
    return COLLCHECK_PMPI(MPI_Type_f2c)(*static_cast<const MPI_Fint *>(fortran));
  else if constexpr (std::is_same_v<T, MPI_Op>)
    return COLLCHECK_PMPI(MPI_Op_f2c)(*static_cast<const MPI_Fint *>(fortran));
  else if constexpr (std::is_same_v<T, const void *>)
    return cBuffer(fortran);
  else if constexpr (std::is_same_v<T, void *>)
    return const_cast<void *>(cBuffer(fortran));
  else if constexpr (std::is_same_v<T, const int *>)
    return static_cast<const int *>(fortran);
  else if constexpr (std::is_same_v<T, const MPI_Aint *>)
    return static_cast<const MPI_Aint *>(fortran); // INTEGER(KIND=MPI_ADDRESS_KIND)
  else if constexpr (std::is_same_v<T, const MPI_Datatype *>)
    return cTypes<Position>(fortran, comm, sendIgnored && Position == SendTypes, Neighborhood,
                            Position == SendTypes);
  else if constexpr (std::is_same_v<T, MPI_Request *>)
    return nullptr; // an output of the real call; the record does not need it
  else
    static_assert(kUnconverted<T>, "a C parameter type the Fortran bindings do not convert");
}

// A collective's Fortran entry point: its arguments are those of the C function `CFunction`, each
// passed by address, then the error code.
template <class CFunction> struct FortranCollective;
template <class... P> struct FortranCollective<int (*)(P...)> {
  static constexpr size_t kErrorCode = sizeof...(P);
  // The send side's datatypes, the first array of them (Alltoallw); none elsewhere.
  static constexpr size_t kSendTypes = [] {
    constexpr bool isTypes[] = {std::is_same_v<P, const MPI_Datatype *>...};
    for (size_t i = 0; i < sizeof...(P); ++i)
      if (isTypes[i])
        return i;
    return sizeof...(P);
  }();
  // The neighborhood all-to-all of per-neighbor datatypes is the one whose displacements are
  // addresses (MPI_Aint): its arrays have one entry per neighbor, not per member.
  static constexpr bool kNeighborhood = (std::is_same_v<P, const MPI_Aint *> || ...);

  template <size_t... I>
  static Started start(Started (*record)(P...), void *const *fortran, std::index_sequence<I...>) {
    MPI_Comm comm{};
    (
        [&] {
          if constexpr (std::is_same_v<P, MPI_Comm>)
            comm = cComm(fortran[I]);
        }(),
        ...);
    const bool sendIgnored = kSendTypes < sizeof...(P) && cBuffer(fortran[0]) == MPI_IN_PLACE;
    return record(cArgument<P, I, kSendTypes, kNeighborhood>(fortran[I], comm, sendIgnored)...);
  }

  template <class Real, class Forward>
  static void call(Real real, Started (*record)(P...), void *const *fortran, Forward forward,
                   const void *caller, const void *frame) {
    auto *ierr = static_cast<MPI_Fint *>(fortran[kErrorCode]);
    if (!real) [[unlikely]]
      return missingFortran(ierr);
    FortranScope scope(caller, frame);
    Started started = scope.outermost() ? (setCaller(caller, frame),
                                           start(record, fortran, std::index_sequence_for<P...>{}))
                                        : Started{};
    forward(real);
    finish(started, !succeeded(ierr));
  }
};

} // namespace
} // namespace collcheck::tracer::mpi

using namespace collcheck::tracer;
using namespace collcheck::tracer::mpi;
namespace format = collcheck::format;

// Every Fortran argument is an address: a wrapper of N C parameters takes N + 1 pointers (the last
// one the error code), which it forwards as they came.
#define COLLCHECK_COUNT(...) COLLCHECK_COUNT_I(__VA_ARGS__, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define COLLCHECK_COUNT_I(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, n, ...) n
#define COLLCHECK_FORTRAN_PARAMS_1 void *a0, void *a1
#define COLLCHECK_FORTRAN_PARAMS_2 COLLCHECK_FORTRAN_PARAMS_1, void *a2
#define COLLCHECK_FORTRAN_PARAMS_3 COLLCHECK_FORTRAN_PARAMS_2, void *a3
#define COLLCHECK_FORTRAN_PARAMS_4 COLLCHECK_FORTRAN_PARAMS_3, void *a4
#define COLLCHECK_FORTRAN_PARAMS_5 COLLCHECK_FORTRAN_PARAMS_4, void *a5
#define COLLCHECK_FORTRAN_PARAMS_6 COLLCHECK_FORTRAN_PARAMS_5, void *a6
#define COLLCHECK_FORTRAN_PARAMS_7 COLLCHECK_FORTRAN_PARAMS_6, void *a7
#define COLLCHECK_FORTRAN_PARAMS_8 COLLCHECK_FORTRAN_PARAMS_7, void *a8
#define COLLCHECK_FORTRAN_PARAMS_9 COLLCHECK_FORTRAN_PARAMS_8, void *a9
#define COLLCHECK_FORTRAN_PARAMS_10 COLLCHECK_FORTRAN_PARAMS_9, void *a10
#define COLLCHECK_FORTRAN_ARGS_1 a0, a1
#define COLLCHECK_FORTRAN_ARGS_2 COLLCHECK_FORTRAN_ARGS_1, a2
#define COLLCHECK_FORTRAN_ARGS_3 COLLCHECK_FORTRAN_ARGS_2, a3
#define COLLCHECK_FORTRAN_ARGS_4 COLLCHECK_FORTRAN_ARGS_3, a4
#define COLLCHECK_FORTRAN_ARGS_5 COLLCHECK_FORTRAN_ARGS_4, a5
#define COLLCHECK_FORTRAN_ARGS_6 COLLCHECK_FORTRAN_ARGS_5, a6
#define COLLCHECK_FORTRAN_ARGS_7 COLLCHECK_FORTRAN_ARGS_6, a7
#define COLLCHECK_FORTRAN_ARGS_8 COLLCHECK_FORTRAN_ARGS_7, a8
#define COLLCHECK_FORTRAN_ARGS_9 COLLCHECK_FORTRAN_ARGS_8, a9
#define COLLCHECK_FORTRAN_ARGS_10 COLLCHECK_FORTRAN_ARGS_9, a10

#define COLLCHECK_FORTRAN_COLLECTIVE_N(symbol, name, n)                                            \
  COLLCHECK_EXPORT void symbol(COLLCHECK_FORTRAN_PARAMS_##n) {                                     \
    using Real = void (*)(COLLCHECK_FORTRAN_PARAMS_##n);                                           \
    static RealFunction<Real> resolved(#symbol);                                                   \
    void *const fortran[] = {COLLCHECK_FORTRAN_ARGS_##n};                                          \
    FortranCollective<decltype(&PMPI_##name)>::call(                                               \
        resolved.get(), &start##name, fortran,                                                     \
        [&](Real real) { real(COLLCHECK_FORTRAN_ARGS_##n); }, __builtin_return_address(0),         \
        COLLCHECK_CALLER_FRAME);                                                                   \
  }
#define COLLCHECK_FORTRAN_COLLECTIVE(symbol, name, n)                                              \
  COLLCHECK_FORTRAN_COLLECTIVE_N(symbol, name, n)
#define COLLCHECK_FORTRAN_COLLECTIVES(lower, name, n)                                              \
  COLLCHECK_FORTRAN_COLLECTIVE(mpi_##lower##_, name, n)                                            \
  COLLCHECK_FORTRAN_COLLECTIVE(ompi_##lower##_f, name, n)

#define COLLECTIVE(blocking, lowerBlocking, nonblocking, lowerNonblocking, kind, params, args,     \
                   fill)                                                                           \
  COLLCHECK_FORTRAN_COLLECTIVES(lowerBlocking, blocking, COLLCHECK_COUNT args)                     \
  COLLCHECK_FORTRAN_COLLECTIVES(lowerNonblocking, nonblocking,                                     \
                                COLLCHECK_COUNT COLLCHECK_WITH_REQUEST_ARG args)
#include "tracer/preload/mpi_collectives.def"
#undef COLLECTIVE

// --- initialization and communicator management -------------------------------------------------

// One wrapper per symbol of `lower` (above), each defined by `define(symbol)`.
#define COLLCHECK_FORTRAN_NAMES(define, lower) define(mpi_##lower##_) define(ompi_##lower##_f)

// The common head of the wrappers below: the real entry point, or an error when there is none.
#define COLLCHECK_FORTRAN_REAL(symbol, params)                                                     \
  static RealFunction<void(*) params> resolved(#symbol);                                           \
  const auto real = resolved.get();                                                                \
  if (!real)                                                                                       \
    return missingFortran(ierr);                                                                   \
  FortranScope scope

#define COLLCHECK_FORTRAN_INIT(symbol)                                                             \
  COLLCHECK_EXPORT void symbol(MPI_Fint *ierr) {                                                   \
    COLLCHECK_FORTRAN_REAL(symbol, (MPI_Fint *));                                                  \
    Record *record = scope.outermost() ? startInit(-1) : nullptr;                                  \
    real(ierr);                                                                                    \
    finishInit(record, scope.outermost(), succeeded(ierr), MPI_THREAD_SINGLE);                     \
  }
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_INIT, init)

#define COLLCHECK_FORTRAN_INIT_THREAD(symbol)                                                      \
  COLLCHECK_EXPORT void symbol(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {           \
    COLLCHECK_FORTRAN_REAL(symbol, (MPI_Fint *, MPI_Fint *, MPI_Fint *));                          \
    Record *record = scope.outermost() ? startInit(*required) : nullptr;                           \
    real(required, provided, ierr);                                                                \
    finishInit(record, scope.outermost(), succeeded(ierr), provided ? *provided : *required);      \
  }
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_INIT_THREAD, init_thread)

#define COLLCHECK_FORTRAN_FINALIZE(symbol)                                                         \
  COLLCHECK_EXPORT void symbol(MPI_Fint *ierr) {                                                   \
    COLLCHECK_FORTRAN_REAL(symbol, (MPI_Fint *));                                                  \
    Record *record = scope.outermost() ? startFinalize() : nullptr;                                \
    real(ierr);                                                                                    \
    finishFinalize(record, scope.outermost(), succeeded(ierr));                                    \
  }
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_FINALIZE, finalize)

// A communicator creator: `params` are the Fortran ones up to the new communicator's handle.
#define COLLCHECK_FORTRAN_CREATOR(symbol, params, args, origin, color)                             \
  COLLCHECK_EXPORT void symbol(COLLCHECK_UNPARENTHESIZE params, MPI_Fint *newcomm,                 \
                               MPI_Fint *ierr) {                                                   \
    COLLCHECK_FORTRAN_REAL(symbol, (COLLCHECK_UNPARENTHESIZE params, MPI_Fint *, MPI_Fint *));     \
    real(COLLCHECK_UNPARENTHESIZE args, newcomm, ierr);                                            \
    if (succeeded(ierr) && scope.outermost())                                                      \
      recordCreated(cComm(comm), cComm(newcomm), format::CommOrigin::origin, color);               \
  }
#define COLLCHECK_UNPARENTHESIZE(...) __VA_ARGS__

#define COLLCHECK_FORTRAN_DUP(symbol)                                                              \
  COLLCHECK_FORTRAN_CREATOR(symbol, (MPI_Fint * comm), (comm), Dup, -1)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_DUP, comm_dup)
#define COLLCHECK_FORTRAN_DUP_WITH_INFO(symbol)                                                    \
  COLLCHECK_FORTRAN_CREATOR(symbol, (MPI_Fint * comm, MPI_Fint * info), (comm, info), Dup, -1)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_DUP_WITH_INFO, comm_dup_with_info)
#define COLLCHECK_FORTRAN_SPLIT(symbol)                                                            \
  COLLCHECK_FORTRAN_CREATOR(symbol, (MPI_Fint * comm, MPI_Fint * color, MPI_Fint * key),           \
                            (comm, color, key), Split, *color)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_SPLIT, comm_split)
#define COLLCHECK_FORTRAN_SPLIT_TYPE(symbol)                                                       \
  COLLCHECK_FORTRAN_CREATOR(                                                                       \
      symbol, (MPI_Fint * comm, MPI_Fint * splitType, MPI_Fint * key, MPI_Fint * info),            \
      (comm, splitType, key, info), SplitType, *splitType)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_SPLIT_TYPE, comm_split_type)
#define COLLCHECK_FORTRAN_CREATE(symbol)                                                           \
  COLLCHECK_FORTRAN_CREATOR(symbol, (MPI_Fint * comm, MPI_Fint * group), (comm, group), Create, -1)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_CREATE, comm_create)

#define COLLCHECK_FORTRAN_CREATE_GROUP(symbol)                                                     \
  COLLCHECK_EXPORT void symbol(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm,  \
                               MPI_Fint *ierr) {                                                   \
    COLLCHECK_FORTRAN_REAL(symbol, (MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *));  \
    real(comm, group, tag, newcomm, ierr);                                                         \
    if (succeeded(ierr) && scope.outermost())                                                      \
      recordCreatedFromGroup(cComm(comm), *tag, cComm(newcomm));                                   \
  }
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_CREATE_GROUP, comm_create_group)

#define COLLCHECK_FORTRAN_RELEASE(symbol, how)                                                     \
  COLLCHECK_EXPORT void symbol(MPI_Fint *comm, MPI_Fint *ierr) {                                   \
    COLLCHECK_FORTRAN_REAL(symbol, (MPI_Fint *, MPI_Fint *));                                      \
    /* Converted only where recorded: MPICH has no PMPI_Comm_f2c (its handles need none). */       \
    MPI_Comm handle = scope.outermost() ? cComm(comm) : MPI_Comm{};                                \
    if (scope.outermost())                                                                         \
      startRelease(handle, format::CommReleaseHow::how);                                           \
    real(comm, ierr);                                                                              \
    if (succeeded(ierr) && scope.outermost())                                                      \
      finishRelease(handle);                                                                       \
  }
#define COLLCHECK_FORTRAN_FREE(symbol) COLLCHECK_FORTRAN_RELEASE(symbol, Free)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_FREE, comm_free)
#define COLLCHECK_FORTRAN_DISCONNECT(symbol) COLLCHECK_FORTRAN_RELEASE(symbol, Disconnect)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_DISCONNECT, comm_disconnect)

// Datatype and operation frees: the tracer's caches forget the handle (mpi_wrappers.cpp).
#define COLLCHECK_FORTRAN_FORGET(symbol, Handle, f2c, forget)                                      \
  COLLCHECK_EXPORT void symbol(MPI_Fint *handle, MPI_Fint *ierr) {                                 \
    COLLCHECK_FORTRAN_REAL(symbol, (MPI_Fint *, MPI_Fint *));                                      \
    /* Under an MPI whose calls are not recorded there is nothing to forget (and, under MPICH, */  \
    /* no PMPI_*_f2c to convert with). */                                                          \
    const bool known = mpiTraceable();                                                             \
    Handle c = known ? COLLCHECK_PMPI(f2c)(*handle) : Handle{};                                    \
    if (known)                                                                                     \
      forget(c);                                                                                   \
    real(handle, ierr);                                                                            \
    if (known)                                                                                     \
      forget(c);                                                                                   \
  }
#define COLLCHECK_FORTRAN_TYPE_FREE(symbol)                                                        \
  COLLCHECK_FORTRAN_FORGET(symbol, MPI_Datatype, MPI_Type_f2c, forgetType)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_TYPE_FREE, type_free)
#define COLLCHECK_FORTRAN_OP_FREE(symbol)                                                          \
  COLLCHECK_FORTRAN_FORGET(symbol, MPI_Op, MPI_Op_f2c, forgetOp)
COLLCHECK_FORTRAN_NAMES(COLLCHECK_FORTRAN_OP_FREE, op_free)
