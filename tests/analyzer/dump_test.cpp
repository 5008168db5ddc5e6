// collcheck dump: files written by format::Writer print as a header object and JSON Lines; a file
// that is truncated, bit-flipped, foreign or of another version is refused (exit 2) or named slot
// by slot, never misread.
#include "format/writer.h"
#include "tests/analyzer/job_builder.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

using namespace collcheck;
using namespace collcheck::testing;

namespace {

struct CommandResult {
  int status = -1;
  std::string out, err;
};

CommandResult runCollcheck(const std::string &args) {
  std::string errFile =
      std::filesystem::temp_directory_path() / ("collcheck-dump-err-" + std::to_string(getpid()));
  std::string command = std::string(COLLCHECK_BIN) + " " + args + " 2>" + errFile;
  CommandResult run;
  FILE *p = popen(command.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    run.out.append(buf.data(), n);
  int st = pclose(p);
  run.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(errFile);
  std::stringstream ss;
  ss << e.rdbuf();
  run.err = ss.str();
  std::filesystem::remove(errFile);
  return run;
}

std::vector<nlohmann::json> lines(const std::string &out) {
  std::vector<nlohmann::json> all;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    all.push_back(nlohmann::json::parse(line));
  return all;
}

std::string oneFile(const std::string &name) {
  std::string dir = freshDir(name);
  RankTrace t(1, 2);
  t.call(allreduce(1024)).call(bcast(16, 0)).call(barrier(), kWorld, false);
  return writeJob(dir, {RankTrace(0, 2), t})[1];
}

void patch(const std::string &path, uint64_t offset, const void *bytes, size_t size) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char *>(bytes), static_cast<std::streamsize>(size));
}

TEST(Dump, HeaderThenOneRecordALine) {
  std::string path = oneFile("dump-ok");
  CommandResult run = runCollcheck("dump " + path);
  ASSERT_EQ(run.status, 0) << run.err;
  auto all = lines(run.out);
  ASSERT_EQ(all.size(), 6u); // header, comm_create, comm_members, 3 calls
  EXPECT_EQ(all[0]["world_rank"], 1);
  EXPECT_EQ(all[0]["job_id"], "job-1");
  EXPECT_EQ(all[1]["kind"], "comm_create");
  EXPECT_EQ(all[1]["origin"], "world");
  EXPECT_EQ(all[2]["kind"], "comm_members");
  EXPECT_EQ(all[2]["members"], nlohmann::json::parse("[0,1]"));
  EXPECT_EQ(all[3]["kind"], "allreduce");
  EXPECT_EQ(all[3]["comm"], "0x776f726c64000001");
  EXPECT_EQ(all[3]["seq"], 0);
  EXPECT_EQ(all[3]["count"], 1024);
  EXPECT_EQ(all[3]["dtype"], "float32");
  EXPECT_EQ(all[3]["op"], "sum");
  EXPECT_EQ(all[4]["kind"], "broadcast");
  EXPECT_EQ(all[4]["root"], 0);
  EXPECT_TRUE(all[5]["duration_ns"].is_null()); // the barrier never returned
  EXPECT_FALSE(all[3]["duration_ns"].is_null());
  EXPECT_TRUE(run.err.empty()) << run.err;
}

TEST(Dump, TheOtherSideOfAnExchangeIsShownInPlaceOfAnOp) {
  // MPI's gather, scatter, allgather and alltoall keep the other side's count in op and aux
  // (format::OtherSide): no reduction op is printed for them.
  std::string dir = freshDir("dump-other-side");
  RankTrace t(0, 1);
  CallSpec gather;
  gather.kind = format::Kind::Gather;
  gather.count = 2;
  gather.dataType = format::DataType::Int32;
  gather.root = 0;
  gather.op = static_cast<format::ReduceOp>(format::OtherSide::InAux);
  gather.aux = 3;
  t.call(gather);
  gather.op = static_cast<format::ReduceOp>(format::OtherSide::SameAsCount);
  t.call(gather);
  gather.op = static_cast<format::ReduceOp>(format::OtherSide::NotRecorded);
  gather.aux = 0;
  t.call(gather);
  CommandResult run = runCollcheck("dump " + writeJob(dir, {t})[0]);
  ASSERT_EQ(run.status, 0) << run.err;
  auto all = lines(run.out);
  ASSERT_EQ(all.size(), 6u); // header, comm_create, comm_members, 3 calls
  EXPECT_EQ(all[3]["other_side"], 3);
  EXPECT_EQ(all[4]["other_side"], 2);
  EXPECT_TRUE(all[5]["other_side"].is_null());
  EXPECT_FALSE(all[3].contains("op"));
}

