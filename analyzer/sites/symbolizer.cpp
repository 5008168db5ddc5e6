#include "analyzer/sites/symbolizer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#ifdef COLLCHECK_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

namespace collcheck::analyzer {

namespace {

std::string hex(uint64_t v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(v));
  return buffer;
}

#ifdef COLLCHECK_HAVE_LIBDW
std::string demangle(const char *name) {
  if (!name)
    return {};
  int status = 0;
  char *out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out ? out : name;
  std::free(out);
  return result;
}
#endif

bool readable(const std::string &path) { return !path.empty() && access(path.c_str(), R_OK) == 0; }

#ifdef COLLCHECK_HAVE_LIBDW
// The function the call is in, inlined ones included: a wrapper inlined into its caller is still
// the wrapper, as the line says.
std::string innermostFunction(Dwfl_Module *mod, Dwarf_Addr pc) {
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
  if (!cu)
    return {};
  Dwarf_Die *scopes = nullptr;
  int n = dwarf_getscopes(cu, pc - bias, &scopes);
  std::string name;
  for (int i = 0; i < n && name.empty(); ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
      continue;
    Dwarf_Attribute attr;
    const char *linkage =
        dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
    const char *plain = dwarf_diename(&scopes[i]);
    name = linkage ? demangle(linkage) : plain ? plain : "";
  }
  std::free(scopes);
  return name;
}

// A source path as compiled may be relative to the compilation's folder (DW_AT_comp_dir).
std::string absoluteSource(const char *file, Dwarf_Die *cu) {
  std::filesystem::path p(file);
  if (!p.is_absolute() && cu) {
    Dwarf_Attribute attr;
    if (const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)))
      p = std::filesystem::path(dir) / p;
  }
  return p.lexically_normal().string();
}
#endif

} // namespace

std::string moduleOffset(const std::string &module, uint64_t offset) {
  return (module.empty() ? std::string("?") : module) + "+" + hex(offset);
}

#ifdef COLLCHECK_HAVE_LIBDW
struct Symbolizer::Impl {
  std::vector<std::string> dirs;
  std::string debugPath; // dwfl's search path for separate debug files
  Dwfl_Callbacks callbacks{};
  char *debugPathPtr = nullptr;
  // One session per module file: modules are reported at their own addresses, so two of them in
  // one session could overlap.
  std::map<std::string, Dwfl *> sessions;

  ~Impl() {
    for (auto &[path, dwfl] : sessions)
      if (dwfl)
        dwfl_end(dwfl);
  }
  Dwfl *session(const std::string &path) {
    auto it = sessions.find(path);
    if (it != sessions.end())
      return it->second;
    Dwfl *dwfl = dwfl_begin(&callbacks);
    if (dwfl) {
      dwfl_report_begin(dwfl);
      if (!dwfl_report_offline(dwfl, path.c_str(), path.c_str(), -1)) {
        dwfl_end(dwfl);
        dwfl = nullptr;
      } else {
        dwfl_report_end(dwfl, nullptr, nullptr);
      }
    }
    sessions[path] = dwfl;
    return dwfl;
  }
};

bool Symbolizer::available() { return true; }

Symbolizer::Symbolizer(std::vector<std::string> debugDirs) : impl_(std::make_unique<Impl>()) {
  impl_->dirs = std::move(debugDirs);
  // "-": no CRC check of a .gnu_debuglink file (a rebuilt debug file is caught by the build id).
  impl_->debugPath = "-:.debug:/usr/lib/debug";
  for (const std::string &d : impl_->dirs)
    impl_->debugPath += ":" + d;
  impl_->debugPathPtr = impl_->debugPath.data();
  impl_->callbacks.find_elf = dwfl_build_id_find_elf;
  impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  impl_->callbacks.debuginfo_path = &impl_->debugPathPtr;
}
#else
struct Symbolizer::Impl {
  std::vector<std::string> dirs;
};
bool Symbolizer::available() { return false; }
Symbolizer::Symbolizer(std::vector<std::string> debugDirs) : impl_(std::make_unique<Impl>()) {
  impl_->dirs = std::move(debugDirs);
}
#endif

