// The call-site table on its own: a return address gets one index for the life of the process,
// whichever thread sees it first and however many see it at once; each distinct site is written
// once, with the module it lies in (path, build id, load address), so that a reader turns it back
// into the same address.
#include "format/reader.h"
#include "format/sites.h"
#include "tracer/preload/call_site.h"
#include "tracer/preload/core.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <elf.h>
#include <filesystem>
#include <fstream>
#include <link.h>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace collcheck;
using namespace collcheck::tracer;

namespace {

// The site of the place that called this function, as a wrapper records its caller's.
[[gnu::noinline]] uint16_t siteOfMyCaller(const void **address = nullptr) {
  const void *caller = __builtin_return_address(0);
  if (address)
    *address = caller;
  setCaller(caller, COLLCHECK_CALLER_FRAME);
  return currentSite();
}

// An application's own wrapper around a collective, built with a frame pointer: the site of the
// call inside it is told apart by the line that called the wrapper. `from`: that line's return
// address.
[[gnu::noinline, gnu::optimize("no-omit-frame-pointer")]] uint16_t
applicationWrapper(const void **from) {
  *from = __builtin_return_address(0);
  uint16_t site = siteOfMyCaller();
  asm volatile("" ::: "memory"); // a call, not a jump: the wrapper stays on the stack
  return site;
}

// Two more callers of the wrapper, each made again on every call of this function (a function of
// its own, not a loop the compiler could unroll into more call sites).
[[gnu::noinline]] std::pair<uint16_t, uint16_t> twoMoreCallers() {
  const void *unused = nullptr;
  uint16_t first = applicationWrapper(&unused);
  uint16_t second = applicationWrapper(&unused);
  return {first, second};
}

std::string traceFile(const std::filesystem::path &dir) {
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    return entry.path().string();
  return {};
}

} // namespace

TEST(CallSites, OneIndexPerReturnAddressWrittenOnceWithItsModule) {
  auto dir =
      std::filesystem::temp_directory_path() / ("collcheck-sites-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  setenv("COLLCHECK_OUTPUT", dir.c_str(), 1);
  ASSERT_NE(reserveSlot(), nullptr); // opens the file (a wrapper holds its slot when it looks up)

  const void *firstAddress = nullptr, *secondAddress = nullptr;
  uint16_t first = siteOfMyCaller(&firstAddress);
  uint16_t second = siteOfMyCaller(&secondAddress);
  ASSERT_NE(firstAddress, secondAddress);
  EXPECT_NE(first, format::kNoSite);
  EXPECT_NE(second, format::kNoSite);
  EXPECT_NE(first, second);

  // The same two places, again and from many threads: the same indices, no new record.
  std::vector<std::thread> threads;
  std::vector<std::pair<uint16_t, uint16_t>> seen(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 1000; ++i) {
        const void *a = nullptr;
        seen[t].first = siteOfMyCaller(&a);
        seen[t].second = siteOfMyCaller(&a);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  // The application's wrapper, called from two places: one site each, naming the caller.
  const void *fromFirst = nullptr, *fromSecond = nullptr;
  uint16_t wrappedFirst = applicationWrapper(&fromFirst);
  uint16_t wrappedSecond = applicationWrapper(&fromSecond);
  ASSERT_NE(fromFirst, fromSecond);
  EXPECT_NE(wrappedFirst, wrappedSecond);
  // Two more callers, each several times: the same two sites each time.
  std::pair<uint16_t, uint16_t> again = twoMoreCallers();
  EXPECT_NE(again.first, again.second);
  for (int i = 1; i < 3; ++i)
    EXPECT_EQ(twoMoreCallers(), again) << i;
  // A caller not known costs nothing and gets no site.
  setCaller(nullptr, nullptr);
  EXPECT_EQ(currentSite(), format::kNoSite);
  markFinished();

  std::string error;
  auto reader = format::Reader::open(traceFile(dir), error);
  ASSERT_TRUE(reader) << error;
  std::map<uint16_t, int> written;
  for (uint64_t i = 0; i < reader->slotCount(); ++i)
    if (reader->usable(i) && reader->slot(i).kind == static_cast<uint8_t>(format::Kind::CallSite))
      ++written[reader->slot(i).group];
  // Two sites in the loop of the threads (their own return addresses), two before: four, unless
  // the compiler copied the loop's calls.
  EXPECT_GE(written.size(), 4u);
  EXPECT_TRUE(written.count(first) && written.count(second));
  for (auto [site, count] : written)
    EXPECT_EQ(count, 1) << "site " << site << " written once";
  for (int t = 1; t < 8; ++t)
    EXPECT_EQ(seen[t], seen[0]) << "every thread got the same indices";

  format::SiteTable table = format::readSiteTable(*reader);
  const format::SiteInfo *site = table.site(first);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->address, reinterpret_cast<uintptr_t>(firstAddress));
  const format::ModuleInfo *module = table.module(site->module);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(module->complete);
  // This test program itself: its path, and an address the reader turns back into the same one.
  EXPECT_EQ(std::filesystem::canonical(module->path), std::filesystem::canonical("/proc/self/exe"));
  EXPECT_EQ(module->loadAddress + site->offset, site->address);
  EXPECT_EQ(site->from, 0u) << "a caller without a frame pointer is not followed";
  // The wrapper's two sites: the same return address, each with its own caller, in this program.
  const format::SiteInfo *viaFirst = table.site(wrappedFirst);
  const format::SiteInfo *viaSecond = table.site(wrappedSecond);
  ASSERT_TRUE(viaFirst && viaSecond);
  EXPECT_EQ(viaFirst->address, viaSecond->address);
  EXPECT_EQ(viaFirst->from, reinterpret_cast<uintptr_t>(fromFirst));
  EXPECT_EQ(viaSecond->from, reinterpret_cast<uintptr_t>(fromSecond));
  EXPECT_EQ(viaFirst->fromModule, site->module);
  EXPECT_EQ(module->loadAddress + viaFirst->fromOffset, viaFirst->from);
  EXPECT_GE(site->address, module->loadAddress + module->lowAddress);
  EXPECT_LT(site->address, module->loadAddress + module->lowAddress + module->span);
  // The build id, as the ELF note of the running program has it.
  std::string expected;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *out) -> int {
        if (info->dlpi_name && *info->dlpi_name)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_NOTE)
            continue;
          const char *p =
              reinterpret_cast<const char *>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
          const char *end = p + info->dlpi_phdr[i].p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *desc = p + sizeof *note + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID) {
              auto &hex = *static_cast<std::string *>(out);
              for (unsigned k = 0; k < note->n_descsz; ++k) {
                char two[3];
                std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(desc[k]));
                hex += two;
              }
              return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &expected);
  EXPECT_EQ(module->buildId, expected);
  std::filesystem::remove_all(dir);
}

