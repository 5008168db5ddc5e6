#include "tracer/preload/mpi_support.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string_view>

namespace collcheck::tracer::COLLCHECK_MPI_NS {
namespace {

using format::CommOrigin;
using format::DataType;
using format::ReduceOp;

} // namespace

#ifndef COLLCHECK_MPI_ABI_MPICH
std::atomic<int> mpiAbi{0};

MpiAbi detectMpiAbi() {
  MpiAbi abi = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world") ? MpiAbi::OpenMpi
               : dlsym(RTLD_DEFAULT, "MPIR_Dup_fn")       ? MpiAbi::Mpich
                                                          : MpiAbi::Other;
#ifndef COLLCHECK_HAVE_MPICH_ABI
  if (abi == MpiAbi::Mpich)
    abi = MpiAbi::Other; // built without MPICH's headers
#endif
  int expected = 0;
  if (mpiAbi.compare_exchange_strong(expected, static_cast<int>(abi)) && abi == MpiAbi::Other)
    warn("this process's MPI library is neither Open MPI nor MPICH, or MPICH's headers were "
         "missing when the tracer was built: its MPI calls are forwarded untouched and not "
         "recorded (NCCL calls still are)");
  return static_cast<MpiAbi>(mpiAbi.load());
}
#endif

namespace {

#ifdef COLLCHECK_MPI_ABI_MPICH
// MPICH's predefined handles are integer constants of its mpi.h.
#define COLLCHECK_PREDEFINED(Handle, openMpiSymbol, mpichConstant) (mpichConstant)
#else
template <typename Handle> Handle predefined(const char *openMpiSymbol) {
  // Open MPI's predefined handles are addresses of objects in libmpi.
  return reinterpret_cast<Handle>(dlsym(RTLD_DEFAULT, openMpiSymbol));
}
#define COLLCHECK_PREDEFINED(Handle, openMpiSymbol, mpichConstant) predefined<Handle>(openMpiSymbol)
#endif

// Predefined operations by their Open MPI object name (MPICH: its constant).
struct OpName {
  const char *symbol;
  ReduceOp op;
};
constexpr OpName kOps[] = {
    {"ompi_mpi_op_sum", ReduceOp::Sum},         {"ompi_mpi_op_prod", ReduceOp::Prod},
    {"ompi_mpi_op_max", ReduceOp::Max},         {"ompi_mpi_op_min", ReduceOp::Min},
    {"ompi_mpi_op_land", ReduceOp::LogicalAnd}, {"ompi_mpi_op_band", ReduceOp::BitwiseAnd},
    {"ompi_mpi_op_lor", ReduceOp::LogicalOr},   {"ompi_mpi_op_bor", ReduceOp::BitwiseOr},
    {"ompi_mpi_op_lxor", ReduceOp::LogicalXor}, {"ompi_mpi_op_bxor", ReduceOp::BitwiseXor},
    {"ompi_mpi_op_maxloc", ReduceOp::MaxLoc},   {"ompi_mpi_op_minloc", ReduceOp::MinLoc},
    {"ompi_mpi_op_replace", ReduceOp::Replace}, {"ompi_mpi_op_no_op", ReduceOp::NoOp},
};
#ifdef COLLCHECK_MPI_ABI_MPICH
// In the order of kOps.
const MPI_Op kMpichOps[] = {MPI_SUM,    MPI_PROD,   MPI_MAX,     MPI_MIN,  MPI_LAND,
                            MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                            MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
static_assert(std::size(kMpichOps) == std::size(kOps));
#endif

// Filled once MPI is loaded (the first call that needs it); plain loads afterwards.
std::array<std::atomic<MPI_Op>, std::size(kOps)> opHandles{};
std::atomic<bool> opHandlesReady{false};

void loadOpHandles() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    opHandles[i].store(COLLCHECK_PREDEFINED(MPI_Op, kOps[i].symbol, kMpichOps[i]),
                       std::memory_order_relaxed);
  opHandlesReady.store(true, std::memory_order_release);
}

// Predefined datatypes by the name MPI_Type_get_name gives them (standard names, any MPI).
struct TypeName {
  std::string_view name;
  DataType type;
};
constexpr TypeName kTypes[] = {
    {"MPI_CHAR", DataType::Char},
    {"MPI_SIGNED_CHAR", DataType::Int8},
    {"MPI_UNSIGNED_CHAR", DataType::Uint8},
    {"MPI_BYTE", DataType::Byte},
    {"MPI_PACKED", DataType::Byte},
    {"MPI_SHORT", DataType::Int16},
    {"MPI_UNSIGNED_SHORT", DataType::Uint16},
    {"MPI_INT", DataType::Int32},
    {"MPI_UNSIGNED", DataType::Uint32},
    {"MPI_LONG", DataType::Int64},
    {"MPI_UNSIGNED_LONG", DataType::Uint64},
    {"MPI_LONG_LONG_INT", DataType::Int64},
    {"MPI_LONG_LONG", DataType::Int64},
    {"MPI_UNSIGNED_LONG_LONG", DataType::Uint64},
    {"MPI_FLOAT", DataType::Float32},
    {"MPI_DOUBLE", DataType::Float64},
    {"MPI_LONG_DOUBLE", DataType::LongDouble},
    {"MPI_INT8_T", DataType::Int8},
    {"MPI_UINT8_T", DataType::Uint8},
    {"MPI_INT16_T", DataType::Int16},
    {"MPI_UINT16_T", DataType::Uint16},
    {"MPI_INT32_T", DataType::Int32},
    {"MPI_UINT32_T", DataType::Uint32},
    {"MPI_INT64_T", DataType::Int64},
    {"MPI_UINT64_T", DataType::Uint64},
    {"MPI_C_BOOL", DataType::Bool},
    {"MPI_CXX_BOOL", DataType::Bool},
    {"MPI_WCHAR", DataType::Int32},
    {"MPI_AINT", DataType::Int64},
    {"MPI_OFFSET", DataType::Int64},
    {"MPI_COUNT", DataType::Int64},
    {"MPI_FLOAT_INT", DataType::Pair},
    {"MPI_DOUBLE_INT", DataType::Pair},
    {"MPI_LONG_INT", DataType::Pair},
    {"MPI_2INT", DataType::Pair},
    {"MPI_SHORT_INT", DataType::Pair},
    {"MPI_LONG_DOUBLE_INT", DataType::Pair},
    {"MPI_C_COMPLEX", DataType::Complex32},
    {"MPI_C_FLOAT_COMPLEX", DataType::Complex32},
    {"MPI_CXX_FLOAT_COMPLEX", DataType::Complex32},
    {"MPI_COMPLEX", DataType::Complex32},
    {"MPI_C_DOUBLE_COMPLEX", DataType::Complex64},
    {"MPI_CXX_DOUBLE_COMPLEX", DataType::Complex64},
    {"MPI_DOUBLE_COMPLEX", DataType::Complex64},
    {"MPI_C_LONG_DOUBLE_COMPLEX", DataType::ComplexLong},
    {"MPI_CXX_LONG_DOUBLE_COMPLEX", DataType::ComplexLong},
};

// Datatypes and operations by handle, beyond each thread's last one (handle_cache.h).
HandleCache<10> typeCache;
HandleCache<8> opCache;

// Fortran's named types, whose sizes follow the compiler's defaults (gfortran's
// -fdefault-integer-8, -fdefault-real-8): recorded as the C type of the size the library gives
// them, so that the same data sent from C and from Fortran compares equal. LOGICAL (no C type of
// its size and meaning) and 16-byte reals (IEEE quad, not x87's long double) stay unknown.
enum class Family { Integer, Real, Complex, Character, Pair };
struct FortranTypeName {
  std::string_view name;
  Family family;
};
constexpr FortranTypeName kFortranTypes[] = {
    {"MPI_INTEGER", Family::Integer},
    {"MPI_INTEGER1", Family::Integer},
    {"MPI_INTEGER2", Family::Integer},
    {"MPI_INTEGER4", Family::Integer},
    {"MPI_INTEGER8", Family::Integer},
    {"MPI_REAL", Family::Real},
    {"MPI_DOUBLE_PRECISION", Family::Real},
    {"MPI_REAL2", Family::Real},
    {"MPI_REAL4", Family::Real},
    {"MPI_REAL8", Family::Real},
    {"MPI_COMPLEX8", Family::Complex},
    {"MPI_COMPLEX16", Family::Complex},
    {"MPI_CHARACTER", Family::Character},
    {"MPI_2INTEGER", Family::Pair},
    {"MPI_2REAL", Family::Pair},
    {"MPI_2DOUBLE_PRECISION", Family::Pair},
};

DataType fortranType(Family family, int bytes) {
  switch (family) {
  case Family::Integer:
    return bytes == 1   ? DataType::Int8
           : bytes == 2 ? DataType::Int16
           : bytes == 4 ? DataType::Int32
           : bytes == 8 ? DataType::Int64
                        : DataType::Unknown;
  case Family::Real:
    return bytes == 2   ? DataType::Float16
           : bytes == 4 ? DataType::Float32
           : bytes == 8 ? DataType::Float64
                        : DataType::Unknown;
  case Family::Complex:
    return bytes == 8 ? DataType::Complex32 : bytes == 16 ? DataType::Complex64 : DataType::Unknown;
  case Family::Character:
    return bytes == 1 ? DataType::Char : DataType::Unknown;
  case Family::Pair:
    return DataType::Pair;
  }
  return DataType::Unknown;
}

DataType nameToType(MPI_Datatype type) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  if (COLLCHECK_PMPI(MPI_Type_get_name)(type, name, &length) != MPI_SUCCESS)
    return DataType::Unknown;
  for (const TypeName &t : kTypes)
    if (t.name == name)
      return t.type;
  for (const FortranTypeName &t : kFortranTypes)
    if (t.name == name)
      return fortranType(t.family, typeSize(type));
  return DataType::Unknown;
}

// While alive, errors MPI raises on MPI_COMM_WORLD (where Open MPI raises those of an invalid
// communicator or datatype handle, having no other object to raise them on) return instead of
// invoking the job's handler: the tracer's own queries on a handle the application passed may then
// fail quietly, and the application's call that follows is the one to report the error, as without
// the tracer.
class WorldErrorsReturned {
public:
  WorldErrorsReturned() {
    static const MPI_Errhandler errorsReturn =
        COLLCHECK_PREDEFINED(MPI_Errhandler, "ompi_mpi_errors_return", MPI_ERRORS_RETURN);
    ok_ = errorsReturn &&
          COLLCHECK_PMPI(MPI_Comm_get_errhandler)(worldComm(), &saved_) == MPI_SUCCESS &&
          COLLCHECK_PMPI(MPI_Comm_set_errhandler)(worldComm(), errorsReturn) == MPI_SUCCESS;
  }
  ~WorldErrorsReturned() {
    if (!ok_)
      return;
    COLLCHECK_PMPI(MPI_Comm_set_errhandler)(worldComm(), saved_);
    COLLCHECK_PMPI(MPI_Errhandler_free)(&saved_);
  }
  WorldErrorsReturned(const WorldErrorsReturned &) = delete;
  WorldErrorsReturned &operator=(const WorldErrorsReturned &) = delete;
  bool ok() const { return ok_; }

private:
  MPI_Errhandler saved_{};
  bool ok_ = false;
};

std::mutex ordinalsMutex;
std::map<uint64_t, uint64_t> ordinalsByMembers; // hash of the member list and key -> count so far

} // namespace

