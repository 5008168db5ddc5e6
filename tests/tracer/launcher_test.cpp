// `collcheck run`: inert processes write nothing, the command runs without a shell, its exit status
// comes back, launcher-style parents (mpirun, a torchrun-like shell starting several processes)
// get one file per traced child, all stamped with one job id; and fork/exec under the tracer.
#include "trace_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

using namespace collcheck;
using namespace collcheck::testing;
using format::Kind;

namespace {

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t traceCount(const std::string &dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
    n += entry.path().extension() == format::kFileSuffix;
  return n;
}

#ifdef COLLCHECK_SANITIZED_PRELOAD
// The instrumented preload library needs the sanitizer runtime before it: hand the launcher both.
const std::string kCollcheck = "COLLCHECK_PRELOAD='" COLLCHECK_PRELOAD_PATH "' " COLLCHECK_TOOL;
#else
const std::string kCollcheck = COLLCHECK_TOOL;
#endif

} // namespace

TEST(Launcher, ShellsAndProgramsWithoutCollectivesLeaveNoFile) {
  std::string dir = freshDir("launcher-inert");
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " -- bash -c true 2>/dev/null"), 0);
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " -- " + mpirun(2) + "/bin/true 2>/dev/null"),
            0);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_EQ(traceCount(dir), 0u);
}

TEST(Launcher, ArgumentsReachTheCommandWithoutAShellAndTheStatusComesBack) {
  std::string dir = freshDir("launcher-args");
  std::string out = dir + ".out";
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir +
                     " -- printf '%s|' 'a b' '$HOME' ';' '`true`' >" + out + " 2>/dev/null"),
            0);
  EXPECT_EQ(slurp(out), "a b|$HOME|;|`true`|");
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " -- sh -c 'exit 7' 2>/dev/null"), 7);
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " -- /no/such/program 2>/dev/null"), 127);
  EXPECT_EQ(runPlain(kCollcheck + " run 2>/dev/null"), 2) << "usage error";
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " 2>/dev/null"), 2) << "no command";
  // A list of libraries to preload (a sanitizer runtime before the library): every entry must
  // exist.
  EXPECT_EQ(runPlain("COLLCHECK_PRELOAD='" COLLCHECK_PRELOAD_PATH ":" COLLCHECK_PRELOAD_PATH "' " +
                     std::string(COLLCHECK_TOOL) + " run -o " + dir + " -- true 2>/dev/null"),
            0);
  EXPECT_EQ(runPlain("COLLCHECK_PRELOAD=/no/such/runtime.so:" + std::string(COLLCHECK_TOOL) + " " +
                     COLLCHECK_TOOL + " run -o " + dir + " -- true 2>/dev/null"),
            2);
}

TEST(Launcher, MpirunJobGetsOneFilePerRankWithOneJobId) {
  std::string dir = freshDir("launcher-mpirun");
  std::string err = dir + ".err";
  ASSERT_EQ(runPlain(kCollcheck + " run -o " + dir + " -- " + mpirun(3) +
                     COLLCHECK_PROGRAM_DIR "/mpi_many 20 >/dev/null 2>" + err),
            0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 3u);
  std::set<std::string> jobs;
  for (const ProcessTrace &t : traces) {
    jobs.insert(t.header.jobId);
    EXPECT_EQ(ofKind(t, Kind::AllReduce).size(), 20u);
  }
  EXPECT_EQ(jobs.size(), 1u);
  EXPECT_NE(*jobs.begin(), "");
  EXPECT_NE(slurp(err).find("3 trace files"), std::string::npos) << slurp(err);
}

TEST(Launcher, TorchrunStyleParentStartingSeveralProcesses) {
  std::string dir = freshDir("launcher-spawn");
  std::string program = COLLCHECK_PROGRAM_DIR "/mpi_many 5";
  ASSERT_EQ(runPlain(kCollcheck + " run -o " + dir + " -- sh -c '" + program + " & " + program +
                     " & wait' >/dev/null 2>&1"),
            0);
  EXPECT_EQ(traceCount(dir), 2u) << "two singleton processes, the shell itself untraced";
}

TEST(ForkExec, ChildrenGetTheirOwnFileOnlyWhenTheyMakeATracedCall) {
  // Under mpirun, so that the children inherit the launcher's rank variables.
  std::string dir = freshDir("fork");
  ASSERT_EQ(runTraced(mpirun(1) + COLLCHECK_PROGRAM_DIR "/fork_children >/dev/null", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 3u) << "the parent and the two children that annotated";
  const ProcessTrace *parent = nullptr;
  std::vector<const ProcessTrace *> children;
  for (const ProcessTrace &t : traces)
    if (ofKind(t, Kind::Init).empty())
      children.push_back(&t);
    else
      parent = &t;
  ASSERT_TRUE(parent);
  ASSERT_EQ(children.size(), 2u);
  std::vector<format::Record> reduces = ofKind(*parent, Kind::AllReduce);
  ASSERT_EQ(reduces.size(), 20u);
  for (size_t i = 0; i < reduces.size(); ++i)
    EXPECT_EQ(reduces[i].seq(), i);
  EXPECT_EQ(parent->summary.torn + parent->summary.corrupt + parent->summary.holes, 0u);
  EXPECT_TRUE(ofKind(*parent, Kind::WindowBegin).empty())
      << "the children wrote to their own files";
  EXPECT_EQ(parent->header.worldRank, 0);
  std::multiset<uint64_t> windows;
  for (const ProcessTrace *child : children) {
    ASSERT_EQ(child->records.size(), 1u) << child->path;
    EXPECT_EQ(child->records[0].kind, static_cast<uint8_t>(Kind::WindowBegin));
    windows.insert(child->records[0].count);
    // A child is not its parent's rank, forked before the parent's first traced call or after:
    // two files claiming one rank would leave it unchecked.
    EXPECT_EQ(child->header.worldRank, -1) << child->path;
  }
  EXPECT_EQ(windows, (std::multiset<uint64_t>{5, 7}));
}