TEST(CallSites, ASourceSiteNamesItsLineAndHoldsForItsThreadOnly) {
  auto dir =
      std::filesystem::temp_directory_path() / ("collcheck-source-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  setenv("COLLCHECK_OUTPUT", dir.c_str(), 1);
  ASSERT_NE(reserveSlot(), nullptr);

  uint16_t step12 = internSourceSite("/src/train.py", "step", 12);
  uint16_t native = siteOfMyCaller();
  EXPECT_NE(step12, format::kNoSite);
  EXPECT_EQ(internSourceSite("/src/train.py", "step", 12), step12) << "one index per line";
  uint16_t step13 = internSourceSite("/src/train.py", "step", 13);
  uint16_t eval12 = internSourceSite("/src/train.py", "evaluate", 12);
  std::string longName(200, 'f');
  uint16_t clipped = internSourceSite("/src/train.py", longName.c_str(), 1);
  EXPECT_EQ(std::set<uint16_t>({step12, step13, eval12, clipped, native}).size(), 5u);

  // While the thread has a source site, its calls carry it; another thread's do not.
  detail::outerSite = step13;
  EXPECT_EQ(siteOfMyCaller(), step13);
  uint16_t elsewhere = format::kNoSite;
  std::thread([&] { elsewhere = siteOfMyCaller(); }).join();
  EXPECT_NE(elsewhere, step13);
  EXPECT_NE(elsewhere, format::kNoSite);
  detail::outerSite = format::kNoSite;
  EXPECT_NE(siteOfMyCaller(), step13);
  markFinished();

  std::string error;
  auto reader = format::Reader::open(traceFile(dir), error);
  ASSERT_TRUE(reader) << error;
  format::SiteTable table = format::readSiteTable(*reader);
  auto line = [&](uint16_t index, const char *function, uint64_t number) {
    const format::SiteInfo *site = table.site(index);
    ASSERT_NE(site, nullptr) << index;
    EXPECT_TRUE(site->sourceLine);
    EXPECT_EQ(site->offset, number);
    const format::ModuleInfo *module = table.module(site->module);
    ASSERT_NE(module, nullptr);
    EXPECT_TRUE(module->source);
    EXPECT_TRUE(module->complete);
    EXPECT_EQ(module->path, "/src/train.py");
    EXPECT_EQ(module->function, function);
  };
  line(step12, "step", 12);
  line(step13, "step", 13);
  line(eval12, "evaluate", 12);
  line(clipped, longName.substr(0, 64).c_str(), 1);
  EXPECT_EQ(table.site(step12)->module, table.site(step13)->module) << "one module per function";
  EXPECT_NE(table.site(step12)->module, table.site(eval12)->module);
  const format::SiteInfo *own = table.site(native);
  ASSERT_NE(own, nullptr);
  EXPECT_FALSE(own->sourceLine);
  ASSERT_NE(table.module(own->module), nullptr);
  EXPECT_FALSE(table.module(own->module)->source);
  std::filesystem::remove_all(dir);
}
