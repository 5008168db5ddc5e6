#include "tracer/preload/call_site.h"

#include "format/record.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <map>
#include <new>
#include <pthread.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace collcheck::tracer {

namespace detail {
COLLCHECK_TLS const void *caller = nullptr;
COLLCHECK_TLS const void *callerFrame = nullptr;
COLLCHECK_TLS uint16_t outerSite = format::kNoSite;
COLLCHECK_TLS uintptr_t stackLow = 0, stackHigh = 0;
COLLCHECK_TLS SiteCacheEntry siteCache[kSiteCacheEntries];
} // namespace detail
using namespace detail;

namespace {

// The process-wide table: (return address, caller's return address) -> site index, open
// addressing, lock-free to read. At most kMaxSites entries in twice as many slots keeps the probes
// short.
constexpr size_t kTableSlots = size_t{1} << 17;
static_assert(kTableSlots >= 2 * format::kMaxSites);
std::atomic<uintptr_t> tableKeys[kTableSlots];
std::atomic<uintptr_t> tableFrom[kTableSlots];
std::atomic<uint16_t> tableSites[kTableSlots];

// Per return address, whether its function's caller is followed: kWalk where the function keeps a
// frame pointer (found on the address's first sight), kNoWalk otherwise, and kNoWalk too once the
// address has had kMaxCallers callers (beyond that, one site for all of them). Same layout.
enum : uint8_t { kUnknown = 0, kWalk = 1, kNoWalk = 2 };
constexpr uint16_t kMaxCallers = 64;
std::atomic<uintptr_t> walkKeys[kTableSlots];
std::atomic<uint8_t> walkStates[kTableSlots];
uint16_t walkCallers[kTableSlots]; // under `slowMutex`

// The slow path's state, under `slowMutex` (a plain pthread mutex, re-initialized in a forked
// child, where another thread of the parent may have held it).
pthread_mutex_t slowMutex = PTHREAD_MUTEX_INITIALIZER;
uint32_t sitesAssigned = 0;

struct Range {
  uintptr_t low, high;
};

struct KnownModule {
  int32_t index;
  uintptr_t base;      // load bias
  uintptr_t low, high; // absolute range of its loadable segments
  std::string name;
  std::vector<Range> code; // its executable segments: the only bytes read to check a caller
};
std::vector<KnownModule> *modules = nullptr; // allocated on the first slow path
int32_t modulesWritten = 0;

size_t tableSlotOf(uintptr_t address, uintptr_t from) {
  return static_cast<size_t>(((address ^ (from * 0xc2b2ae3d27d4eb4full)) * 0x9e3779b97f4a7c15ull) >>
                             (64 - 17));
}

// Both tables probe the same way: from the pair's slot, the first slot whose key is empty or
// matches. The keys are published last (release), so a matching key's other fields are there.
template <class Matches>
size_t probeFrom(const std::atomic<uintptr_t> *keys, size_t i, Matches matches) {
  for (size_t probe = 0; probe < kTableSlots; ++probe, i = (i + 1) & (kTableSlots - 1)) {
    uintptr_t key = keys[i].load(std::memory_order_acquire);
    if (key == 0 || matches(i, key))
      return i;
  }
  return i;
}

// The slot of the pair in the site table: its own, or the empty one where it would go.
size_t siteSlotOf(uintptr_t address, uintptr_t from) {
  return probeFrom(tableKeys, tableSlotOf(address, from), [&](size_t i, uintptr_t key) {
    return key == address && tableFrom[i].load(std::memory_order_relaxed) == from;
  });
}

uint16_t findInTable(uintptr_t address, uintptr_t from) {
  size_t i = siteSlotOf(address, from);
  return tableKeys[i].load(std::memory_order_acquire) == address &&
                 tableFrom[i].load(std::memory_order_relaxed) == from
             ? tableSites[i].load(std::memory_order_relaxed)
             : format::kNoSite;
}

// `slowMutex` held; the pair is not in the table.
void insertInTable(uintptr_t address, uintptr_t from, uint16_t site) {
  size_t i = siteSlotOf(address, from);
  if (tableKeys[i].load(std::memory_order_relaxed) != 0)
    return; // full (never: at most kMaxSites entries in twice as many slots)
  tableSites[i].store(site, std::memory_order_relaxed);
  tableFrom[i].store(from, std::memory_order_relaxed);
  tableKeys[i].store(address, std::memory_order_release);
}

// The slot of `address` in the walk table: its own, or the empty one where it would go.
size_t walkSlotOf(uintptr_t address) {
  return probeFrom(walkKeys, tableSlotOf(address, 0),
                   [&](size_t, uintptr_t key) { return key == address; });
}

uint8_t walkStateOf(uintptr_t address) {
  size_t i = walkSlotOf(address);
  return walkKeys[i].load(std::memory_order_acquire) == address
             ? walkStates[i].load(std::memory_order_relaxed)
             : uint8_t{kUnknown};
}

// `slowMutex` held.
void setWalkState(uintptr_t address, uint8_t state) {
  size_t i = walkSlotOf(address);
  walkStates[i].store(state, std::memory_order_relaxed);
  walkKeys[i].store(address, std::memory_order_release);
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

// A Module record and its text in ModuleText records, `head` (a build id, or a source function's
// name) then `path`.
void writeModule(Record rec, const std::string &head, const std::string &path) {
  std::string text = head + path.substr(0, format::kMaxModuleText - head.size());
  rec.kind = static_cast<uint8_t>(Kind::Module);
  rec.peer = static_cast<int32_t>(text.size() - head.size());
  rec.window = static_cast<uint32_t>(head.size());
  rec.setSeqThread(0, static_cast<uint16_t>(threadIndex < 0 ? 0 : threadIndex));
  writeRecord(rec);
  for (size_t at = 0; at < text.size(); at += format::kModuleTextBytes) {
    Record piece{};
    piece.kind = static_cast<uint8_t>(Kind::ModuleText);
    piece.commRank = rec.commRank;
    piece.peer = static_cast<int32_t>(at);
    size_t bytes = std::min<size_t>(format::kModuleTextBytes, text.size() - at);
    piece.window = static_cast<uint32_t>(bytes);
    std::memcpy(reinterpret_cast<char *>(&piece) + format::kModuleTextOffset, text.data() + at,
                bytes);
    writeRecord(piece);
  }
}

void writeModule(const KnownModule &m, const std::string &buildId) {
  Record rec{};
  rec.commRank = m.index;
  rec.commId = m.base;
  rec.tscStart = m.low - m.base;
  rec.count = m.high - m.low;
  writeModule(rec, buildId, m.name);
}

// One loaded object as dl_iterate_phdr shows it, read before it is compared with the known ones.
struct LoadedObject {
  uintptr_t base, low, high;
  std::string name, buildId;
  std::vector<Range> code;
};

int collectObject(dl_phdr_info *info, size_t, void *out) {
  uintptr_t low = UINTPTR_MAX, high = 0;
  std::vector<Range> code;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD)
      continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
    low = std::min(low, start);
    high = std::max(high, end);
    if (ph.p_flags & PF_X)
      code.push_back({start, start + ph.p_filesz});
  }
  if (low >= high)
    return 0;
  std::string name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : executablePath();
  static_cast<std::vector<LoadedObject> *>(out)->push_back(
      {info->dlpi_addr, low, high, std::move(name), buildIdOf(*info), std::move(code)});
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
    KnownModule m{modulesWritten++, o.base, o.low, o.high, std::move(o.name), std::move(o.code)};
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

// Whether [at, at + bytes) lies in the code of a known module: the only memory read to check a
// caller, so that no check can fault. `slowMutex` held.
bool inCode(uintptr_t at, size_t bytes) {
  if (!modules)
    return false;
  for (const KnownModule &m : *modules)
    for (const Range &r : m.code)
      if (at >= r.low && at + bytes <= r.high && at + bytes > at)
        return true;
  return false;
}

// Whether the function that made a call returning to `address` keeps a frame pointer, so that
// `frame` (its %rbp at the call) leads to its own return address. Its return address must follow
// a direct call (E8 rel32) to a function starting at most 1 MiB before `address` with the frame
// pointer prologue (push %rbp; mov %rsp,%rbp, after an endbr64 where the code has one). An
// address in a function without a frame pointer, or called through a pointer or a PLT, is not
// followed: the site is the return address alone. `slowMutex` held, modules up to date.
bool keepsFramePointer(uintptr_t address, const void *frame) {
  uintptr_t from = returnAddressOf(frame);
  if (from < 5 || !inCode(from - 5, 5))
    return false;
  const auto *call = reinterpret_cast<const unsigned char *>(from - 5);
  if (call[0] != 0xe8)
    return false;
  int32_t displacement;
  std::memcpy(&displacement, call + 1, sizeof displacement);
  uintptr_t target = from + static_cast<uintptr_t>(static_cast<intptr_t>(displacement));
  if (target > address || address - target > (uintptr_t{1} << 20) || !inCode(target, 8))
    return false;
  const auto *code = reinterpret_cast<const unsigned char *>(target);
  static constexpr unsigned char kEndbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
  static constexpr unsigned char kPrologue[] = {0x55, 0x48, 0x89, 0xe5};
  if (std::memcmp(code, kEndbr64, 4) == 0)
    code += 4;
  return std::memcmp(code, kPrologue, 4) == 0;
}

// First sight of a site in this process: assigns its index and writes its CallSite record.
// `slowMutex` held; the module map has been brought up to date where an address is in none.
uint16_t assignSite(uintptr_t address, uintptr_t from) {
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
  if (from) {
    const KnownModule *f = moduleOf(from);
    rec.aux = from;
    rec.tscStart = f ? from - f->base : from;
    rec.window = f ? static_cast<uint32_t>(f->index) + 1 : 0;
  }
  rec.setSeqThread(0, static_cast<uint16_t>(threadIndex < 0 ? 0 : threadIndex));
  writeRecord(rec);
  insertInTable(address, from, site);
  return site;
}

// This thread's stack bounds, once per thread; left empty (nothing is read) where unknown.
void learnStack() {
  static COLLCHECK_TLS bool tried = false;
  if (tried)
    return;
  tried = true;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0)
    return;
  void *low = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &low, &size) == 0 && low && size) {
    stackLow = reinterpret_cast<uintptr_t>(low);
    stackHigh = stackLow + size;
  }
  pthread_attr_destroy(&attr);
}

} // namespace

