// The tracer never harms the job and its files survive the job's death: ranks killed with SIGKILL
// at random points, processes that make no collective call, a filesystem that fills up, a missing
// folder, and concurrent callers under MPI_THREAD_MULTIPLE.
#include "tests/tracer/trace_set.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace collcheck;
using namespace collcheck::testing;
using format::Kind;

namespace {

std::vector<std::filesystem::path> traceFiles(const std::string &dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == format::kFileSuffix)
      files.push_back(entry.path());
  return files;
}

pid_t pidOf(const std::filesystem::path &file) {
  std::string stem = file.stem().string(); // <host>-<pid>
  return static_cast<pid_t>(std::stol(stem.substr(stem.rfind('-') + 1)));
}

// Starts `mpirun -np ranks program` traced into `dir`, in its own process group.
pid_t startTraced(int ranks, const std::string &program, const std::string &dir) {
  pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    std::string command = tracedCommand(mpirun(ranks) + program, dir) + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  return child;
}

bool waitFor(pid_t child, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (waitpid(child, &status, WNOHANG) == child)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Every file reads back: nothing corrupt, at most the last record torn, and the sequence on each
// communicator contiguous from 0 up to where the process died.
void expectReadableUpToDeath(const std::string &dir, size_t expectedFiles) {
  std::vector<std::filesystem::path> files = traceFiles(dir);
  ASSERT_EQ(files.size(), expectedFiles);
  for (const auto &file : files) {
    std::string error;
    auto reader = format::Reader::open(file.string(), error);
    ASSERT_TRUE(reader) << error;
    const format::Reader::Summary &s = reader->summary();
    EXPECT_EQ(s.corrupt, 0u) << file;
    EXPECT_LE(s.torn, 1u) << file;
    if (s.torn) {
      // The record the process was writing when it died; a fatal-signal handler that ran on top
      // of that write may have published its own record after it.
      for (uint64_t i = s.firstProblem + 1; i < reader->slotCount(); ++i)
        EXPECT_TRUE(reader->usable(i) &&
                    reader->slot(i).kind == static_cast<uint8_t>(Kind::ProcessSignal))
            << file << ": only the record being written at death can be torn, slot " << i;
    }
    EXPECT_GT(s.published, 0u) << file;
    std::map<uint64_t, uint64_t> nextSeq;
    for (uint64_t i = 0; i < reader->slotCount(); ++i) {
      if (!reader->usable(i))
        continue;
      const format::Record &r = reader->slot(i);
      if (!format::isSequenced(static_cast<Kind>(r.kind)))
        continue;
      ASSERT_EQ(r.seq(), nextSeq[r.commId]++) << file << " slot " << i;
    }
  }
}

bool allRecording(const std::string &dir, size_t ranks) {
  std::vector<std::filesystem::path> files = traceFiles(dir);
  if (files.size() < ranks)
    return false;
  for (const auto &file : files) {
    std::string error;
    auto reader = format::Reader::open(file.string(), error);
    if (!reader || reader->summary().published < 2)
      return false;
  }
  return true;
}

// The seed of the random kill points: COLLCHECK_KILL_SEED where set (to replay a failure), else a
// fresh one; printed either way, and named in every failure.
unsigned killSeed() {
  const char *env = std::getenv("COLLCHECK_KILL_SEED");
  unsigned seed =
      env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device{}();
  std::printf("kill loop seed %u (replay: COLLCHECK_KILL_SEED=%u)\n", seed, seed);
  return seed;
}

// Kills one rank of a 3-rank job at a random point with `signal`, `iterations` times.
void killLoop(int signal, int iterations) {
  unsigned seed = killSeed();
  std::mt19937 random(seed);
  const int ranks = 3;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    SCOPED_TRACE("signal " + std::to_string(signal) + " iteration " + std::to_string(iteration) +
                 " COLLCHECK_KILL_SEED=" + std::to_string(seed));
    std::string dir = freshDir("kill-" + std::to_string(signal) + "-" + std::to_string(iteration));
    pid_t job = startTraced(ranks, COLLCHECK_PROGRAM_DIR "/mpi_forever", dir);
    // Kill once every rank is recording: a process killed while creating its file has nothing
    // published yet, which proves nothing.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!allRecording(dir, ranks) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::filesystem::path> files = traceFiles(dir);
    ASSERT_EQ(files.size(), static_cast<size_t>(ranks));
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 300));
    pid_t victim = pidOf(files[random() % files.size()]);
    ASSERT_EQ(kill(victim, signal), 0);
    if (!waitFor(job, std::chrono::seconds(20))) {
      killpg(job, SIGKILL);
      waitFor(job, std::chrono::seconds(5));
    }
    killpg(job, SIGKILL); // survivors mpirun left behind, if any
    expectReadableUpToDeath(dir, ranks);
    std::filesystem::remove_all(dir);
  }
}