uint64_t ordinalAmongMembers(std::span<const int32_t> members, uint64_t key) {
  uint64_t hash = hashBytes(members.data(), members.size() * sizeof(int32_t), mix64(key));
  std::lock_guard<std::mutex> lock(ordinalsMutex);
  return ordinalsByMembers[hash]++;
}

namespace detail {
COLLCHECK_TLS HandleMemo lastType;
COLLCHECK_TLS HandleMemo lastOp;
} // namespace detail

MPI_Comm worldComm() {
  static const MPI_Comm comm =
      COLLCHECK_PREDEFINED(MPI_Comm, "ompi_mpi_comm_world", MPI_COMM_WORLD);
  return comm;
}
MPI_Comm selfComm() {
  static const MPI_Comm comm = COLLCHECK_PREDEFINED(MPI_Comm, "ompi_mpi_comm_self", MPI_COMM_SELF);
  return comm;
}
MPI_Comm nullComm() {
  static const MPI_Comm comm = COLLCHECK_PREDEFINED(MPI_Comm, "ompi_mpi_comm_null", MPI_COMM_NULL);
  return comm;
}

int neighbors(MPI_Comm comm, bool sources) {
  int topology = MPI_UNDEFINED, count = 0;
  // Only a handle the tracer knows as a communicator is queried (commOf ran before the fill).
  if (!findComm(handleKey(comm)))
    return 0;
  if (COLLCHECK_PMPI(MPI_Topo_test)(comm, &topology) != MPI_SUCCESS)
    return 0;
  if (topology == MPI_CART) {
    if (COLLCHECK_PMPI(MPI_Cartdim_get)(comm, &count) != MPI_SUCCESS)
      return 0;
    return 2 * count;
  }
  if (topology == MPI_GRAPH) {
    int rank = 0;
    if (COLLCHECK_PMPI(MPI_Comm_rank)(comm, &rank) != MPI_SUCCESS ||
        COLLCHECK_PMPI(MPI_Graph_neighbors_count)(comm, rank, &count) != MPI_SUCCESS)
      return 0;
    return count;
  }
  if (topology == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    if (COLLCHECK_PMPI(MPI_Dist_graph_neighbors_count)(comm, &in, &out, &weighted) != MPI_SUCCESS)
      return 0;
    return sources ? in : out;
  }
  return 0;
}