TEST(Dump, EveryFlagBitHasOneNameOnEveryKind) {
  // Format 4: bit 5 is an intercommunicator and bit 6 a persistent initialization, on every kind;
  // a value capture's side is its own field. Up to version 3 the same bits of a value capture
  // meant "output" and "integer": such a file prints the side and no flag for them.
  for (uint32_t version : {3u, 4u}) {
    std::string dir = freshDir("dump-flags-v" + std::to_string(version));
    RankTrace t(0, 1);
    CallSpec init = allreduce(4);
    init.flags = format::kFlagPersistent | format::kFlagIntercomm;
    t.call(init);
    format::Record value = t.records.back();
    value.kind = static_cast<uint8_t>(format::Kind::ValueCapture);
    value.duration = 0;
    value.count = 0;
    value.peer = 1;
    value.setAuxDouble(3.0);
    value.op = version >= 4 ? format::kPackedOutputs : 0;
    value.flags =
        version >= 4 ? 0 : format::kFlagsBefore4CaptureOutput | format::kFlagsBefore4Integral;
    t.records.push_back(value);
    t.returned.push_back(true);
    std::string path = writeJob(dir, {t})[0];
    patch(path, offsetof(format::FileHeader, version), &version, sizeof version);
    CommandResult run = runCollcheck("dump " + path);
    ASSERT_EQ(run.status, 0) << run.err;
    auto all = lines(run.out);
    ASSERT_EQ(all.size(), 5u) << version;
    EXPECT_EQ(all[3]["kind"], "allreduce");
    EXPECT_EQ(all[3]["flags"], nlohmann::json::parse(R"(["intercomm", "persistent"])")) << version;
    EXPECT_EQ(all[4]["kind"], "value_capture");
    EXPECT_EQ(all[4]["output"], true) << version;
    EXPECT_EQ(all[4]["value"], 3.0);
    EXPECT_EQ(all[4]["flags"], nlohmann::json::array()) << version;
  }
}

TEST(Dump, TruncatedHeaderIsRefused) {
  std::string path = oneFile("dump-short");
  std::filesystem::resize_file(path, 100);
  CommandResult run = runCollcheck("dump " + path);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find(path), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("truncated"), std::string::npos) << run.err;
}

TEST(Dump, ForeignFileIsRefused) {
  std::string path = oneFile("dump-magic");
  patch(path, 0, "NOTATRACE", 8);
  CommandResult run = runCollcheck("dump " + path);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("bad magic"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST(Dump, OtherVersionIsRefused) {
  std::string path = oneFile("dump-version");
  uint32_t version = 99;
  patch(path, offsetof(format::FileHeader, version), &version, sizeof version);
  CommandResult run = runCollcheck("dump " + path);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("unsupported trace version 99"), std::string::npos) << run.err;
}

TEST(Dump, FlippedBitIsNamedBySlotAndTheRestPrinted) {
  std::string path = oneFile("dump-flip");
  // Slot 3 (the broadcast): flip one bit of its count.
  uint64_t offset = format::kHeaderSize + 3 * format::kRecordSize + offsetof(format::Record, count);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  char byte;
  in.read(&byte, 1);
  in.close();
  byte ^= 0x04;
  patch(path, offset, &byte, 1);
  CommandResult run = runCollcheck("dump " + path);
  EXPECT_EQ(run.status, 0);
  auto all = lines(run.out);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[3]["kind"], "allreduce");
  EXPECT_EQ(all[4]["kind"], "barrier");
  EXPECT_NE(run.err.find("slot 3 is corrupt"), std::string::npos) << run.err;
}

TEST(Dump, TruncatedInsideARecordPrintsTheWholeOnes) {
  std::string path = oneFile("dump-cut");
  std::filesystem::resize_file(path, format::kHeaderSize + 4 * format::kRecordSize + 20);
  CommandResult run = runCollcheck("dump " + path);
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(lines(run.out).size(), 5u);
  EXPECT_NE(run.err.find("ends inside slot 4"), std::string::npos) << run.err;
}

TEST(Dump, MissingFileIsRefused) {
  CommandResult run = runCollcheck("dump /nonexistent/x.cctrace");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("/nonexistent/x.cctrace"), std::string::npos);
}

} // namespace

TEST(Dump, HeaderTextThatIsNotPrintableIsShownAsQuestionMarksInEveryReport) {
  std::string path = oneFile("header-text");
  {
    // A host name with an escape sequence and bytes that are not UTF-8.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const char host[] = "node\x1b[31m\xff\xbc";
    f.seekp(offsetof(format::FileHeader, host));
    f.write(host, sizeof host);
  }
  CommandResult dump = runCollcheck("dump " + path);
  ASSERT_EQ(dump.status, 0) << dump.err;
  auto all = lines(dump.out);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0]["host"], "node?[31m??");
  std::string dir = std::filesystem::path(path).parent_path();
  for (const char *report : {"--json", "--sarif"}) {
    CommandResult analyzed = runCollcheck("analyze --quiet " + std::string(report) + " " + dir);
    EXPECT_EQ(analyzed.status, 1) << report << ": " << analyzed.err;
    EXPECT_TRUE(nlohmann::json::accept(analyzed.out)) << report;
  }
  CommandResult text = runCollcheck("analyze --color=never " + dir);
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);
}
