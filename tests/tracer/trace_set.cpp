#include "tests/tracer/trace_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sys/wait.h>

namespace collcheck::testing {

std::vector<ProcessTrace> loadTraces(const std::string &dir) {
  std::vector<ProcessTrace> traces;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != format::kFileSuffix)
      continue;
    std::string error;
    auto reader = format::Reader::open(entry.path().string(), error);
    if (!reader) {
      ADD_FAILURE() << error;
      continue;
    }
    ProcessTrace trace;
    trace.path = entry.path().string();
    trace.header = reader->header();
    trace.summary = reader->summary();
    for (uint64_t i = 0; i < reader->slotCount(); ++i)
      if (reader->usable(i))
        trace.records.push_back(reader->slot(i));
    traces.push_back(std::move(trace));
  }
  std::sort(traces.begin(), traces.end(), [](const ProcessTrace &a, const ProcessTrace &b) {
    return std::pair(a.header.worldRank, a.header.pid) <
           std::pair(b.header.worldRank, b.header.pid);
  });
  return traces;
}

void expectCalls(const std::vector<format::Record> &got, const std::vector<ExpectedCall> &want,
                 int rank) {
  ASSERT_EQ(got.size(), want.size()) << "rank " << rank;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("rank " + std::to_string(rank) + " call " + std::to_string(i) + " " +
                 std::string(format::kindName(want[i].kind)));
    const format::Record &g = got[i];
    EXPECT_EQ(g.kind, static_cast<uint8_t>(want[i].kind));
    EXPECT_EQ(g.seq(), i);
    EXPECT_EQ(g.commRank, rank);
    EXPECT_EQ(g.count, want[i].count);
    EXPECT_EQ(g.dataType, static_cast<uint8_t>(want[i].type));
    EXPECT_EQ(g.op, static_cast<uint8_t>(want[i].op));
    if (format::holdsValues(g)) { // a count reduction's values in its own record: no root, no aux
      EXPECT_EQ(want[i].root, -1);
      EXPECT_EQ(want[i].aux, 0u);
    } else {
      EXPECT_EQ(g.peer, want[i].root);
      EXPECT_EQ(g.aux, want[i].aux);
    }
    EXPECT_EQ(g.flags, want[i].flags);
    EXPECT_TRUE(format::returned(g));
    EXPECT_FALSE(format::failed(g));
    EXPECT_EQ(g.window, 0u);
  }
}

std::vector<format::Record> sequenced(const ProcessTrace &trace, uint64_t commId) {
  std::vector<format::Record> out;
  for (const format::Record &r : trace.records)
    if (r.commId == commId && format::isSequenced(static_cast<format::Kind>(r.kind)))
      out.push_back(r);
  return out;
}

std::vector<format::Record> ofKind(const ProcessTrace &trace, format::Kind kind) {
  std::vector<format::Record> out;
  for (const format::Record &r : trace.records)
    if (r.kind == static_cast<uint8_t>(kind))
      out.push_back(r);
  return out;
}

std::map<uint64_t, std::vector<int32_t>> memberLists(const ProcessTrace &trace) {
  std::map<uint64_t, uint64_t> sizes;
  for (const format::Record &c : ofKind(trace, format::Kind::CommCreate))
    sizes[c.commId] = c.count;
  std::map<uint64_t, std::vector<int32_t>> members;
  for (const format::Record &m : ofKind(trace, format::Kind::CommMembers))
    for (int i = 0; i < format::kMembersPerRecord && m.seq() + i < sizes[m.commId]; ++i)
      members[m.commId].push_back(format::memberAt(m, i));
  return members;
}

static int status(int raw) {
  if (raw == -1)
    return -1;
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

std::string tracedCommand(const std::string &command, const std::string &dir) {
  std::string full = "COLLCHECK_OUTPUT='" + dir + "' ";
#ifdef COLLCHECK_SANITIZED_PRELOAD
  // A sanitizer runtime preloaded into mpirun itself reports Open MPI's own launcher internals;
  // under a sanitizer build only the ranks get the preload: mpirun -np N env LD_PRELOAD=...
  // PROGRAM.
  std::string launcher = COLLCHECK_MPIRUN_COMMAND;
  if (command.rfind(launcher, 0) == 0) {
    size_t np = command.find(" -np ", launcher.size());
    size_t program = np == std::string::npos ? np : command.find(' ', np + 5);
    if (program != std::string::npos)
      return full + command.substr(0, program + 1) +
             "env LD_PRELOAD='" COLLCHECK_PRELOAD_PATH "' " + command.substr(program + 1);
  }
#endif
  return full + "LD_PRELOAD='" COLLCHECK_PRELOAD_PATH "' " + command;
}

int runTraced(const std::string &command, const std::string &dir) {
  return status(std::system(tracedCommand(command, dir).c_str()));
}

int runPlain(const std::string &command) { return status(std::system(command.c_str())); }

std::string mpirun(int ranks) {
  return std::string(COLLCHECK_MPIRUN_COMMAND) + " -np " + std::to_string(ranks) + " ";
}

} // namespace collcheck::testing