int typeSize(MPI_Datatype type) {
  int size = 0;
  COLLCHECK_PMPI(MPI_Type_size)(type, &size);
  return size;
}

namespace {

// A derived datatype's type signature (format/record.h, kFlagDerived): unit^reps, the unit a run
// length encoded sequence of basic types that is no repetition of a shorter one. Built once per
// handle from MPI_Type_get_envelope and MPI_Type_get_contents, never on the hot path.
struct Run {
  DataType type;
  uint64_t length;
  bool operator==(const Run &) const = default;
};
struct Signature {
  std::vector<Run> unit;
  uint64_t reps = 0; // 0: empty
};

// Signatures longer than this, once expanded to runs, are not flattened: such a type is recorded
// by its size (DataType::Derived). A repetition of one unit is never expanded, whatever its count.
constexpr size_t kMaxRuns = 1024;
// Nesting deeper than this is not followed (MPI sets no limit; a real type is a few levels).
constexpr int kMaxDepth = 32;

void append(std::vector<Run> &runs, Run run) {
  if (!runs.empty() && runs.back().type == run.type)
    runs.back().length += run.length;
  else
    runs.push_back(run);
}

// Whether element i equals element i + shift of the sequence `runs` (of `total` elements), for
// every i: walks two cursors over the runs, O(runs).
bool periodic(const std::vector<Run> &runs, uint64_t total, uint64_t shift) {
  size_t a = 0, b = 0;
  uint64_t aLeft = runs[0].length, bOffset = shift;
  while (b < runs.size() && bOffset >= runs[b].length)
    bOffset -= runs[b++].length;
  uint64_t bLeft = runs[b].length - bOffset, remaining = total - shift;
  while (remaining > 0) {
    if (runs[a].type != runs[b].type)
      return false;
    uint64_t step = std::min({aLeft, bLeft, remaining});
    remaining -= step;
    if ((aLeft -= step) == 0 && ++a < runs.size())
      aLeft = runs[a].length;
    if ((bLeft -= step) == 0 && ++b < runs.size())
      bLeft = runs[b].length;
  }
  return true;
}

// The signature of the sequence `runs`: its shortest period that divides it, and how often.
Signature normalized(std::vector<Run> runs) {
  if (runs.size() == 1)
    return {{{runs[0].type, 1}}, runs[0].length};
  uint64_t total = 0;
  for (const Run &r : runs)
    total += r.length;
  // A sequence of k repetitions of a unit of two or more runs has more than k runs: the largest k
  // that fits gives the shortest unit.
  for (uint64_t k = runs.size(); k >= 2; --k) {
    if (total % k || !periodic(runs, total, total / k))
      continue;
    std::vector<Run> unit;
    for (uint64_t left = total / k, i = 0; left > 0; ++i) {
      uint64_t take = std::min(left, runs[i].length);
      append(unit, {runs[i].type, take});
      left -= take;
    }
    return {std::move(unit), k};
  }
  return {std::move(runs), 1};
}

bool expand(const Signature &s, std::vector<Run> &runs) {
  if (s.reps > kMaxRuns || s.unit.size() * s.reps > kMaxRuns)
    return false;
  for (uint64_t i = 0; i < s.reps; ++i)
    for (const Run &r : s.unit)
      append(runs, r);
  return runs.size() <= kMaxRuns;
}

bool repeat(Signature &s, uint64_t times) {
  return !__builtin_mul_overflow(s.reps, times, &s.reps);
}

bool concatenate(Signature &into, const Signature &next) {
  if (next.reps == 0)
    return true;
  if (into.reps == 0) {
    into = next;
    return true;
  }
  if (into.unit == next.unit)
    return !__builtin_add_overflow(into.reps, next.reps, &into.reps);
  std::vector<Run> runs;
  if (!expand(into, runs) || !expand(next, runs))
    return false;
  into = normalized(std::move(runs));
  return true;
}

MPI_Count typeSizeX(MPI_Datatype type) {
  MPI_Count size = 0;
  return COLLCHECK_PMPI(MPI_Type_size_x)(type, &size) == MPI_SUCCESS ? size : -1;
}

bool signatureOf(MPI_Datatype type, Signature &out, int depth);

// The derived types MPI_Type_get_contents returned, freed as MPI requires (named ones are not).
class ContentTypes {
public:
  explicit ContentTypes(size_t n) : types_(n) {}
  ~ContentTypes() {
    for (MPI_Datatype &t : types_) {
      int integers = 0, addresses = 0, types = 0, combiner = MPI_COMBINER_NAMED;
      if (COLLCHECK_PMPI(MPI_Type_get_envelope)(t, &integers, &addresses, &types, &combiner) ==
              MPI_SUCCESS &&
          combiner != MPI_COMBINER_NAMED)
        COLLCHECK_PMPI(MPI_Type_free)(&t);
    }
  }
  ContentTypes(const ContentTypes &) = delete;
  ContentTypes &operator=(const ContentTypes &) = delete;
  MPI_Datatype *data() { return types_.data(); }
  MPI_Datatype operator[](size_t i) const { return types_[i]; }

private:
  std::vector<MPI_Datatype> types_;
};

bool derivedSignature(MPI_Datatype type, int integers, int addresses, int types, int combiner,
                      Signature &out, int depth) {
  std::vector<int> ints(static_cast<size_t>(integers));
  std::vector<MPI_Aint> addrs(static_cast<size_t>(addresses));
  ContentTypes inner(static_cast<size_t>(types));
  if (COLLCHECK_PMPI(MPI_Type_get_contents)(type, integers, addresses, types, ints.data(),
                                            addrs.data(), inner.data()) != MPI_SUCCESS)
    return false;
  if (combiner == MPI_COMBINER_STRUCT) {
    // integers: count, then the block lengths; one type per block.
    if (integers < 1 || ints[0] != types || integers < 1 + types)
      return false;
    out = {};
    for (int i = 0; i < types; ++i) {
      Signature block;
      if (ints[static_cast<size_t>(1 + i)] < 0 ||
          !signatureOf(inner[static_cast<size_t>(i)], block, depth + 1) ||
          !repeat(block, static_cast<uint64_t>(ints[static_cast<size_t>(1 + i)])) ||
          !concatenate(out, block))
        return false;
    }
    return true;
  }
  // Every other constructor (contiguous, vector, indexed, subarray, darray, dup, resized ...)
  // places copies of one old type: its signature repeated as often as the sizes say, whatever the
  // layout. The Fortran parameterized types (no old type) are not followed.
  if (types != 1)
    return false;
  MPI_Count whole = typeSizeX(type), part = typeSizeX(inner[0]);
  if (whole < 0 || part <= 0 || whole % part)
    return false;
  return signatureOf(inner[0], out, depth + 1) && repeat(out, static_cast<uint64_t>(whole / part));
}

bool signatureOf(MPI_Datatype type, Signature &out, int depth) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  if (depth > kMaxDepth || COLLCHECK_PMPI(MPI_Type_get_envelope)(type, &integers, &addresses,
                                                                 &types, &combiner) != MPI_SUCCESS)
    return false;
  if (combiner != MPI_COMBINER_NAMED)
    return derivedSignature(type, integers, addresses, types, combiner, out, depth);
  DataType basic = nameToType(type);
  // A pair (MPI_2INT, MPI_FLOAT_INT ...) stands for several signatures the vocabulary does not
  // tell apart; unknown names say nothing.
  if (basic == DataType::Unknown || basic == DataType::Pair || basic == DataType::None)
    return false;
  out = {{{basic, 1}}, 1};
  return true;
}

