// Turns a call site (module path, build id, offset) into file:line and function from the module's
// debug information, with elfutils' libdw. libdw reads ELF and DWARF without running a process
// (dwfl "offline" reporting), finds separate debug files by build id as gdb does, and is what the
// distributions ship for this; LLVM's symbolizer would do as well but brings LLVM into the
// analyzer. Built without libdw, every site is shown as module+offset with the command to resolve
// it, and the report says that no symbolizer was built in.
#pragma once

#include "analyzer/model/finding.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace collcheck::analyzer {

// A place in the code (model/finding.h: function demangled, file absolute or as compiled, module
// as the process loaded it, offset in its ELF address space), and when it is not resolved, why and
// how to resolve it.
struct SourceLocation : CodePoint {
  std::string hint;
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
