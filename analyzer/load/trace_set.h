// The trace files of one job: found in the folders and files named on the command line, opened
// and validated (format::Reader), and identified by world rank. Everything wrong with the input is
// kept as a problem naming the file and the reason; nothing here throws or aborts.
#pragma once

#include "format/reader.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collcheck::analyzer {

struct TraceFile {
  std::string path;
  std::unique_ptr<format::Reader> reader;
  int32_t worldRank = -1; // -1: the process never learnt it (label by host and pid)
  std::string label;      // "rank 3" or "pid 1234 on host"
  uint64_t slots = 0;     // whole record slots in the file (records, holes and the empty tail)
  bool finished = false;  // the process exited cleanly
};

struct InputProblem {
  std::string file; // empty when the problem concerns the job (e.g. a missing rank)
  std::string reason;
  bool unusable = false; // the file could not be read at all
};

// One job whose files were found: the id its processes wrote (COLLCHECK_JOB_ID, else the
// launcher's), how many files, the world size they claim and one of them.
struct JobSummary {
  std::string id;
  size_t files = 0;
  int32_t worldSize = -1;
  std::string example;
};

class TraceSet {
public:
  // Opens every *.cctrace file in the given folders (not recursive) and every file named
  // directly, on up to `threads` threads. `filesOpened` counts progress for a progress bar.
  // Only headers are validated here: the merge classifies every slot as it streams the records
  // (one pass over the data, not two). With `job`, only the files of that job are kept (the
  // inputs may hold several); without it, files of several jobs make the set unusable.
  static TraceSet open(const std::vector<std::string> &inputs, unsigned threads,
                       std::atomic<uint64_t> *filesOpened = nullptr, const std::string &job = {});

  std::vector<TraceFile> files;        // usable files, sorted by world rank
  std::vector<InputProblem> problems;  // every input problem, in the order found
  std::vector<std::string> candidates; // every path that was tried
  int32_t worldSize = -1;              // from the headers (largest seen)
  std::vector<int32_t> missingRanks;   // world ranks below worldSize without a file
  std::string jobId;
  std::vector<JobSummary> jobs; // every job among the inputs, the files of other jobs included
  bool fatal = false; // the set cannot be analyzed as one job (e.g. two jobs mixed, no file)
  uint64_t totalSlots = 0;

  // Index in `files` of the file of a world rank, -1 when none.
  int fileOfWorldRank(int32_t worldRank) const;

private:
  std::vector<int> byWorldRank_;
};

// Lists the trace files a folder holds (sorted), or sets `error`.
std::vector<std::string> listTraceFiles(const std::string &dir, std::string &error);

} // namespace collcheck::analyzer