// What a derived type is recorded as (format/record.h, kFlagDerived): its signature where it can
// be taken, else its size.
HandleFacts derivedFacts(MPI_Datatype type) {
  Signature s;
  if (signatureOf(type, s, 0) && s.reps > 0 && s.reps <= UINT32_MAX) {
    if (s.unit.size() == 1)
      return {static_cast<uint8_t>(s.unit[0].type), s.reps};
    // Units per item beyond 16 bits would not say the count passed: recorded by size instead.
    if (s.reps <= 0xffff) {
      std::vector<uint64_t> words;
      uint64_t unitBytes = 0;
      for (const Run &r : s.unit) {
        words.push_back(uint64_t(static_cast<uint8_t>(r.type)) << 56 | r.length);
        unitBytes += r.length * format::dataTypeSize(r.type);
      }
      uint64_t hash = hashBytes(words.data(), words.size() * sizeof(uint64_t), 0x7369676eull);
      return {static_cast<uint8_t>(DataType::Mixed),
              format::derivedMixedAux(static_cast<uint32_t>(hash ^ hash >> 32), s.reps, unitBytes)};
    }
  }
  return {static_cast<uint8_t>(DataType::Derived), static_cast<uint64_t>(typeSize(type))};
}

} // namespace

DataType mapDataTypeSlow(MPI_Datatype type, uint64_t &derived) {
  auto key = handleKey(type);
  // Read before the lookup: a free in between leaves this memo stale, never a stale memo current.
  uint32_t generation = handleGeneration.load(std::memory_order_acquire);
  HandleFacts facts;
  if (!typeCache.find(key, facts)) {
    int integers = 0, addresses = 0, types = 0, combiner = 0;
    // A datatype first seen here may be none (MPI_DATATYPE_NULL, a freed one): the application's
    // call is the one to fail on it, not this query. Recorded as invalid and not remembered, then;
    // where the query cannot be made safely, unknown.
    WorldErrorsReturned quiet;
    if (!quiet.ok()) {
      derived = 0;
      return DataType::Unknown;
    }
    if (COLLCHECK_PMPI(MPI_Type_get_envelope)(type, &integers, &addresses, &types, &combiner) !=
        MPI_SUCCESS) {
      derived = 0;
      return DataType::Invalid;
    }
    if (combiner != MPI_COMBINER_NAMED)
      facts = derivedFacts(type);
    else
      facts.mapped = static_cast<uint8_t>(nameToType(type));
    typeCache.insert(key, facts);
  }
  detail::lastType = HandleMemo{key, generation, facts};
  derived = facts.bytes;
  return static_cast<DataType>(facts.mapped);
}