namespace detail {
uint16_t lookupSite(uintptr_t address, const void *frame) {
  if (address == 0)
    return format::kNoSite;
  learnStack();
  uint8_t walk = walkStateOf(address);
  uintptr_t from = walk == kWalk ? returnAddressOf(frame) : 0;
  uint16_t site = walk == kUnknown ? format::kNoSite : findInTable(address, from);
  if (site == format::kNoSite) {
    // The caller's caller, unchecked: it only decides whether the module map is read again.
    uintptr_t candidate = walk == kNoWalk ? 0 : returnAddressOf(frame);
    pthread_mutex_lock(&slowMutex);
    bool inModules = moduleOf(address) && (!candidate || moduleOf(candidate));
    pthread_mutex_unlock(&slowMutex);
    // Objects loaded since the last look (dlopen): the map is read again, new modules written.
    std::vector<LoadedObject> objects;
    if (!inModules)
      objects = loadedObjects();
    pthread_mutex_lock(&slowMutex);
    addModules(objects);
    walk = walkStateOf(address); // another thread may have settled it meanwhile
    if (walk == kUnknown) {
      walk = keepsFramePointer(address, frame) ? kWalk : kNoWalk;
      setWalkState(address, walk);
    }
    from = walk == kWalk ? returnAddressOf(frame) : 0;
    site = findInTable(address, from); // or assigned it
    if (site == format::kNoSite && from) {
      uint16_t &callers = walkCallers[walkSlotOf(address)];
      if (++callers > kMaxCallers) {
        // A wrapper called from everywhere: one site for all its further callers, and no more
        // look-ups for it.
        walk = kNoWalk;
        setWalkState(address, walk);
        from = 0;
        site = findInTable(address, from);
      }
    }
    if (site == format::kNoSite)
      site = assignSite(address, from);
    pthread_mutex_unlock(&slowMutex);
  }
  siteCache[siteCacheSlot(address)] = SiteCacheEntry{address, from, site, walk == kWalk};
  return site;
}
} // namespace detail

