#include "call_site.h"

#include "format/record.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <new>
#include <pthread.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace collcheck::tracer {

namespace detail {
COLLCHECK_TLS const void *caller = nullptr;
COLLCHECK_TLS SiteCacheEntry siteCache[kSiteCacheEntries];
} // namespace detail
using namespace detail;

namespace {

// The process-wide table: return address -> site index, open addressing, lock-free to read. At
// most kMaxSites entries in twice as many slots keeps the probes short.
constexpr size_t kTableSlots = size_t{1} << 17;
static_assert(kTableSlots >= 2 * format::kMaxSites);
std::atomic<uintptr_t> tableKeys[kTableSlots];
std::atomic<uint16_t> tableSites[kTableSlots];

// The slow path's state, under `slowMutex` (a plain pthread mutex, re-initialized in a forked
// child, where another thread of the parent may have held it).
pthread_mutex_t slowMutex = PTHREAD_MUTEX_INITIALIZER;
uint32_t sitesAssigned = 0;

struct KnownModule {
  int32_t index;
  uintptr_t base;      // load bias
  uintptr_t low, high; // absolute range of its loadable segments
  std::string name;
};
std::vector<KnownModule> *modules = nullptr; // allocated on the first slow path
int32_t modulesWritten = 0;

size_t tableSlotOf(uintptr_t address) {
  return static_cast<size_t>((address * 0x9e3779b97f4a7c15ull) >> (64 - 17));
}

uint16_t findInTable(uintptr_t address) {
  size_t i = tableSlotOf(address);
  for (size_t probe = 0; probe < kTableSlots; ++probe, i = (i + 1) & (kTableSlots - 1)) {
    uintptr_t key = tableKeys[i].load(std::memory_order_acquire);
    if (key == address)
      return tableSites[i].load(std::memory_order_relaxed);
    if (key == 0)
      return format::kNoSite;
  }
  return format::kNoSite;
}

void insertInTable(uintptr_t address, uint16_t site) {
  size_t i = tableSlotOf(address);
  for (size_t probe = 0; probe < kTableSlots; ++probe, i = (i + 1) & (kTableSlots - 1)) {
    if (tableKeys[i].load(std::memory_order_relaxed) == 0) {
      tableSites[i].store(site, std::memory_order_relaxed);
      tableKeys[i].store(address, std::memory_order_release);
      return;
    }
  }
}

// The GNU build id of a loaded object, from its PT_NOTE segments in memory (no file read).
std::string buildIdOf(const dl_phdr_info &info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    const char *p = reinterpret_cast<const char *>(info.dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    size_t align = ph.p_align > 4 ? 8 : 4;
    auto up = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const char *name = p + sizeof note;
      const char *desc = name + up(note.n_namesz);
      if (desc + note.n_descsz > end)
        break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return std::string(desc, std::min<size_t>(note.n_descsz, 64));
      p = desc + up(note.n_descsz);
    }
  }
  return {};
}

std::string executablePath() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

void writeRecord(const Record &rec) {
  if (Record *slot = reserveSlot())
    commit(*slot, rec);
}

void writeModule(const KnownModule &m, const std::string &buildId) {
  std::string text = buildId + m.name.substr(0, format::kMaxModuleText - buildId.size());
  Record rec{};
  rec.kind = static_cast<uint8_t>(Kind::Module);
  rec.commRank = m.index;
  rec.commId = m.base;
  rec.tscStart = m.low - m.base;
  rec.count = m.high - m.low;
  rec.peer = static_cast<int32_t>(text.size() - buildId.size());
  rec.window = static_cast<uint32_t>(buildId.size());
  rec.setSeqThread(0, static_cast<uint16_t>(threadIndex < 0 ? 0 : threadIndex));
  writeRecord(rec);
  for (size_t at = 0; at < text.size(); at += format::kModuleTextBytes) {
    Record piece{};
    piece.kind = static_cast<uint8_t>(Kind::ModuleText);
    piece.commRank = m.index;
    piece.peer = static_cast<int32_t>(at);
    size_t bytes = std::min<size_t>(format::kModuleTextBytes, text.size() - at);
    piece.window = static_cast<uint32_t>(bytes);
    std::memcpy(reinterpret_cast<char *>(&piece) + format::kModuleTextOffset, text.data() + at,
                bytes);
    writeRecord(piece);
  }
}

