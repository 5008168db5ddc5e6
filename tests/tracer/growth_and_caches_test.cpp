// The recording path's helpers on their own: the writer's grower thread (the file grows ahead of
// the records, nothing is lost, the thread stops with the writer) and the handle caches of the MPI
// wrappers (a forgotten handle is looked up afresh by every thread).
#include "format/reader.h"
#include "format/writer.h"
#include "tracer/preload/device_copy.h"
#include "tracer/preload/handle_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <dlfcn.h>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace collcheck;
using namespace collcheck::tracer;

namespace {

uint64_t fileBytes(const std::string &path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

} // namespace

TEST(WriterGrower, ExtendsTheFileAheadOfTheRecordsAndLosesNone) {
  auto dir =
      std::filesystem::temp_directory_path() / ("collcheck-grow-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::string error, path;
  constexpr uint64_t kRecords = format::Writer::kChunkRecords * 3 + 5;
  {
    auto w = format::Writer::create(dir, "grow", {"host", "job", "test", 1}, error);
    ASSERT_TRUE(w) << error;
    ASSERT_TRUE(w->startGrower());
    path = w->path();
    for (uint64_t i = 0; i < kRecords; ++i) {
      format::Record *r = w->reserve();
      ASSERT_NE(r, nullptr) << i;
      r->kind = static_cast<uint8_t>(format::Kind::AllReduce);
      r->count = i;
      format::publish(*r);
    }
    // The records are in chunk 3; the grower maps kChunksAhead more without any record there.
    uint64_t want = format::kHeaderSize + (4 + format::Writer::kChunksAhead) *
                                              format::Writer::kChunkRecords * format::kRecordSize;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (fileBytes(path) < want && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(fileBytes(path), want) << "chunks in use and ahead, no more";
  } // the destructor stops and joins the grower
  auto reader = format::Reader::open(path, error);
  ASSERT_TRUE(reader) << error;
  ASSERT_EQ(reader->slotCount(), kRecords);
  for (uint64_t i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(reader->usable(i)) << i;
    EXPECT_EQ(reader->slot(i).count, i);
  }
  EXPECT_EQ(reader->header().droppedRecords, 0u);
  std::filesystem::remove_all(dir);
}

TEST(HandleCaches, AForgottenHandleIsLookedUpAfreshByEveryThread) {
  static HandleCache<4> cache; // 16 slots: probes wrap around
  const uintptr_t handle = 0x7f0012345670;
  HandleFacts facts;
  EXPECT_FALSE(cache.find(handle, facts));
  cache.insert(handle, {20, 16});
  ASSERT_TRUE(cache.find(handle, facts));
  EXPECT_EQ(facts.mapped, 20);
  EXPECT_EQ(facts.bytes, 16u);

  // Another thread's memo of the handle, made before the free.
  HandleMemo memo{handle, handleGeneration.load(), facts};
  EXPECT_TRUE(memo.matches(handle));
  std::thread([&] { cache.forget(handle); }).join();
  EXPECT_FALSE(memo.matches(handle)) << "a memo of an older generation must miss";
  EXPECT_FALSE(cache.find(handle, facts)) << "a forgotten handle is not in the table";

  // The same handle for a new object: its own facts, in the slot the old one left.
  cache.insert(handle, {20, 12});
  ASSERT_TRUE(cache.find(handle, facts));
  EXPECT_EQ(facts.bytes, 12u);

  // Handles that share a neighbourhood stay apart, and forgetting one keeps the others.
  std::vector<uintptr_t> others;
  for (uintptr_t h = 0x1000; others.size() < 6; h += 0x40)
    others.push_back(h);
  for (size_t i = 0; i < others.size(); ++i)
    cache.insert(others[i], {static_cast<uint8_t>(i), i});
  cache.forget(others[2]);
  for (size_t i = 0; i < others.size(); ++i) {
    bool found = cache.find(others[i], facts);
    if (i == 2) {
      EXPECT_FALSE(found);
      continue;
    }
    // A full neighbourhood may have turned one away: never a wrong answer.
    if (found) {
      EXPECT_EQ(facts.mapped, i) << i;
      EXPECT_EQ(facts.bytes, i) << i;
    }
  }
  ASSERT_TRUE(cache.find(handle, facts));
  EXPECT_EQ(facts.bytes, 12u);
}

#ifdef COLLCHECK_CUDA_DRIVER_DOUBLE
TEST(DeviceMemory, ALookThatFoundNoDriverHoldsBrieflyThenADriverLoadedSinceIsAsked) {
  using collcheck::tracer::hostMemoryAt;
  using collcheck::tracer::kNoDriverRecheckTicks;
  int host = 0;
  const uint64_t t = uint64_t{1} << 40;
  EXPECT_TRUE(hostMemoryAt(&host, t)) << "no driver loaded: host memory";
  // The CUDA driver's test double, loaded as a program loads the real one.
  void *driver = dlopen(COLLCHECK_CUDA_DRIVER_DOUBLE, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(driver, nullptr) << dlerror();
  auto deviceAlloc = reinterpret_cast<void *(*)(size_t)>(dlsym(driver, "collcheckTestDeviceAlloc"));
  ASSERT_NE(deviceAlloc, nullptr);
  void *device = deviceAlloc(64);
  // Within the interval no look is made (no device memory exists that soon after a real driver
  // is loaded); past it, the driver loaded since answers, and from then on every call asks it.
  EXPECT_TRUE(hostMemoryAt(device, t + 10));
  EXPECT_TRUE(hostMemoryAt(device, t + kNoDriverRecheckTicks - 1));
  EXPECT_FALSE(hostMemoryAt(device, t + kNoDriverRecheckTicks + 1));
  EXPECT_TRUE(hostMemoryAt(&host, t + kNoDriverRecheckTicks + 2));
  EXPECT_FALSE(hostMemoryAt(device, t + kNoDriverRecheckTicks + 3));
}
#endif