namespace {

// Source sites, numbered with the others: per (file, function) a source module, per line of it a
// site. Under `slowMutex`; the language runtime keeps its own cache in front (one call per
// distinct site and process).
std::map<std::pair<std::string, std::string>, int32_t> *sourceModules = nullptr;
std::map<std::pair<int32_t, uint32_t>, uint16_t> *sourceLines = nullptr;

uint16_t sourceSiteOf(const char *file, const char *function, uint32_t line) {
  // Bounded so that a module's text stays within format::kMaxModuleText.
  std::string path(file, strnlen(file, 4096)), name(function, strnlen(function, 64));
  if (!sourceModules) {
    sourceModules = new std::map<std::pair<std::string, std::string>, int32_t>();
    sourceLines = new std::map<std::pair<int32_t, uint32_t>, uint16_t>();
  }
  auto [module, isNew] = sourceModules->try_emplace({path, name}, modulesWritten);
  if (isNew) {
    Record rec{};
    rec.commRank = modulesWritten++;
    rec.op = format::kModuleSource;
    writeModule(rec, name, path);
  }
  auto [site, firstSight] = sourceLines->try_emplace({module->second, line}, format::kNoSite);
  if (!firstSight)
    return site->second;
  if (sitesAssigned >= format::kMaxSites)
    return site->second = format::kSiteOverflow;
  site->second = static_cast<uint16_t>(++sitesAssigned);
  Record rec{};
  rec.kind = static_cast<uint8_t>(Kind::CallSite);
  rec.op = format::kSiteSourceLine;
  rec.group = site->second;
  rec.count = line;
  rec.peer = module->second;
  rec.commRank = -1;
  rec.setSeqThread(0, static_cast<uint16_t>(threadIndex < 0 ? 0 : threadIndex));
  writeRecord(rec);
  return site->second;
}

} // namespace

uint16_t internSourceSite(const char *file, const char *function, uint32_t line) {
  pthread_mutex_lock(&slowMutex);
  uint16_t site = sourceSiteOf(file, function, line);
  pthread_mutex_unlock(&slowMutex);
  return site;
}

void forgetCallSitesAfterFork() {
  outerSite = format::kNoSite;
  if (sourceModules) {
    sourceModules->clear();
    sourceLines->clear();
  }
  new (&slowMutex) pthread_mutex_t(PTHREAD_MUTEX_INITIALIZER);
  for (size_t i = 0; i < kTableSlots; ++i) {
    if (tableKeys[i].load(std::memory_order_relaxed) != 0)
      tableKeys[i].store(0, std::memory_order_relaxed);
    if (walkKeys[i].load(std::memory_order_relaxed) != 0) {
      walkKeys[i].store(0, std::memory_order_relaxed);
      walkCallers[i] = 0;
    }
  }
  sitesAssigned = 0;
  if (modules)
    modules->clear();
  modulesWritten = 0;
  std::memset(static_cast<void *>(siteCache), 0, sizeof siteCache);
}

} // namespace collcheck::tracer
