// How collcheck-lint turns a project's compile command into one Clang can parse for analysis:
// clang's builtin headers, parsing that survives errors, CUDA host code, nvcc command lines.
#pragma once

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>

namespace collcheck::lint {

struct CudaSetup {
  std::string cudaRoot;  // holds include/cuda_runtime.h, unless `fallback`
  bool fallback = false; // parse .cu files with the embedded minimal declarations
};

// Decides how .cu files are parsed: the CUDA headers under `cudaRoot` when they are there, the
// embedded fallback otherwise (or when `forceFallback`).
CudaSetup chooseCudaSetup(const std::string &cudaRoot, bool forceFallback);

// Where the embedded helper headers (lint/cuda/) appear in the tool's file system.
inline constexpr const char *kEmbeddedHeaderRoot = "/collcheck-lint-embedded";

// The real file system with the embedded helper headers laid over it.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> makeLintFileSystem();

clang::tooling::ArgumentsAdjuster makeLintAdjuster(const CudaSetup &cuda,
                                                   const std::string &resourceDir);

} // namespace collcheck::lint
