// The trace format on its own: what the writer publishes reads back exactly; what is torn, corrupt,
// truncated or foreign is detected and named, never misread.
#include "format/reader.h"
#include "format/sites.h"
#include "format/writer.h"
#include "tests/support/scratch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace collcheck::format;
using collcheck::testing::freshDir;

namespace {

Writer::Identity identity() { return {"testhost", "job-1", "format_test", 1234}; }

Record sample(uint64_t i) {
  Record r{};
  r.kind = static_cast<uint8_t>(Kind::AllReduce);
  r.commId = 0xabcdef;
  r.setSeqThread(i, 3);
  r.count = i * 7 + 1;
  r.dataType = static_cast<uint8_t>(DataType::Float32);
  r.op = static_cast<uint8_t>(ReduceOp::Sum);
  r.commRank = 2;
  r.peer = -1;
  r.window = static_cast<uint32_t>(i / 10);
  r.tscStart = 1000 + i;
  return r;
}

std::string writeRecords(const std::string &dir, uint64_t n) {
  std::string error;
  auto w = Writer::create(dir, "trace", identity(), error);
  EXPECT_TRUE(w) << error;
  for (uint64_t i = 0; i < n; ++i) {
    Record *slot = w->reserve();
    *slot = sample(i);
    publish(*slot);
    storeDuration(*slot, 16 * (100 + i), false);
  }
  w->finish();
  return w->path();
}

void patch(const std::string &path, uint64_t offset, const void *bytes, size_t size) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char *>(bytes), static_cast<std::streamsize>(size));
}

uint64_t slotOffset(uint64_t i) { return kHeaderSize + i * kRecordSize; }

} // namespace

TEST(Format, PublishedRecordsReadBackExactlyAcrossChunks) {
  std::string dir = freshDir("roundtrip");
  const uint64_t n = Writer::kChunkRecords * 2 + 17; // three file extensions
  std::string path = writeRecords(dir, n);
  std::string error;
  auto reader = Reader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->slotCount(), n);
  EXPECT_EQ(reader->summary().published, n);
  EXPECT_EQ(reader->summary().torn + reader->summary().corrupt + reader->summary().holes, 0u);
  for (uint64_t i = 0; i < n; ++i) {
    Record want = sample(i);
    const Record &got = reader->slot(i);
    ASSERT_EQ(got.seq(), want.seq());
    ASSERT_EQ(got.count, want.count);
    ASSERT_EQ(got.window, want.window);
    ASSERT_EQ(got.thread(), 3);
    ASSERT_EQ(durationTicks(got), 16 * (100 + i));
  }
  EXPECT_EQ(reader->header().pid, 1234);
  EXPECT_STREQ(reader->header().host, "testhost");
  EXPECT_EQ(reader->header().finished, 1u);
}

TEST(Format, FolderAndFilePermissionsAndNoOverwrite) {
  std::string dir = freshDir("perms");
  std::string first = writeRecords(dir, 1);
  std::string second = writeRecords(dir, 1);
  EXPECT_NE(first, second) << "an existing trace is never overwritten";
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(first.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Format, PlantedSymlinksAreNotFollowed) {
  std::string base = freshDir("symlinks");
  std::filesystem::create_directories(base + "/real");
  std::filesystem::create_symlink(base + "/real", base + "/link");
  std::string error;
  EXPECT_FALSE(Writer::create(base + "/link", "trace", identity(), error));
  EXPECT_NE(error.find("symlink"), std::string::npos) << error;
  // A symlink where the file would go: the writer picks another name, the target is untouched.
  std::filesystem::create_directories(base + "/out");
  chmod((base + "/out").c_str(), 0700);
  { std::ofstream(base + "/victim") << "keep"; }
  std::filesystem::create_symlink(base + "/victim", base + "/out/trace.cctrace");
  auto w = Writer::create(base + "/out", "trace", identity(), error);
  ASSERT_TRUE(w) << error;
  EXPECT_EQ(w->path(), base + "/out/trace.1.cctrace");
  std::ifstream victim(base + "/victim");
  std::string content;
  victim >> content;
  EXPECT_EQ(content, "keep");
}

TEST(Format, TornRecordIsDetectedNotMisread) {
  std::string dir = freshDir("torn");
  std::string path = writeRecords(dir, 10);
  // A writer killed mid-record: bytes of slot 10 written, its check never published.
  Record partial = sample(10);
  partial.check = 0;
  patch(path, slotOffset(10), &partial, 40);
  std::string error;
  auto reader = Reader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->summary().published, 10u);
  EXPECT_EQ(reader->summary().torn, 1u);
  EXPECT_EQ(reader->summary().firstProblem, 10u);
  EXPECT_EQ(reader->state(10), SlotState::Torn);
  EXPECT_FALSE(reader->usable(10));
}

