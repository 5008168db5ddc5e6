// The library calls the flow walker models without seeing their code (engine/flow/Calls.cpp):
// the standard functions whose effect on counts and guards matters, the environment variables
// that hold the rank or the job's size, and the methods that count a container's or a tensor's
// elements. Fixed tables, beside the configurable ones of ReducerTable.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace collcheck::lint {

// What a standard function (in std or a system header) makes of its arguments' values.
enum class LibraryModel {
  UpperBound,    // max, fmax: not zero when a bound is positive or not zero
  Clamp,         // clamp: not zero when its value is, or its lower bound is positive
  Minimum,       // min: the arguments joined, not zero when both are
  AsArguments,   // abs, move, atoi, ...: the arguments joined
  FirstArgument, // accumulate, reduce: the first argument's value
  MakePair,      // make_pair: a pair of its two arguments
  PairElement,   // get: one element of a pair
  Count,         // count, count_if, distance: a count, rank-local for rank-local data
  Environment,   // getenv: the rank or the job's size when the variable names one
};

// The model of the standard function `name`, if it has one.
std::optional<LibraryModel> standardFunctionModel(llvm::StringRef name);

// What an environment variable set by the launcher holds.
enum class EnvironmentValue { Rank, Size };

// What the environment variable `name` holds (OMPI_COMM_WORLD_RANK, SLURM_NTASKS, ...), if the
// walker knows it.
std::optional<EnvironmentValue> environmentValue(llvm::StringRef name);

// Whether the method `name` counts a container's or a tensor's elements (size, numel, ...).
bool isElementCountMethod(llvm::StringRef name);

} // namespace collcheck::lint