ReduceOp mapOpSlow(MPI_Op op) {
  auto key = handleKey(op);
  uint32_t generation = handleGeneration.load(std::memory_order_acquire);
  HandleFacts facts;
  if (!opCache.find(key, facts)) {
    if (!opHandlesReady.load(std::memory_order_acquire)) [[unlikely]]
      loadOpHandles();
    facts.mapped = static_cast<uint8_t>(ReduceOp::User);
    for (size_t i = 0; i < opHandles.size(); ++i)
      if (opHandles[i].load(std::memory_order_relaxed) == op && op)
        facts.mapped = static_cast<uint8_t>(kOps[i].op);
    opCache.insert(key, facts);
  }
  detail::lastOp = HandleMemo{key, generation, facts};
  return static_cast<ReduceOp>(facts.mapped);
}

void forgetType(MPI_Datatype type) { typeCache.forget(handleKey(type)); }
void forgetOp(MPI_Op op) { opCache.forget(handleKey(op)); }

std::vector<int32_t> worldMembers(MPI_Comm comm) {
  int size = 0;
  COLLCHECK_PMPI(MPI_Comm_size)(comm, &size);
  std::vector<int32_t> ranks(static_cast<size_t>(size > 0 ? size : 0));
  if (size <= 0)
    return ranks;
  MPI_Group group, world;
  COLLCHECK_PMPI(MPI_Comm_group)(comm, &group);
  COLLCHECK_PMPI(MPI_Comm_group)(worldComm(), &world);
  std::vector<int> local(ranks.size());
  for (int i = 0; i < size; ++i)
    local[static_cast<size_t>(i)] = i;
  std::vector<int> translated(ranks.size());
  COLLCHECK_PMPI(MPI_Group_translate_ranks)(group, size, local.data(), world, translated.data());
  COLLCHECK_PMPI(MPI_Group_free)(&group);
  COLLCHECK_PMPI(MPI_Group_free)(&world);
  for (size_t i = 0; i < ranks.size(); ++i)
    ranks[i] = translated[i];
  return ranks;
}