TEST(Format, BitFlipIsCorruptAndTheRestStillReads) {
  std::string dir = freshDir("bitflip");
  std::string path = writeRecords(dir, 10);
  unsigned char flipped = 0x5a;
  patch(path, slotOffset(4) + 33, &flipped, 1); // inside count
  std::string error;
  auto reader = Reader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->state(4), SlotState::Corrupt);
  EXPECT_EQ(reader->summary().corrupt, 1u);
  EXPECT_EQ(reader->summary().published, 9u);
  EXPECT_TRUE(reader->usable(5));
}

TEST(Format, HoleBeforeLaterPublishedRecordIsCounted) {
  std::string dir = freshDir("hole");
  std::string path = writeRecords(dir, 10);
  Record zero{};
  patch(path, slotOffset(3), &zero, sizeof zero);
  std::string error;
  auto reader = Reader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->summary().holes, 1u);
  EXPECT_EQ(reader->summary().published, 9u);
}

TEST(Format, ForeignTruncatedAndUnknownVersionFilesAreRejectedWithReasons) {
  std::string dir = freshDir("reject");
  std::string path = writeRecords(dir, 3);
  std::string error;
  {
    std::string copy = dir + "/short.cctrace";
    std::filesystem::copy_file(path, copy);
    std::filesystem::resize_file(copy, 100);
    EXPECT_FALSE(Reader::open(copy, error));
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;
    EXPECT_NE(error.find(copy), std::string::npos) << "the error names the file";
  }
  {
    std::string copy = dir + "/magic.cctrace";
    std::filesystem::copy_file(path, copy);
    patch(copy, 0, "NOTATRACE", 8);
    EXPECT_FALSE(Reader::open(copy, error));
    EXPECT_NE(error.find("not a collcheck trace"), std::string::npos) << error;
  }
  {
    std::string copy = dir + "/version.cctrace";
    std::filesystem::copy_file(path, copy);
    uint32_t version = 99;
    patch(copy, offsetof(FileHeader, version), &version, sizeof version);
    EXPECT_FALSE(Reader::open(copy, error));
    EXPECT_NE(error.find("unsupported trace version 99"), std::string::npos) << error;
  }
  {
    std::string copy = dir + "/endian.cctrace";
    std::filesystem::copy_file(path, copy);
    uint32_t swapped = __builtin_bswap32(kEndianTag);
    patch(copy, offsetof(FileHeader, endianTag), &swapped, sizeof swapped);
    EXPECT_FALSE(Reader::open(copy, error));
    EXPECT_NE(error.find("byte order"), std::string::npos) << error;
  }
  {
    std::string copy = dir + "/worldsize.cctrace";
    std::filesystem::copy_file(path, copy);
    int32_t absurd = 1 << 30;
    patch(copy, offsetof(FileHeader, worldSize), &absurd, sizeof absurd);
    EXPECT_FALSE(Reader::open(copy, error));
    EXPECT_NE(error.find("implausible world rank"), std::string::npos) << error;
  }
  {
    std::string copy = dir + "/partial.cctrace";
    std::filesystem::copy_file(path, copy);
    std::filesystem::resize_file(copy, kHeaderSize + 2 * kRecordSize + 20);
    auto reader = Reader::open(copy, error);
    ASSERT_TRUE(reader) << error;
    EXPECT_TRUE(reader->summary().partialTail);
    EXPECT_EQ(reader->summary().published, 2u);
  }
  EXPECT_FALSE(Reader::open(dir + "/missing.cctrace", error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(Format, AFinishedTraceIsReadUpToTheSlotsItsWriterHandedOut) {
  std::string dir = freshDir("finished-end");
  std::string path = writeRecords(dir, 100);
  std::string error;
  {
    // The file holds a whole 16,384-slot chunk; its header counts the 100 slots written.
    auto full = Reader::open(path, error);
    ASSERT_TRUE(full) << error;
    EXPECT_EQ(full->header().slotsAtFinish, 100u);
    EXPECT_EQ(full->slotCount(), 100u);
    auto streamed = Reader::open(path, error, Reader::Scan::HeaderOnly);
    ASSERT_TRUE(streamed) << error;
    EXPECT_EQ(streamed->slotCount(), 100u) << "the never-written end is left unread";
  }
  auto headerOnlySlots = [&](const std::string &file) {
    auto reader = Reader::open(file, error, Reader::Scan::HeaderOnly);
    EXPECT_TRUE(reader) << error;
    return reader ? reader->slotCount() : 0;
  };
  constexpr uint64_t kChunk = 16384;
  {
    // A record written after the trace was marked finished, right past the count: the whole
    // file is read, and the record with it.
    std::string copy = dir + "/late.cctrace";
    std::filesystem::copy_file(path, copy);
    Record late = sample(100);
    publish(late);
    patch(copy, slotOffset(100), &late, sizeof late);
    EXPECT_EQ(headerOnlySlots(copy), kChunk);
  }
  {
    // A count damaged downwards points into records: not trusted.
    std::string copy = dir + "/low.cctrace";
    std::filesystem::copy_file(path, copy);
    uint64_t low = 40;
    patch(copy, offsetof(FileHeader, slotsAtFinish), &low, sizeof low);
    EXPECT_EQ(headerOnlySlots(copy), kChunk);
  }
  {
    // Beyond the file, or from an older writer (0), or not finished: every slot is read.
    for (uint64_t count : {uint64_t{1} << 40, uint64_t{0}}) {
      std::string copy = dir + "/count" + std::to_string(count) + ".cctrace";
      std::filesystem::copy_file(path, copy);
      patch(copy, offsetof(FileHeader, slotsAtFinish), &count, sizeof count);
      EXPECT_EQ(headerOnlySlots(copy), kChunk) << count;
    }
    std::string copy = dir + "/unfinished.cctrace";
    std::filesystem::copy_file(path, copy);
    uint32_t no = 0;
    patch(copy, offsetof(FileHeader, finished), &no, sizeof no);
    EXPECT_EQ(headerOnlySlots(copy), kChunk);
  }
}

TEST(Format, DurationEncodingKeepsFailureAndSaturates) {
  Record r{};
  EXPECT_FALSE(returned(r));
  storeDuration(r, 0, false);
  EXPECT_TRUE(returned(r));
  EXPECT_EQ(durationTicks(r), 0u);
  storeDuration(r, 16 * 123 + 5, true); // below the 16-tick resolution is dropped
  EXPECT_TRUE(failed(r));
  EXPECT_EQ(durationTicks(r), 16u * 123);
  storeDuration(r, uint64_t{1} << 40, false);
  EXPECT_EQ(r.duration, kDurationSaturated);
  FileHeader h{};
  h.tscTicksPerNs = 2.0;
  storeDuration(r, 3200, false);
  EXPECT_DOUBLE_EQ(durationNanos(h, r), 1600.0);
}

TEST(Format, FullFilesystemStopsGrowthWithAClearError) {
  std::string dir = freshDir("full");
  std::filesystem::create_directories(dir);
  if (geteuid() != 0 || std::system(("mount -t tmpfs -o size=1200k tmpfs " + dir).c_str()) != 0)
    GTEST_SKIP() << "mounting a small tmpfs needs root";
  struct Unmount {
    std::string dir;
    ~Unmount() { EXPECT_EQ(std::system(("umount " + dir).c_str()), 0); }
  } unmount{dir};
  std::string error;
  auto w = Writer::create(dir + "/traces", "trace", identity(), error);
  ASSERT_TRUE(w) << error;
  uint64_t written = 0;
  for (uint64_t i = 0; i < Writer::kChunkRecords * 3; ++i) {
    Record *slot = w->reserve();
    if (!slot)
      break;
    *slot = sample(i);
    publish(*slot);
    ++written;
  }
  EXPECT_EQ(written, Writer::kChunkRecords) << "the first megabyte fits, the second does not";
  EXPECT_NE(w->failure().find("cannot extend trace file"), std::string::npos) << w->failure();
  EXPECT_EQ(w->reserve(), nullptr);
  EXPECT_GE(w->header().droppedRecords, 1u);
  std::string path = w->path();
  w.reset();
  auto reader = Reader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->summary().published, written);
  reader.reset(); // unmap before the filesystem goes away
}

namespace {

// A trace of `version` (the writer writes the current one; the header is patched, as an older
// writer would have left it): a call whose bytes 2..3 hold 5, and the call-site table of a
// version 3 writer (one module, its text in two pieces, one site in it).
std::string writeVersioned(const std::string &dir, uint32_t version) {
  std::string error;
  auto w = Writer::create(dir, "v" + std::to_string(version), identity(), error);
  EXPECT_TRUE(w) << error;
  Record call = sample(0);
  call.group = 5;
  Record module{};
  module.kind = static_cast<uint8_t>(Kind::Module);
  module.commRank = 0;
  module.commId = 0x7f0000000000;
  module.tscStart = 0x1000;
  module.count = 0x4000;
  std::string id("\x01\xab", 2), path = "/opt/app/bin/a-program-with-a-long-name-for-two-pieces";
  std::string text = id + path;
  module.peer = static_cast<int32_t>(path.size());
  module.window = static_cast<uint32_t>(id.size());
  Record site{};
  site.kind = static_cast<uint8_t>(Kind::CallSite);
  site.group = 5;
  site.commId = 0x7f0000001234;
  site.count = 0x1234;
  site.peer = 0;
  std::vector<Record> records{call, module};
  for (size_t at = 0; at < text.size(); at += kModuleTextBytes) {
    Record piece{};
    piece.kind = static_cast<uint8_t>(Kind::ModuleText);
    piece.commRank = 0;
    piece.peer = static_cast<int32_t>(at);
    size_t n = std::min<size_t>(kModuleTextBytes, text.size() - at);
    piece.window = static_cast<uint32_t>(n);
    std::memcpy(reinterpret_cast<char *>(&piece) + kModuleTextOffset, text.data() + at, n);
    records.push_back(piece);
  }
  records.push_back(site);
  // The pieces before their Module record, as another order of the writer's threads may leave.
  std::swap(records[1], records[2]);
  for (const Record &r : records) {
    Record *slot = w->reserve();
    *slot = r;
    publish(*slot);
  }
  w->finish();
  std::string path2 = w->path();
  w.reset();
  patch(path2, offsetof(FileHeader, version), &version, sizeof version);
  return path2;
}

} // namespace

TEST(Format, VersionsOneToFourAreReadAndCallSitesStartAtThree) {
  std::string dir = freshDir("versions");
  for (uint32_t version : {1u, 2u, 3u, 4u}) {
    std::string error;
    auto reader = Reader::open(writeVersioned(dir, version), error);
    ASSERT_TRUE(reader) << error;
    EXPECT_EQ(reader->header().version, version);
    const Record &call = reader->slot(0);
    ASSERT_EQ(call.kind, static_cast<uint8_t>(Kind::AllReduce));
    // Bytes 2..3 of a call: its site from version 3 on, its NCCL group ordinal before.
    EXPECT_EQ(callSite(call, version), version >= 3 ? 5 : kNoSite) << version;
    EXPECT_EQ(groupOrdinal(call, version), version >= 3 ? 0 : 5) << version;
  }
  EXPECT_EQ(kVersion, 4u);
}

TEST(Format, AValueCapturesSideIsReadInEitherVersionsEncoding) {
  // Version 4 says a value's side in `op` and gives flag bits 5 and 6 one meaning on every kind;
  // up to version 3 they said "output" and "integer" on value records.
  Record v4{};
  v4.kind = static_cast<uint8_t>(Kind::ValueCapture);
  v4.count = 1;
  v4.peer = 2;
  v4.setAuxDouble(7.0);
  CapturedValue values[2 * kPackedMaxElements];
  for (bool output : {false, true}) {
    v4.op = output ? kPackedOutputs : kPackedInputs;
    ASSERT_EQ(capturedValues(v4, values), 1);
    EXPECT_EQ(values[0].output, output);
    EXPECT_EQ(values[0].index, 1u);
    EXPECT_EQ(values[0].elements, 2u);
    EXPECT_EQ(values[0].value, 7.0);
    // A version 4 reader never reads bit 5 as the side: here it is an input whatever bit 5 says.
    v4.flags = kFlagIntercomm;
    ASSERT_EQ(capturedValues(v4, values), 1);
    EXPECT_EQ(values[0].output, output);
    v4.flags = 0;
  }
  Record v3 = v4;
  v3.op = 0;
  for (uint8_t flags : {uint8_t{0}, kFlagsBefore4CaptureOutput,
                        uint8_t(kFlagsBefore4CaptureOutput | kFlagsBefore4Integral)}) {
    v3.flags = static_cast<uint8_t>(flags | kFlagNccl);
    ASSERT_EQ(capturedValues(v3, values), 1);
    EXPECT_EQ(values[0].output, (flags & kFlagsBefore4CaptureOutput) != 0);
    // Their old meanings are dropped from the flags of old value records, kept everywhere else.
    EXPECT_EQ(recordFlags(v3.kind, v3.flags, 3), kFlagNccl);
    EXPECT_EQ(recordFlags(v3.kind, v3.flags, 4), v3.flags);
    EXPECT_EQ(recordFlags(static_cast<uint8_t>(Kind::AllReduce), v3.flags, 3), v3.flags);
  }
}

TEST(Format, TheSiteTableIsAssembledFromItsRecordsInAnyOrder) {
  std::string dir = freshDir("sites");
  std::string error;
  auto reader = Reader::open(writeVersioned(dir, 3), error);
  ASSERT_TRUE(reader) << error;
  SiteTable table = readSiteTable(*reader);
  const SiteInfo *site = table.site(5);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->address, 0x7f0000001234u);
  EXPECT_EQ(site->offset, 0x1234u);
  const ModuleInfo *module = table.module(site->module);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->path, "/opt/app/bin/a-program-with-a-long-name-for-two-pieces");
  EXPECT_EQ(module->buildId, "01ab");
  EXPECT_EQ(module->loadAddress, 0x7f0000000000u);
  EXPECT_EQ(module->span, 0x4000u);
  EXPECT_TRUE(module->complete);
  EXPECT_EQ(table.site(6), nullptr);

  // A lost piece of the module's text: the path is cut there and the module says it is
  // incomplete, never a path made of other bytes.
  SiteTableBuilder builder;
  for (uint64_t i = 0; i < reader->slotCount(); ++i) {
    const Record &r = reader->slot(i);
    if (r.kind == static_cast<uint8_t>(Kind::ModuleText) && r.peer > 0)
      continue;
    builder.add(r);
  }
  EXPECT_FALSE(builder.hasSite(5));
  SiteTable partial = builder.finish();
  ASSERT_NE(partial.module(0), nullptr);
  EXPECT_FALSE(partial.module(0)->complete);
  EXPECT_EQ(partial.module(0)->path, "/opt/app/bin/a-program-with-a-long-nam");
}