// One loaded object as dl_iterate_phdr shows it, read before it is compared with the known ones.
struct LoadedObject {
  uintptr_t base, low, high;
  std::string name, buildId;
};

int collectObject(dl_phdr_info *info, size_t, void *out) {
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD)
      continue;
    low = std::min<uintptr_t>(low, info->dlpi_addr + ph.p_vaddr);
    high = std::max<uintptr_t>(high, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (low >= high)
    return 0;
  std::string name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : executablePath();
  static_cast<std::vector<LoadedObject> *>(out)->push_back(
      {info->dlpi_addr, low, high, std::move(name), buildIdOf(*info)});
  return 0;
}

// The loaded objects, read without `slowMutex` held: dl_iterate_phdr takes the loader's lock, and
// a library constructor running under that lock may make a traced call and want `slowMutex`.
std::vector<LoadedObject> loadedObjects() {
  std::vector<LoadedObject> objects;
  dl_iterate_phdr(collectObject, &objects);
  return objects;
}

// Writes the objects not known yet and adds them to the map. `slowMutex` held.
void addModules(std::vector<LoadedObject> &objects) {
  if (!modules)
    modules = new std::vector<KnownModule>();
  for (LoadedObject &o : objects) {
    bool known = false;
    for (const KnownModule &m : *modules)
      known = known || (m.base == o.base && m.low == o.low && m.name == o.name);
    if (known)
      continue;
    // An object loaded where an unloaded one was: the old entry no longer describes those
    // addresses.
    std::erase_if(*modules, [&](const KnownModule &m) { return m.low < o.high && o.low < m.high; });
    KnownModule m{modulesWritten++, o.base, o.low, o.high, std::move(o.name)};
    writeModule(m, o.buildId);
    modules->push_back(std::move(m));
  }
}

const KnownModule *moduleOf(uintptr_t address) {
  if (!modules)
    return nullptr;
  for (const KnownModule &m : *modules)
    if (address >= m.low && address < m.high)
      return &m;
  return nullptr;
}

// First sight of a site in this process: assigns its index and writes its CallSite record.
// `slowMutex` held; the module map has been brought up to date where the address is in none.
uint16_t assignSite(uintptr_t address) {
  if (sitesAssigned >= format::kMaxSites)
    return format::kSiteOverflow;
  const KnownModule *m = moduleOf(address);
  auto site = static_cast<uint16_t>(++sitesAssigned);
  Record rec{};
  rec.kind = static_cast<uint8_t>(Kind::CallSite);
  rec.group = site;
  rec.commId = address;
  rec.count = m ? address - m->base : address;
  rec.peer = m ? m->index : -1;
  rec.commRank = -1;
  rec.setSeqThread(0, static_cast<uint16_t>(threadIndex < 0 ? 0 : threadIndex));
  writeRecord(rec);
  insertInTable(address, site);
  return site;
}

} // namespace

namespace detail {
uint16_t lookupSite(uintptr_t address) {
  if (address == 0)
    return format::kNoSite;
  uint16_t site = findInTable(address);
  if (site == format::kNoSite) {
    pthread_mutex_lock(&slowMutex);
    bool inModule = moduleOf(address) != nullptr;
    pthread_mutex_unlock(&slowMutex);
    // Objects loaded since the last look (dlopen): the map is read again, new modules written.
    std::vector<LoadedObject> objects;
    if (!inModule)
      objects = loadedObjects();
    pthread_mutex_lock(&slowMutex);
    site = findInTable(address); // another thread may have assigned it meanwhile
    if (site == format::kNoSite) {
      addModules(objects);
      site = assignSite(address);
    }
    pthread_mutex_unlock(&slowMutex);
  }
  siteCache[siteCacheSlot(address)] = SiteCacheEntry{address, site};
  return site;
}
} // namespace detail

void forgetCallSitesAfterFork() {
  new (&slowMutex) pthread_mutex_t(PTHREAD_MUTEX_INITIALIZER);
  for (size_t i = 0; i < kTableSlots; ++i)
    if (tableKeys[i].load(std::memory_order_relaxed) != 0)
      tableKeys[i].store(0, std::memory_order_relaxed);
  sitesAssigned = 0;
  if (modules)
    modules->clear();
  modulesWritten = 0;
  std::memset(static_cast<void *>(siteCache), 0, sizeof siteCache);
}

} // namespace collcheck::tracer