namespace {

CommState *registerMpiComm(MPI_Comm comm, uint64_t id) {
  int rank = -1, size = -1, inter = 0;
  COLLCHECK_PMPI(MPI_Comm_rank)(comm, &rank);
  COLLCHECK_PMPI(MPI_Comm_size)(comm, &size);
  COLLCHECK_PMPI(MPI_Comm_test_inter)(comm, &inter);
  int remote = -1;
  if (inter)
    COLLCHECK_PMPI(MPI_Comm_remote_size)(comm, &remote);
  return registerComm(handleKey(comm), id, rank, size, remote);
}

} // namespace

CommState *commOfSlow(MPI_Comm comm) {
  // MPI_COMM_NULL is no communicator: the call is recorded without one (the analyzer's
  // invalid-communicator), and MPI, not the tracer, reports it.
  if (comm == nullComm() || !worldComm())
    return nullptr;
  // Slow path: a communicator the tracer did not see created, or a handle that is none. A query
  // that fails leaves the call recorded without a communicator, like MPI_COMM_NULL; one that
  // cannot be made safely (no MPI_ERRORS_RETURN found) is not made.
  WorldErrorsReturned quiet;
  int size = 0, rank = -1;
  if (!quiet.ok() || COLLCHECK_PMPI(MPI_Comm_size)(comm, &size) != MPI_SUCCESS ||
      COLLCHECK_PMPI(MPI_Comm_rank)(comm, &rank) != MPI_SUCCESS)
    return nullptr;
  std::vector<int32_t> members = worldMembers(comm);
  uint64_t ordinal = ordinalAmongMembers(members, 0);
  uint64_t id = childCommId(0, ordinal, CommOrigin::Unknown, 0, members);
  CommState *state = registerMpiComm(comm, id);
  if (state)
    recordCommCreate(*state, 0, CommOrigin::Unknown, -1, 0, members, 0);
  return state;
}

