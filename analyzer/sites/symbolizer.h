// Turns a call site (module path, build id, offset) into file:line and function from the module's
// debug information, with elfutils' libdw. libdw reads ELF and DWARF without running a process
// (dwfl "offline" reporting), finds separate debug files by build id as gdb does, and is what the
// distributions ship for this; LLVM's symbolizer would do as well but brings LLVM into the
// analyzer. Built without libdw, every site is shown as module+offset with the command to resolve
// it, and the report says that no symbolizer was built in.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace collcheck::analyzer {

struct SourceLocation {
  bool resolved = false; // file and line known
  std::string function;  // demangled, empty when unknown
  std::string file;      // absolute or as compiled
  int line = 0;
  std::string module;  // the module's path as the process loaded it
  uint64_t offset = 0; // the return address in the module's ELF address space
  std::string hint;    // when not resolved: why, and how to resolve it
};

class Symbolizer {
public:
  // `debugDirs`: folders searched for a module missing at its recorded path (by file name) and for
  // separate debug files (DIR/.build-id/xx/yyyy.debug, DIR/NAME.debug).
  explicit Symbolizer(std::vector<std::string> debugDirs);
  ~Symbolizer();
  Symbolizer(const Symbolizer &) = delete;
  Symbolizer &operator=(const Symbolizer &) = delete;

  // `offset` is a return address: the call instruction is the byte before it.
  SourceLocation resolve(const std::string &module, const std::string &buildId, uint64_t offset);
  // Whether this build can read debug information at all.
  static bool available();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::map<std::tuple<std::string, std::string, uint64_t>, SourceLocation> cache_;
};

// "module+0x1a2b"
std::string moduleOffset(const std::string &module, uint64_t offset);

} // namespace collcheck::analyzer