TEST(Format, ACallHoldingItsValuesDecodesThemAndNoDuration) {
  // A one-element MPI count reduction (version 4): input in aux, output in duration as n - 2.
  Record call{};
  call.kind = static_cast<uint8_t>(Kind::AllReduce);
  call.count = 1;
  call.peer = kPeerHoldsValues;
  call.setAuxDouble(4.0);
  CapturedValue values[2 * kPackedMaxElements];
  for (uint32_t duration : {0u, 1u, 5u, 5u | kDurationFailedBit, kDurationSaturated}) {
    call.duration = duration;
    int n = capturedValues(call, values);
    uint32_t code = duration & kDurationSaturated;
    ASSERT_EQ(n, code >= kHeldOutputBias ? 2 : 1) << duration;
    EXPECT_FALSE(values[0].output);
    EXPECT_EQ(values[0].value, 4.0);
    if (n == 2) {
      EXPECT_TRUE(values[1].output);
      EXPECT_EQ(values[1].value, static_cast<double>(code - kHeldOutputBias)) << duration;
    }
    EXPECT_EQ(durationTicks(call), 0u) << "no time in it";
    EXPECT_EQ(returned(call), duration != 0);
    EXPECT_EQ(failed(call), (duration & kDurationFailedBit) != 0);
  }
  // Not on NCCL records, other kinds, or an all-reduce with the usual peer.
  Record nccl = call;
  nccl.flags = kFlagNccl;
  Record plain = call;
  plain.peer = -1;
  Record broadcast = call;
  broadcast.kind = static_cast<uint8_t>(Kind::Broadcast);
  for (const Record *r : {&nccl, &plain, &broadcast}) {
    EXPECT_FALSE(holdsValues(*r));
    EXPECT_EQ(capturedValues(*r, values), 0);
  }
}