void recordCreated(MPI_Comm parent, MPI_Comm created, format::CommOrigin origin, int64_t color) {
  CommState *parentState = commOf(parent);
  if (!parentState)
    return;
  uint64_t ordinal = parentState->creations.fetch_add(1, std::memory_order_relaxed);
  if (created == nullComm())
    return;
  std::vector<int32_t> members = worldMembers(created);
  uint64_t id = childCommId(parentState->id, ordinal, origin, color, members);
  if (CommState *state = registerMpiComm(created, id))
    recordCommCreate(*state, parentState->id, origin, color, ordinal, members, 0);
}

Record *startInit(int required) {
  Record rec = stampMeta(Kind::Init);
  if (required >= 0)
    rec.count = static_cast<uint64_t>(required);
  return writeRecord(rec);
}

void finishInit(Record *record, bool outermost, bool ok, int threadLevel) {
  if (ok && outermost)
    afterInit(threadLevel);
  endRecord(record, !ok);
}

Record *startFinalize() { return writeRecord(stampMeta(Kind::Finalize)); }

void finishFinalize(Record *record, bool outermost, bool ok) {
  endRecord(record, !ok);
  if (outermost)
    markFinished();
}

// MPI_Comm_create_group is collective over the group only, so the parent's creation ordinal would
// differ between members and non-members: its id comes from the member list, the parent and the
// tag instead, with an ordinal among those (the same group and tag may be used again).
void recordCreatedFromGroup(MPI_Comm parent, int tag, MPI_Comm created) {
  if (created == nullComm())
    return;
  CommState *parentState = commOf(parent);
  std::vector<int32_t> members = worldMembers(created);
  uint64_t parentId = parentState ? parentState->id : 0;
  uint64_t ordinal = ordinalAmongMembers(
      members, mix64(parentId ^ mix64(static_cast<uint64_t>(static_cast<uint32_t>(tag)) + 1)));
  uint64_t id = childCommId(parentId, ordinal, CommOrigin::CreateGroup, tag, members);
  int rank = -1, size = -1;
  COLLCHECK_PMPI(MPI_Comm_rank)(created, &rank);
  COLLCHECK_PMPI(MPI_Comm_size)(created, &size);
  if (CommState *state = registerComm(handleKey(created), id, rank, size))
    recordCommCreate(*state, parentId, CommOrigin::CreateGroup, tag, ordinal, members, 0);
}

