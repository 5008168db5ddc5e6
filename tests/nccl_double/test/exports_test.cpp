// The library as a tracer finds it: every entry point of api_table.h under both its names, the
// two names one function, and the library saying what it is.
#include <nccl.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

struct EntryPoint {
  std::string name;
};

std::vector<std::string> apiNames() {
  std::vector<std::string> names;
#define NCCL_DOUBLE_API(Return, Name, Parameters, Arguments) names.push_back(#Name);
#include "tests/nccl_double/src/api_table.h"
#undef NCCL_DOUBLE_API
  return names;
}

class Library : public testing::Test {
protected:
  void SetUp() override { handle_ = dlopen(COLLCHECK_NCCL_DOUBLE_PATH, RTLD_NOW | RTLD_LOCAL); }
  void TearDown() override {
    if (handle_)
      dlclose(handle_);
  }
  void *handle_ = nullptr;
};

TEST_F(Library, ExportsBothNamesOfEveryEntryPoint) {
  ASSERT_NE(nullptr, handle_) << dlerror();
  const std::vector<std::string> names = apiNames();
  EXPECT_EQ(35u, names.size());
  for (const std::string &name : names) {
    void *plain = dlsym(handle_, ("nccl" + name).c_str());
    void *profiling = dlsym(handle_, ("pnccl" + name).c_str());
    EXPECT_NE(nullptr, plain) << "nccl" << name;
    EXPECT_EQ(plain, profiling) << "pnccl" << name << " is not an alias of nccl" << name;
  }
}

TEST_F(Library, SaysItIsNotNvidiaNccl) {
  ASSERT_NE(nullptr, handle_) << dlerror();
  const auto *identity = static_cast<const char *>(dlsym(handle_, "collcheckNcclDoubleIdentity"));
  ASSERT_NE(nullptr, identity);
  EXPECT_NE(nullptr, std::strstr(identity, "collcheck NCCL test double"));
  using ErrorString = const char *(*)(ncclResult_t);
  auto errorString = reinterpret_cast<ErrorString>(dlsym(handle_, "ncclGetErrorString"));
  ASSERT_NE(nullptr, errorString);
  EXPECT_NE(nullptr, std::strstr(errorString(ncclInternalError), "test double"));
}

TEST_F(Library, ExportsNothingElse) {
  ASSERT_NE(nullptr, handle_) << dlerror();
  EXPECT_EQ(nullptr, dlsym(handle_, "_ZN9collcheck11nccl_double9AllReduceEPKvPvm14ncclDataType_t"
                                    "11ncclRedOp_tP8ncclCommP11CUstream_st"));
}

} // namespace