int iterationsFromEnvironment(int fallback) {
  const char *env = std::getenv("COLLCHECK_KILL_ITERATIONS");
  return env ? std::atoi(env) : fallback;
}

} // namespace

// The full loop (docs/reliability.md): COLLCHECK_KILL_ITERATIONS=200.
TEST(Robustness, RanksKilledAtRandomPointsLeaveReadableTraces) {
  killLoop(SIGKILL, iterationsFromEnvironment(5));
}

TEST(Robustness, RanksTerminatedOrInterruptedLeaveReadableTraces) {
  killLoop(SIGTERM, iterationsFromEnvironment(5) / 2 + 1);
  killLoop(SIGINT, iterationsFromEnvironment(5) / 2 + 1);
}

TEST(Robustness, AFatalSignalIsRecordedAndTheProcessStillDiesOfIt) {
#ifdef COLLCHECK_SANITIZED_PRELOAD
  GTEST_SKIP() << "the sanitizer runtime installs its own handlers for the fatal signals";
#endif
  // A singleton (no mpirun): the shell sees the process's own end.
  for (auto [mode, signal] : {std::pair{"segv", SIGSEGV}, std::pair{"abort", SIGABRT}}) {
    std::string dir = freshDir(std::string("signal-") + mode);
    EXPECT_EQ(
        runTraced(COLLCHECK_PROGRAM_DIR "/mpi_crash " + std::string(mode) + " 2>/dev/null", dir),
        128 + signal)
        << "the signal's default action, as without the tracer";
    std::vector<ProcessTrace> traces = loadTraces(dir);
    ASSERT_EQ(traces.size(), 1u);
    std::vector<format::Record> ends = ofKind(traces[0], Kind::ProcessSignal);
    ASSERT_EQ(ends.size(), 1u) << mode;
    EXPECT_EQ(ends[0].count, static_cast<uint64_t>(signal));
    EXPECT_EQ(ofKind(traces[0], Kind::AllReduce).size(), 3u);
    EXPECT_EQ(traces[0].header.finished, 0u);
  }
  // The application's own handler stays in place and nothing is recorded for it.
  std::string dir = freshDir("signal-handled");
  EXPECT_EQ(runTraced(COLLCHECK_PROGRAM_DIR "/mpi_crash handled 2>/dev/null", dir), 42);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_TRUE(ofKind(traces[0], Kind::ProcessSignal).empty());
}

TEST(Robustness, JobThatNeverCallsFinalizeLeavesACompleteTrace) {
  std::string dir = freshDir("no-finalize");
  // mpirun reports ranks that exit without MPI_Finalize as a failure: traced or not, alike.
  std::string job = mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_no_finalize >/dev/null 2>&1";
  EXPECT_EQ(runTraced(job, dir), runPlain(job));
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (const ProcessTrace &t : traces) {
    EXPECT_EQ(ofKind(t, Kind::AllReduce).size(), 50u);
    EXPECT_EQ(t.header.finished, 1u) << "marked complete at process exit";
    EXPECT_EQ(t.summary.torn + t.summary.corrupt, 0u);
  }
}

TEST(Robustness, ReadOnlyFolderWarnsAndTheJobRunsOn) {
  std::string mountPoint = freshDir("readonly");
  std::filesystem::create_directories(mountPoint);
  // As root, permission bits do not stop writes: a read-only mount does.
  if (geteuid() != 0 ||
      std::system(("mount -t tmpfs -o ro,size=1m tmpfs " + mountPoint).c_str()) != 0)
    GTEST_SKIP() << "mounting a read-only tmpfs needs root";
  std::string out = mountPoint + "/../readonly.txt";
  int rc =
      runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_many 10 >" + out + " 2>" + out + ".err",
                mountPoint + "/traces");
  EXPECT_EQ(std::system(("umount " + mountPoint).c_str()), 0);
  EXPECT_EQ(rc, 0);
  std::ifstream err(out + ".err");
  std::string text(std::istreambuf_iterator<char>(err), {});
  EXPECT_NE(text.find("cannot create trace folder"), std::string::npos) << text;
  EXPECT_NE(text.find("Read-only file system"), std::string::npos) << text;
  std::ifstream result(out);
  std::string line;
  std::getline(result, line);
  EXPECT_EQ(line.rfind("checksum ", 0), 0u) << line;
}

