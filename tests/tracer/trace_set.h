// Test helpers: run a command under the tracer and load every trace file of a folder.
#pragma once

#include "format/reader.h"
#include "format/record.h"
#include "tests/support/scratch.h"

#include <map>
#include <string>
#include <vector>

namespace collcheck::testing {

struct ProcessTrace {
  std::string path;
  format::FileHeader header{};
  format::Reader::Summary summary;
  std::vector<format::Record> records; // published records of known kinds, in file order
};

// Loads every *.cctrace in `dir`, sorted by world rank (then pid). Fails the test on unreadable
// files.
std::vector<ProcessTrace> loadTraces(const std::string &dir);

// Records of `kind` (or all sequenced kinds when kind is Kind::Count) on communicator `commId`.
std::vector<format::Record> sequenced(const ProcessTrace &trace, uint64_t commId);
std::vector<format::Record> ofKind(const ProcessTrace &trace, format::Kind kind);
// Each communicator's member list in world ranks, from its CommCreate and CommMembers records.
std::map<uint64_t, std::vector<int32_t>> memberLists(const ProcessTrace &trace);

// One sequenced call as a test expects it on some rank.
struct ExpectedCall {
  format::Kind kind;
  uint64_t count;
  format::DataType type;
  format::ReduceOp op;
  int root;
  uint64_t aux;
  uint8_t flags;
};

// Checks `got` (one rank's calls on a communicator, in sequence order) against `want`, field by
// field: the kind, the sequence number, the rank, count, datatype, op, root, aux and flags, a
// call that returned without error, outside any window.
void expectCalls(const std::vector<format::Record> &got, const std::vector<ExpectedCall> &want,
                 int rank);

// Runs `command` through /bin/sh with COLLCHECK_OUTPUT=dir and the preload library in LD_PRELOAD;
// returns the exit status (or -1 when it could not run).
int runTraced(const std::string &command, const std::string &dir);
// The shell command runTraced runs.
std::string tracedCommand(const std::string &command, const std::string &dir);
int runPlain(const std::string &command);

std::string mpirun(int ranks);

} // namespace collcheck::testing
