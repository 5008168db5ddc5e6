#include "tool/CompileCommands.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <array>
#include <utility>

namespace collcheck::lint {
namespace {

struct EmbeddedHeader {
  const char *name;
  const char *text;
};

constexpr EmbeddedHeader kHeaders[] = {
#include "cuda_headers.inc"
};

std::string embedded(llvm::StringRef relative) {
  return std::string(kEmbeddedHeaderRoot) + "/" + relative.str();
}

bool has(const clang::tooling::CommandLineArguments &args, llvm::StringRef prefix) {
  for (const std::string &a : args)
    if (llvm::StringRef(a).starts_with(prefix))
      return true;
  return false;
}

bool isCuda(const clang::tooling::CommandLineArguments &args, llvm::StringRef file) {
  if (file.ends_with(".cu") || file.ends_with(".cuh"))
    return true;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-x" && args[i + 1] == "cuda")
      return true;
  return false;
}

// nvcc takes options clang does not know; what matters for parsing host code are the include
// paths, macros, the language standard and the source file.
clang::tooling::CommandLineArguments fromNvcc(const clang::tooling::CommandLineArguments &args,
                                              llvm::StringRef file) {
  clang::tooling::CommandLineArguments out = {"clang++"};
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    bool hasValue = i + 1 < args.size();
    // nvcc's own spellings, as CMake writes them: `-isystem=DIR` (which clang would read as the
    // directory "=DIR"), `--include-path=DIR`, `--system-include=DIR`, `--define-macro=M`.
    if (a.consume_front("-isystem=") || a.consume_front("--system-include=")) {
      out.push_back("-isystem");
      out.push_back(a.str());
      continue;
    }
    if (a.consume_front("--include-path=") || a.consume_front("-I=")) {
      out.push_back("-I" + a.str());
      continue;
    }
    if (a.consume_front("--define-macro=") || a.consume_front("-D=")) {
      out.push_back("-D" + a.str());
      continue;
    }
    if ((a == "-I" || a == "-isystem" || a == "-D" || a == "-U" || a == "-include") && hasValue) {
      out.push_back(args[i]);
      out.push_back(args[++i]);
    } else if (a.starts_with("-I") || a.starts_with("-D") || a.starts_with("-U") ||
               a.starts_with("-isystem") || a.starts_with("-std=")) {
      out.push_back(args[i]);
    } else if ((a == "-std" || a == "--std") && hasValue) {
      out.push_back("-std=" + args[++i]);
    } else if (a.starts_with("--std=")) {
      out.push_back(a.drop_front(1).str());
    } else if ((a == "-o" || a == "-x" || a == "-ccbin" || a == "-Xcompiler" ||
                a == "--compiler-options" || a == "-arch" || a == "-gencode" || a == "-MF" ||
                a == "-MT") &&
               hasValue) {
      ++i;
    } else if (a == file || llvm::sys::path::filename(a) == llvm::sys::path::filename(file)) {
      out.push_back(args[i]);
    }
  }
  return out;
}

} // namespace

CudaSetup chooseCudaSetup(const std::string &cudaRoot, bool forceFallback) {
  CudaSetup setup;
  setup.cudaRoot = cudaRoot;
  llvm::SmallString<256> runtime(cudaRoot);
  llvm::sys::path::append(runtime, "include", "cuda_runtime.h");
  setup.fallback = forceFallback || cudaRoot.empty() || !llvm::sys::fs::exists(runtime);
  return setup;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> makeLintFileSystem() {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const EmbeddedHeader &h : kHeaders)
    memory->addFile(embedded(h.name), 0, llvm::MemoryBuffer::getMemBuffer(h.text, h.name));
  auto overlay =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(memory);
  return overlay;
}

clang::tooling::ArgumentsAdjuster makeLintAdjuster(const CudaSetup &cuda,
                                                   const std::string &resourceDir) {
  return [cuda, resourceDir](const clang::tooling::CommandLineArguments &in, llvm::StringRef file) {
    if (in.empty())
      return in;
    clang::tooling::CommandLineArguments args = in;
    if (llvm::sys::path::filename(args[0]).contains("nvcc"))
      args = fromNvcc(args, file);
    clang::tooling::CommandLineArguments front;
    if (!resourceDir.empty() && !has(args, "-resource-dir"))
      front.insert(front.end(), {"-resource-dir", resourceDir});
    if (isCuda(args, file)) {
      // Host code only: device code is walked for its data flow, never compiled for a GPU.
      front.insert(front.end(), {"--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version"});
      if (cuda.fallback) {
        front.insert(front.end(), {"-nocudainc", "-I", embedded("fallback"), "-include",
                                   embedded("fallback/collcheck_cuda_fallback.h")});
      } else {
        if (!has(args, "--cuda-path"))
          front.push_back("--cuda-path=" + cuda.cudaRoot);
        // CUDA 13 keeps libcu++ (<cuda/atomic>, <cuda/std/...>) under include/cccl, which nvcc
        // searches on its own.
        llvm::SmallString<256> cccl(cuda.cudaRoot);
        llvm::sys::path::append(cccl, "include", "cccl");
        if (llvm::sys::fs::is_directory(cccl))
          front.insert(front.end(), {"-isystem", std::string(cccl)});
        front.insert(front.end(), {"-isystem", embedded("compat"), "-include",
                                   embedded("compat/collcheck_cuda_compat.h")});
      }
    }
    args.insert(args.begin() + 1, front.begin(), front.end());
    // Keep parsing past any number of errors, let no warning become one, and leave the error
    // summary line out (the lint reports the errors itself).
    // Before a `--` (a command inferred for a file the database does not list ends with
    // `-- file`), where they would be taken for file names.
    auto end = std::find(args.begin() + 1, args.end(), "--");
    args.insert(end, {"-ferror-limit=0", "-w", "-fno-caret-diagnostics"});
    return args;
  };
}

} // namespace collcheck::lint
