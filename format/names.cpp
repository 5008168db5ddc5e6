#include "format/record.h"

#include <array>
#include <bit>

namespace collcheck::format {
namespace {

struct KindInfo {
  std::string_view name;
  Category category;
};

constexpr std::array<KindInfo, static_cast<size_t>(Kind::Count)> kKinds = {{
#define X(name, text, category) {text, Category::category},
#include "format/kinds.def"
#undef X
}};

constexpr std::array<std::string_view, static_cast<size_t>(DataType::Count)> kDataTypes = {
    "none",        "int8",    "uint8",     "int16",       "uint16",
    "int32",       "uint32",  "int64",     "uint64",      "float16",
    "bfloat16",    "float32", "float64",   "long_double", "float8_e4m3",
    "float8_e5m2", "byte",    "char",      "bool",        "pair",
    "derived",     "unknown", "complex32", "complex64",   "complex_long_double",
    "mixed",       "invalid"};

constexpr std::array<uint32_t, static_cast<size_t>(DataType::Count)> kDataTypeSizes = {
    0, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 16, 1, 1, 1, 1, 1, 0, 0, 0, 8, 16, 32, 0, 0};

constexpr std::array<std::string_view, static_cast<size_t>(ReduceOp::Count)> kOps = {
    "none", "sum", "prod", "max",  "min",    "avg",    "premulsum", "land",  "band",
    "lor",  "bor", "lxor", "bxor", "maxloc", "minloc", "replace",   "no_op", "user"};

constexpr std::array<std::string_view, static_cast<size_t>(CommOrigin::Count)> kOrigins = {
    "world",          "self",          "dup",          "split",
    "split_type",     "create",        "create_group", "unknown",
    "nccl_init_rank", "nccl_init_all", "nccl_split",   "nccl_shrink"};

constexpr std::array<std::string_view, static_cast<size_t>(CommReleaseHow::Count)> kReleases = {
    "free", "nccl_destroy", "nccl_abort", "nccl_finalize", "disconnect"};

constexpr std::array<std::string_view, static_cast<size_t>(LossNormalization::Count)> kNorms = {
    "unknown", "local_mean", "global_mean", "sum", "multiplier"};

template <typename Table, typename Enum> std::string_view lookup(const Table &table, Enum value) {
  auto i = static_cast<size_t>(value);
  return i < table.size() ? table[i] : std::string_view("invalid");
}

} // namespace

std::string_view kindName(Kind kind) {
  auto i = static_cast<size_t>(kind);
  return i < kKinds.size() ? kKinds[i].name : std::string_view("invalid");
}
Category kindCategory(Kind kind) {
  auto i = static_cast<size_t>(kind);
  return i < kKinds.size() ? kKinds[i].category : Category::Meta;
}
std::string_view dataTypeName(DataType type) { return lookup(kDataTypes, type); }
uint32_t dataTypeSize(DataType type) {
  auto i = static_cast<size_t>(type);
  return i < kDataTypeSizes.size() ? kDataTypeSizes[i] : 0;
}
std::string_view reduceOpName(ReduceOp op) { return lookup(kOps, op); }
std::string_view commOriginName(CommOrigin origin) { return lookup(kOrigins, origin); }
std::string_view commReleaseName(CommReleaseHow how) { return lookup(kReleases, how); }
std::string_view lossNormalizationName(LossNormalization n) { return lookup(kNorms, n); }

int32_t memberAt(const Record &r, int i) {
  int32_t v;
  std::memcpy(&v, reinterpret_cast<const char *>(&r) + kMembersOffset + i * sizeof v, sizeof v);
  return v;
}
void setMemberAt(Record &r, int i, int32_t worldRank) {
  std::memcpy(reinterpret_cast<char *>(&r) + kMembersOffset + i * sizeof worldRank, &worldRank,
              sizeof worldRank);
}

double durationNanos(const FileHeader &h, const Record &r) {
  double ticksPerNs = h.tscTicksPerNs > 0 ? h.tscTicksPerNs : 1.0;
  return static_cast<double>(durationTicks(r)) / ticksPerNs;
}

double nanosSinceCreate(const FileHeader &h, uint64_t tsc) {
  double ticksPerNs = h.tscTicksPerNs > 0 ? h.tscTicksPerNs : 1.0;
  return (static_cast<double>(tsc) - static_cast<double>(h.tscAtCreate)) / ticksPerNs;
}

} // namespace collcheck::format
