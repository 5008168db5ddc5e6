// `collcheck run`: inert processes write nothing, the command runs without a shell, its exit status
// comes back, launcher-style parents (mpirun, a torchrun-like shell starting several processes)
// get one file per traced child, all stamped with one job id; and fork/exec under the tracer.
#include "tests/tracer/trace_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
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

TEST(Launcher, MpirunLineWithItsOwnExportsStillForwardsTheTracer) {
  // Open MPI refuses -x beside the mca_base_env_list parameter: the tracer's variables travel as
  // -x options of the line itself, and the user's own -x keeps working.
  std::string dir = freshDir("launcher-export");
  std::string out = dir + ".out";
  ASSERT_EQ(runPlain("COLLCHECK_TEST_VALUE=forwarded " + kCollcheck + " run -o " + dir + " -- " +
                     mpirun(2) +
                     "-x COLLCHECK_TEST_VALUE " COLLCHECK_PROGRAM_DIR "/mpi_many 3 >/dev/null 2>" +
                     out),
            0)
      << slurp(out);
  EXPECT_EQ(traceCount(dir), 2u) << slurp(out);
  std::string second = dir + "-env";
  ASSERT_EQ(runPlain("COLLCHECK_TEST_VALUE=forwarded " + kCollcheck + " run -o " + second + " -- " +
                     mpirun(2) +
                     "-x COLLCHECK_TEST_VALUE printenv COLLCHECK_TEST_VALUE "
                     "COLLCHECK_OUTPUT >" +
                     out + " 2>/dev/null"),
            0);
  std::string printed = slurp(out);
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 4) << printed;
  EXPECT_NE(printed.find("forwarded\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find(std::filesystem::absolute(second).string()), std::string::npos) << printed;
}

TEST(Launcher, AFolderHoldingTracesOfAnEarlierRunIsRefused) {
  std::string dir = freshDir("launcher-twice");
  std::string err = dir + ".err";
  std::string line = kCollcheck + " run -o " + dir + " -- " + mpirun(2) +
                     COLLCHECK_PROGRAM_DIR "/mpi_many 2 >/dev/null 2>" + err;
  ASSERT_EQ(runPlain(line), 0) << slurp(err);
  ASSERT_EQ(traceCount(dir), 2u);
  EXPECT_EQ(runPlain(line), 2);
  EXPECT_NE(slurp(err).find("already holds 2 trace files"), std::string::npos) << slurp(err);
  EXPECT_EQ(traceCount(dir), 2u) << "the first run's files are left as they were";
}

TEST(Launcher, SrunExportListGetsTheTracerVariables) {
  // A stand-in named srun on PATH shows the line collcheck hands to Slurm (no cluster here).
  std::string dir = freshDir("launcher-srun");
  std::filesystem::create_directories(dir + "-bin");
  std::string fake = dir + "-bin/srun";
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\nprintf '%s\\n' \"$@\"\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  std::string out = dir + ".out";
  auto line = [&](const std::string &options) {
    EXPECT_EQ(runPlain("PATH=" + dir + "-bin:$PATH " + kCollcheck + " run -o " + dir + " -- srun " +
                       options + " ./train >" + out + " 2>/dev/null"),
              0);
    return slurp(out);
  };
  EXPECT_EQ(line("-n 4"), "-n\n4\n./train\n") << "the whole environment is forwarded already";
  EXPECT_EQ(line("--export=ALL,X=1 -n 4"), "--export=ALL,X=1\n-n\n4\n./train\n");
  EXPECT_EQ(line("--export=NONE -n 4"),
            "--export=LD_PRELOAD,COLLCHECK_OUTPUT,COLLCHECK_JOB_ID\n-n\n4\n./train\n");
  EXPECT_EQ(line("--export PATH -n 4"),
            "--export\nPATH,LD_PRELOAD,COLLCHECK_OUTPUT,COLLCHECK_JOB_ID\n-n\n4\n./train\n");
}

TEST(HangWatch, ASkippedCollectiveIsDiagnosedWhileTheJobIsStuckAndKilledOnRequest) {
  std::string dir = freshDir("watch-skip");
  std::string err = dir + ".err", json = dir + ".json";
  auto start = std::chrono::steady_clock::now();
  // timeout(1) is the test's own guard: the watcher, not it, must end the job.
  int status = runPlain("timeout -s KILL 90 env " + kCollcheck + " run -o " + dir +
                        " --hang-timeout 2 --on-hang kill --json " + json + " -- " + mpirun(3) +
                        COLLCHECK_PROGRAM_DIR "/mpi_pause skip >/dev/null 2>" + err);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string text = slurp(err);
  EXPECT_NE(status, 137) << "the guard had to kill the job: " << text;
  EXPECT_NE(status, 0) << text;
  EXPECT_LT(seconds, 2 + 5 + 10 + 15) << "timeout + diagnosis + grace + the job's start";
  EXPECT_NE(text.find("the job looks hung"), std::string::npos) << text;
  EXPECT_NE(text.find("ending the job"), std::string::npos) << text;
  EXPECT_NE(text.find("wait in allreduce"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2"), std::string::npos) << "the rank that skipped: " << text;
  // Where the waiting ranks made the call: the program's source line (or, in a build without
  // debug information, the program's module and offset); either names mpi_pause.
  EXPECT_NE(text.find("called at: ranks 0, 1: "), std::string::npos) << text;
  EXPECT_NE(text.find("mpi_pause"), std::string::npos) << text;
  EXPECT_NE(slurp(json).find("\"hang\""), std::string::npos) << slurp(json);
  // Every trace stays readable after the kill.
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 3u);
  for (const ProcessTrace &t : traces)
    EXPECT_EQ(t.summary.torn + t.summary.corrupt, 0u) << t.path;
}

TEST(HangWatch, ALongPauseBetweenCollectivesIsNoHang) {
  std::string dir = freshDir("watch-pause");
  std::string err = dir + ".err";
  ASSERT_EQ(runPlain(kCollcheck + " run -o " + dir + " --hang-timeout 1 --on-hang kill -- " +
                     mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_pause pause 4 >/dev/null 2>" + err),
            0)
      << slurp(err);
  EXPECT_EQ(slurp(err).find("looks hung"), std::string::npos) << slurp(err);
  EXPECT_EQ(traceCount(dir), 2u);
}

TEST(HangWatch, OptionsAreChecked) {
  std::string dir = freshDir("watch-options");
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " --hang-timeout 0 -- true 2>/dev/null"), 2);
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " --hang-timeout x -- true 2>/dev/null"), 2);
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir + " --on-hang kill -- true 2>/dev/null"), 2)
      << "--on-hang without --hang-timeout";
  EXPECT_EQ(runPlain(kCollcheck + " run -o " + dir +
                     " --hang-timeout 1 --on-hang maybe -- true "
                     "2>/dev/null"),
            2);
}
