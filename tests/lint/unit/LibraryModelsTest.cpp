#include "engine/LibraryModels.h"

#include <gtest/gtest.h>

namespace collcheck::lint {
namespace {

TEST(LibraryModels, StandardFunctions) {
  EXPECT_EQ(standardFunctionModel("max"), LibraryModel::UpperBound);
  EXPECT_EQ(standardFunctionModel("fmaxf"), LibraryModel::UpperBound);
  EXPECT_EQ(standardFunctionModel("clamp"), LibraryModel::Clamp);
  EXPECT_EQ(standardFunctionModel("min"), LibraryModel::Minimum);
  EXPECT_EQ(standardFunctionModel("fmin"), LibraryModel::AsArguments);
  EXPECT_EQ(standardFunctionModel("stoll"), LibraryModel::AsArguments);
  EXPECT_EQ(standardFunctionModel("accumulate"), LibraryModel::FirstArgument);
  EXPECT_EQ(standardFunctionModel("make_pair"), LibraryModel::MakePair);
  EXPECT_EQ(standardFunctionModel("get"), LibraryModel::PairElement);
  EXPECT_EQ(standardFunctionModel("count_if"), LibraryModel::Count);
  EXPECT_EQ(standardFunctionModel("secure_getenv"), LibraryModel::Environment);
  // Whole names only: no prefix, no case folding.
  EXPECT_EQ(standardFunctionModel("maximum"), std::nullopt);
  EXPECT_EQ(standardFunctionModel("Max"), std::nullopt);
  EXPECT_EQ(standardFunctionModel("size"), std::nullopt);
  EXPECT_EQ(standardFunctionModel(""), std::nullopt);
}

TEST(LibraryModels, EnvironmentVariables) {
  EXPECT_EQ(environmentValue("OMPI_COMM_WORLD_RANK"), EnvironmentValue::Rank);
  EXPECT_EQ(environmentValue("RANK"), EnvironmentValue::Rank);
  EXPECT_EQ(environmentValue("SLURM_PROCID"), EnvironmentValue::Rank);
  EXPECT_EQ(environmentValue("WORLD_SIZE"), EnvironmentValue::Size);
  EXPECT_EQ(environmentValue("OMPI_COMM_WORLD_SIZE"), EnvironmentValue::Size);
  EXPECT_EQ(environmentValue("SLURM_NTASKS"), EnvironmentValue::Size);
  EXPECT_EQ(environmentValue("PMI_SIZE"), EnvironmentValue::Size);
  // A suffix for the rank and the world size, exact names otherwise.
  EXPECT_EQ(environmentValue("RANKS_PER_NODE"), std::nullopt);
  EXPECT_EQ(environmentValue("MY_SLURM_NTASKS"), std::nullopt);
  EXPECT_EQ(environmentValue("LOCAL_SIZE"), std::nullopt);
  EXPECT_EQ(environmentValue("HOME"), std::nullopt);
}

TEST(LibraryModels, ElementCountMethods) {
  for (const char *name : {"size", "numel", "count", "nnz", "numel_"})
    EXPECT_TRUE(isElementCountMethod(name)) << name;
  for (const char *name : {"length", "capacity", "sizes", "Size", ""})
    EXPECT_FALSE(isElementCountMethod(name)) << name;
}

} // namespace
} // namespace collcheck::lint
