#include "format/sites.h"

#include <algorithm>
#include <cstdio>

namespace collcheck::format {

void SiteTableBuilder::place(Text &t, uint32_t offset, const std::string &bytes) {
  for (size_t k = 0; k < bytes.size() && offset + k < t.bytes.size(); ++k) {
    t.bytes[offset + k] = bytes[k];
    t.have[offset + k] = true;
  }
}

bool SiteTableBuilder::add(const Record &r) {
  uint8_t kind = r.kind;
  if (kind != static_cast<uint8_t>(Kind::CallSite) && kind != static_cast<uint8_t>(Kind::Module) &&
      kind != static_cast<uint8_t>(Kind::ModuleText))
    return false;
  if (classify(r) != SlotState::Published)
    return false;
  if (kind == static_cast<uint8_t>(Kind::CallSite)) {
    if (r.group != kNoSite && r.group != kSiteOverflow)
      table_.sites[r.group] =
          SiteInfo{r.op == kSiteSourceLine,           r.commId, r.count, r.peer, r.aux, r.tscStart,
                   static_cast<int32_t>(r.window) - 1};
  } else if (kind == static_cast<uint8_t>(Kind::Module)) {
    // A length no writer produces leaves the module unknown rather than misread.
    if (r.peer < 0 || r.window > kMaxModuleText ||
        static_cast<uint64_t>(r.peer) + r.window > kMaxModuleText)
      return true;
    ModuleInfo &m = table_.modules[r.commRank];
    m.source = r.op == kModuleSource;
    m.loadAddress = r.commId;
    m.lowAddress = r.tscStart;
    m.span = r.count;
    Text &t = text_[r.commRank];
    t.buildIdBytes = r.window;
    t.bytes.assign(static_cast<size_t>(r.peer) + r.window, '\0');
    t.have.assign(t.bytes.size(), false);
    for (const auto &[offset, bytes] : early_[r.commRank])
      place(t, offset, bytes);
    early_.erase(r.commRank);
  } else {
    if (r.peer < 0 || static_cast<uint32_t>(r.peer) > kMaxModuleText)
      return true;
    std::string bytes(reinterpret_cast<const char *>(&r) + kModuleTextOffset,
                      std::min(r.window, kModuleTextBytes));
    auto it = text_.find(r.commRank);
    if (it == text_.end())
      early_[r.commRank].emplace_back(static_cast<uint32_t>(r.peer), std::move(bytes));
    else
      place(it->second, static_cast<uint32_t>(r.peer), bytes);
  }
  return true;
}

bool SiteTableBuilder::hasSite(uint16_t index) const {
  auto site = table_.sites.find(index);
  if (site == table_.sites.end())
    return false;
  auto complete = [&](int32_t module) {
    if (module < 0)
      return true;
    auto text = text_.find(module);
    return text != text_.end() && std::all_of(text->second.have.begin(), text->second.have.end(),
                                              [](bool b) { return b; });
  };
  return complete(site->second.module) && (!site->second.from || complete(site->second.fromModule));
}

SiteTable SiteTableBuilder::finish() {
  for (auto &[index, m] : table_.modules) {
    const Text &t = text_[index];
    m.complete = std::all_of(t.have.begin(), t.have.end(), [](bool b) { return b; });
    std::string head = t.bytes.substr(0, std::min(t.buildIdBytes, t.bytes.size()));
    if (m.source) {
      m.function = head.substr(0, head.find('\0'));
    } else {
      for (unsigned char c : head) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", c);
        m.buildId += two;
      }
    }
    m.path = t.bytes.substr(std::min(t.buildIdBytes, t.bytes.size()));
    // A piece lost to a torn record leaves NULs: the path is cut there rather than misread.
    m.path = m.path.substr(0, m.path.find('\0'));
  }
  return std::move(table_);
}

SiteTable readSiteTable(const Reader &reader) {
  SiteTableBuilder builder;
  for (uint64_t i = 0; i < reader.slotCount(); ++i)
    builder.add(reader.slot(i));
  return builder.finish();
}

} // namespace collcheck::format