TEST(Robustness, ProcessesWithoutCollectivesCreateNothing) {
  std::string dir = freshDir("inert");
  EXPECT_EQ(runTraced("bash -c true", dir), 0);
  EXPECT_EQ(runTraced("sh -c 'ls / >/dev/null; echo hi >/dev/null'", dir), 0);
  EXPECT_EQ(runTraced(mpirun(2) + "/bin/true", dir), 0);
  EXPECT_FALSE(std::filesystem::exists(dir)) << "no folder and no file for inert processes";
}

TEST(Robustness, FullFilesystemDoesNotChangeTheJob) {
  std::string mountPoint = freshDir("fulldisk");
  std::filesystem::create_directories(mountPoint);
  if (geteuid() != 0 ||
      std::system(("mount -t tmpfs -o size=1200k tmpfs " + mountPoint).c_str()) != 0)
    GTEST_SKIP() << "mounting a small tmpfs needs root";
  std::string program = COLLCHECK_PROGRAM_DIR "/mpi_many 40000";
  std::string untraced = mountPoint + "/../untraced.txt", traced = mountPoint + "/../traced.txt";
  EXPECT_EQ(runPlain(mpirun(1) + program + " >" + untraced), 0);
  EXPECT_EQ(runTraced(mpirun(1) + program + " >" + traced + " 2>" + traced + ".err",
                      mountPoint + "/traces"),
            0);
  auto slurp = [](const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(traced), slurp(untraced));
  EXPECT_NE(slurp(traced + ".err").find("cannot extend trace file"), std::string::npos)
      << slurp(traced + ".err");
  std::vector<std::filesystem::path> files = traceFiles(mountPoint + "/traces");
  ASSERT_EQ(files.size(), 1u);
  std::string error;
  {
    auto reader = format::Reader::open(files[0].string(), error);
    ASSERT_TRUE(reader) << error;
    EXPECT_EQ(reader->summary().corrupt + reader->summary().torn, 0u);
    EXPECT_GT(reader->header().droppedRecords, 0u);
  }
  EXPECT_EQ(std::system(("umount " + mountPoint).c_str()), 0);
}

TEST(Robustness, MissingParentFolderWarnsAndTheJobRunsOn) {
  std::string base = freshDir("missing-parent");
  std::filesystem::create_directories(base);
  std::string out = base + "/results.txt";
  EXPECT_EQ(
      runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_many 10 >" + out + " 2>" + out + ".err",
                base + "/no/such/parent"),
      0);
  std::ifstream err(out + ".err");
  std::string text(std::istreambuf_iterator<char>(err), {});
  EXPECT_NE(text.find("cannot create trace folder"), std::string::npos) << text;
  EXPECT_NE(text.find("not traced"), std::string::npos) << text;
  std::ifstream result(out);
  std::string line;
  std::getline(result, line);
  EXPECT_EQ(line.rfind("checksum ", 0), 0u) << line;
}

TEST(Robustness, ConcurrentThreadsLoseAndCorruptNoRecord) {
  std::string dir = freshDir("threads");
  ASSERT_EQ(runTraced(mpirun(2) + COLLCHECK_PROGRAM_DIR "/mpi_threads", dir), 0);
  std::vector<ProcessTrace> traces = loadTraces(dir);
  ASSERT_EQ(traces.size(), 2u);
  for (const ProcessTrace &t : traces) {
    EXPECT_EQ(t.summary.corrupt + t.summary.torn + t.summary.holes, 0u);
    std::map<uint64_t, std::vector<format::Record>> byComm;
    for (const format::Record &r : ofKind(t, Kind::AllReduce))
      byComm[r.commId].push_back(r);
    ASSERT_EQ(byComm.size(), 4u) << "one duplicate communicator per thread";
    std::set<uint16_t> threads;
    for (auto &[comm, records] : byComm) {
      ASSERT_EQ(records.size(), 2000u);
      std::set<uint64_t> seqs;
      for (const format::Record &r : records) {
        seqs.insert(r.seq());
        EXPECT_EQ(r.thread(), records[0].thread()) << "one thread per communicator";
      }
      EXPECT_EQ(seqs.size(), 2000u);
      EXPECT_EQ(*seqs.rbegin(), 1999u);
      threads.insert(records[0].thread());
    }
    EXPECT_EQ(threads.size(), 4u);
  }
}