Symbolizer::~Symbolizer() = default;

SourceLocation Symbolizer::resolve(const std::string &module, const std::string &buildId,
                                   uint64_t offset) {
  auto key = std::make_tuple(module, buildId, offset);
  if (auto it = cache_.find(key); it != cache_.end())
    return it->second;
  SourceLocation loc;
  loc.module = module;
  loc.offset = offset;
  // The module where it was, else one of the same name in a --debug-dir.
  std::string path = module;
  if (!readable(path)) {
    path.clear();
    std::string name = std::filesystem::path(module).filename().string();
    for (const std::string &d : impl_->dirs)
      if (!name.empty() && readable(d + "/" + name)) {
        path = d + "/" + name;
        break;
      }
  }
  std::string call = hex(offset > 0 ? offset - 1 : 0);
  std::string addr2line = "`addr2line -f -i -C -e " +
                          (module.empty() ? std::string("MODULE") : module) + " " + call + "`";
  std::string resolveHint = "resolve with " + addr2line +
                            ", or give the folder holding the binary or its debug file with "
                            "--debug-dir DIR";
#ifdef COLLCHECK_HAVE_LIBDW
  Dwfl *dwfl = path.empty() ? nullptr : impl_->session(path);
  Dwfl_Module *mod = nullptr;
  if (dwfl) // one module per session
    dwfl_getmodules(
        dwfl,
        [](Dwfl_Module *m, void **, const char *, Dwarf_Addr, void *arg) -> int {
          *static_cast<Dwfl_Module **>(arg) = m;
          return DWARF_CB_ABORT;
        },
        &mod, 0);
  if (!mod) {
    loc.hint = path.empty() ? "the module is not at hand on this machine; " + resolveHint
                            : "the module could not be read as ELF; " + resolveHint;
  } else {
    // Reported offline, a shared object is placed at an address of the session's choosing: the
    // bias turns an ELF address into a session address.
    Dwarf_Addr bias = 0;
    dwfl_module_getelf(mod, &bias);
    Dwarf_Addr pc = (offset > 0 ? offset - 1 : 0) + bias;
    const unsigned char *bits = nullptr;
    GElf_Addr vaddr = 0;
    int idBytes = dwfl_module_build_id(mod, &bits, &vaddr);
    std::string fileId;
    for (int i = 0; i < idBytes; ++i) {
      char two[3];
      std::snprintf(two, sizeof two, "%02x", bits[i]);
      fileId += two;
    }
    if (!buildId.empty() && idBytes > 0 && fileId != buildId) {
      loc.hint = "the binary at hand is not the one that ran (build id " + fileId + ", the trace " +
                 "recorded " + buildId + "); " + resolveHint;
    } else {
      loc.function = innermostFunction(mod, pc);
      if (loc.function.empty()) {
        GElf_Sym sym;
        GElf_Off symOffset = 0;
        loc.function =
            demangle(dwfl_module_addrinfo(mod, pc, &symOffset, &sym, nullptr, nullptr, nullptr));
      }
      if (Dwfl_Line *line = dwfl_module_getsrc(mod, pc)) {
        int lineNo = 0;
        const char *file = dwfl_lineinfo(line, nullptr, &lineNo, nullptr, nullptr, nullptr);
        if (file && lineNo > 0) {
          loc.file = absoluteSource(file, dwfl_linecu(line));
          loc.line = lineNo;
          loc.resolved = true;
        }
      }
      if (!loc.resolved)
        loc.hint = "no line information for this address (the binary is stripped or was built "
                   "without -g); " +
                   resolveHint;
    }
  }
#else
  (void)resolveHint; // --debug-dir needs libdw: only the command is offered
  loc.hint = "this collcheck was built without libdw, so it cannot read debug information; "
             "resolve with " +
             addr2line + " (on the machine that has the binary with its debug information)";
#endif
  cache_.emplace(key, loc);
  return loc;
}

} // namespace collcheck::analyzer
