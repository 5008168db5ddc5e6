// A trace's call-site table and module map (version 3; source sites from version 4), read from its
// CallSite, Module and ModuleText records: what the analyzer needs to say where each call was made.
#pragma once

#include "format/reader.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace collcheck::format {

struct ModuleInfo {
  bool source = false;      // a function of a program's source (Python), not a loaded object
  std::string function;     // a source module's function name
  uint64_t loadAddress = 0; // the bias the ELF's addresses are relative to
  uint64_t lowAddress = 0;  // lowest loadable segment, relative to the load address
  uint64_t span = 0;        // bytes from the lowest to the highest loadable segment end
  std::string path;         // as the loader names it ("" for the main program on some systems)
  std::string buildId;      // hex, empty when the object has none
  bool complete = false;    // every byte of its text was read (a torn record loses some)
};

struct SiteInfo {
  bool sourceLine = false; // a line of a source module: `offset` is the line, no address
  uint64_t address = 0;    // the return address in the process
  uint64_t offset = 0;     // the address in the module's ELF address space (address - load)
  int32_t module = -1;     // index into SiteTable::modules, -1 when in no known module
  // Where the function that made the call keeps a frame pointer: its own return address (the
  // line that called the application's wrapper), 0 when not recorded.
  uint64_t from = 0;
  uint64_t fromOffset = 0;
  int32_t fromModule = -1;
};

struct SiteTable {
  std::map<uint16_t, SiteInfo> sites;    // by site index
  std::map<int32_t, ModuleInfo> modules; // by module index
  const SiteInfo *site(uint16_t index) const {
    auto it = sites.find(index);
    return it == sites.end() ? nullptr : &it->second;
  }
  const ModuleInfo *module(int32_t index) const {
    auto it = modules.find(index);
    return it == modules.end() ? nullptr : &it->second;
  }
};

// Assembles a table from records handed in any order (a reader's scan of its own): records of
// other kinds are ignored, and so is a record that is not published.
class SiteTableBuilder {
public:
  // Whether the record was one of the table's.
  bool add(const Record &r);
  // Whether a site and the module it lies in are complete so far.
  bool hasSite(uint16_t index) const;
  SiteTable finish();

private:
  SiteTable table_;
  struct Text {
    size_t buildIdBytes = 0;
    std::string bytes;
    std::vector<bool> have;
  };
  std::map<int32_t, Text> text_;
  std::map<int32_t, std::vector<std::pair<uint32_t, std::string>>> early_; // before the Module
  void place(Text &t, uint32_t offset, const std::string &bytes);
};

// Reads the table from every slot of a reader.
SiteTable readSiteTable(const Reader &reader);

} // namespace collcheck::format