void startRelease(MPI_Comm handle, format::CommReleaseHow how) {
  if (CommState *state = findComm(handleKey(handle)))
    recordCommRelease(*state, how, 0);
}

void finishRelease(MPI_Comm handle) { releaseComm(handleKey(handle)); }

void afterInit(int threadLevel) {
  int rank = -1, size = -1;
  COLLCHECK_PMPI(MPI_Comm_rank)(worldComm(), &rank);
  COLLCHECK_PMPI(MPI_Comm_size)(worldComm(), &size);
  setWorld(rank, size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  COLLCHECK_PMPI(MPI_Get_library_version)(version, &length);
  setMpiInfo(version, threadLevel);
  // Fixed ids: MPI_COMM_WORLD is one communicator for the whole job, MPI_COMM_SELF one per process.
  constexpr uint64_t kWorldId = 0x776f726c64000001ull; // "world"
  std::vector<int32_t> members = worldMembers(worldComm());
  if (CommState *world = registerMpiComm(worldComm(), kWorldId))
    recordCommCreate(*world, 0, CommOrigin::World, -1, 0, members, 0);
  int32_t self = rank;
  uint64_t selfId = childCommId(kWorldId, static_cast<uint64_t>(rank), CommOrigin::Self, rank, {});
  if (CommState *state = registerMpiComm(selfComm(), selfId))
    recordCommCreate(*state, 0, CommOrigin::Self, -1, 0, std::span<const int32_t>(&self, 1), 0);
}

} // namespace collcheck::tracer::COLLCHECK_MPI_NS
