#include "engine/LibraryModels.h"

namespace collcheck::lint {
namespace {

struct FunctionModel {
  llvm::StringRef name;
  LibraryModel model;
};

// Standard functions whose effect on counts and guards matters.
constexpr FunctionModel kStandardFunctions[] = {
    // std::max(N, 1) and std::clamp(N, 1, hi) cannot be zero.
    {"max", LibraryModel::UpperBound},       {"fmax", LibraryModel::UpperBound},
    {"fmaxf", LibraryModel::UpperBound},     {"clamp", LibraryModel::Clamp},
    {"min", LibraryModel::Minimum},          {"fmin", LibraryModel::AsArguments},
    {"abs", LibraryModel::AsArguments},      {"fabs", LibraryModel::AsArguments},
    {"move", LibraryModel::AsArguments},     {"forward", LibraryModel::AsArguments},
    {"as_const", LibraryModel::AsArguments}, {"atoi", LibraryModel::AsArguments},
    {"atol", LibraryModel::AsArguments},     {"stoi", LibraryModel::AsArguments},
    {"stol", LibraryModel::AsArguments},     {"stoll", LibraryModel::AsArguments},
    {"strtol", LibraryModel::AsArguments},   {"accumulate", LibraryModel::FirstArgument},
    {"reduce", LibraryModel::FirstArgument}, {"make_pair", LibraryModel::MakePair},
    {"get", LibraryModel::PairElement},      {"count", LibraryModel::Count},
    {"count_if", LibraryModel::Count},       {"distance", LibraryModel::Count},
    {"getenv", LibraryModel::Environment},   {"secure_getenv", LibraryModel::Environment},
};

struct EnvironmentVariable {
  llvm::StringRef name;
  bool suffix; // any variable whose name ends so: OMPI_COMM_WORLD_RANK, PMI_RANK, RANK
  EnvironmentValue value;
};

// The variables launchers set for the rank and the job's size, the rank's first.
constexpr EnvironmentVariable kEnvironmentVariables[] = {
    {"RANK", true, EnvironmentValue::Rank},       {"SLURM_PROCID", false, EnvironmentValue::Rank},
    {"WORLD_SIZE", true, EnvironmentValue::Size}, {"SLURM_NTASKS", false, EnvironmentValue::Size},
    {"PMI_SIZE", false, EnvironmentValue::Size},
};

// The methods that count a container's or a tensor's elements.
constexpr llvm::StringRef kElementCountMethods[] = {"size", "numel", "count", "nnz", "numel_"};

} // namespace

std::optional<LibraryModel> standardFunctionModel(llvm::StringRef name) {
  for (const FunctionModel &entry : kStandardFunctions)
    if (entry.name == name)
      return entry.model;
  return std::nullopt;
}

std::optional<EnvironmentValue> environmentValue(llvm::StringRef name) {
  for (const EnvironmentVariable &entry : kEnvironmentVariables)
    if (entry.suffix ? name.ends_with(entry.name) : name == entry.name)
      return entry.value;
  return std::nullopt;
}

bool isElementCountMethod(llvm::StringRef name) {
  for (llvm::StringRef method : kElementCountMethods)
    if (method == name)
      return true;
  return false;
}

} // namespace collcheck::lint
