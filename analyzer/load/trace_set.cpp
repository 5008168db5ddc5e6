#include "analyzer/load/trace_set.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace collcheck::analyzer {
namespace {

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What the header alone tells about lost records; damaged slots are found by the merge.
std::string headerProblems(const format::Reader &reader) {
  std::string out;
  auto add = [&](const std::string &text) { out += (out.empty() ? "" : "; ") + text; };
  if (reader.summary().partialTail)
    add("the file ends inside a record (truncated)");
  if (reader.header().droppedRecords)
    add(std::to_string(reader.header().droppedRecords) +
        " record(s) dropped by the tracer (the file could not grow)");
  return out;
}

} // namespace

std::vector<std::string> listTraceFiles(const std::string &dir, std::string &error) {
  std::vector<std::string> out;
  DIR *d = opendir(dir.c_str());
  if (!d) {
    error = dir + ": cannot open folder: " + std::strerror(errno);
    return out;
  }
  while (dirent *entry = readdir(d)) {
    std::string name = entry->d_name;
    if (endsWith(name, format::kFileSuffix))
      out.push_back(dir + (endsWith(dir, "/") ? "" : "/") + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// "  job 'ID': 4 file(s), world size 4, e.g. PATH", one line per job.
std::string listJobs(const std::vector<JobSummary> &jobs) {
  std::string out;
  for (const JobSummary &j : jobs)
    out += "\n  job '" + j.id + "': " + std::to_string(j.files) + " file(s), world size " +
           (j.worldSize >= 0 ? std::to_string(j.worldSize) : "unknown") + ", e.g. " + j.example;
  return out;
}

} // namespace

TraceSet TraceSet::open(const std::vector<std::string> &inputs, unsigned threads,
                        std::atomic<uint64_t> *filesOpened, const std::string &job) {
  TraceSet set;
  for (const std::string &input : inputs) {
    struct stat st;
    if (stat(input.c_str(), &st) != 0) {
      set.problems.push_back({input, std::string("cannot access: ") + std::strerror(errno), true});
      set.fatal = true;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      std::string error;
      auto found = listTraceFiles(input, error);
      if (!error.empty()) {
        set.problems.push_back({input, error, true});
        set.fatal = true;
      } else if (found.empty()) {
        set.problems.push_back(
            {input, std::string("no trace files (*") + format::kFileSuffix + ") in this folder",
             true});
        set.fatal = true;
      }
      set.candidates.insert(set.candidates.end(), found.begin(), found.end());
    } else {
      set.candidates.push_back(input);
    }
  }

  // Opening validates every slot of a file: spread the files over a few threads.
  std::vector<std::unique_ptr<format::Reader>> readers(set.candidates.size());
  std::vector<std::string> reasons(set.candidates.size()); // the file is named beside it
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < set.candidates.size(); i = next++) {
      readers[i] = format::Reader::openWithReason(set.candidates[i], reasons[i],
                                                  format::Reader::Scan::HeaderOnly);
      if (filesOpened)
        filesOpened->fetch_add(1, std::memory_order_relaxed);
    }
  };
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(readers.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (auto &t : pool)
    t.join();

  std::map<std::string, std::vector<std::string>> byJob;
  std::map<int32_t, std::vector<std::string>> bySize; // world size claimed -> files
  for (size_t i = 0; i < readers.size(); ++i) {
    if (!readers[i]) {
      set.problems.push_back({set.candidates[i], reasons[i], true});
      continue;
    }
    const format::FileHeader &h = readers[i]->header();
    std::string jobOfFile = format::headerText(h.jobId, sizeof h.jobId);
    auto known = std::find_if(set.jobs.begin(), set.jobs.end(),
                              [&](const JobSummary &j) { return j.id == jobOfFile; });
    if (known == set.jobs.end()) {
      set.jobs.push_back({jobOfFile, 0, h.worldSize, set.candidates[i]});
      known = set.jobs.end() - 1;
    }
    ++known->files;
    known->worldSize = std::max(known->worldSize, h.worldSize);
    if (!job.empty() && jobOfFile != job)
      continue; // another job's file: not this analysis's input, and not a problem of it
    TraceFile file;
    file.path = set.candidates[i];
    file.worldRank = h.worldRank;
    file.finished = h.finished != 0;
    file.slots = readers[i]->slotCount();
    std::string host = format::headerText(h.host, sizeof h.host);
    file.label = h.worldRank >= 0 ? "rank " + std::to_string(h.worldRank)
                                  : "pid " + std::to_string(h.pid) + " on " + host;
    if (std::string why = headerProblems(*readers[i]); !why.empty())
      set.problems.push_back({file.path, why, false});
    set.worldSize = std::max(set.worldSize, h.worldSize);
    if (h.worldSize >= 0)
      bySize[h.worldSize].push_back(file.path);
    byJob[jobOfFile].push_back(file.path);
    file.reader = std::move(readers[i]);
    set.files.push_back(std::move(file));
  }
  // One job has one world size: a file claiming another one is damaged or from another run. The
  // largest claim is kept (no rank is dropped), and every file that disagrees with the most common
  // claim is named.
  if (bySize.size() > 1) {
    auto common = std::max_element(bySize.begin(), bySize.end(), [](const auto &a, const auto &b) {
      return a.second.size() < b.second.size();
    });
    for (const auto &[size, paths] : bySize)
      if (size != common->first)
        for (const std::string &path : paths)
          set.problems.push_back({path,
                                  "claims a world size of " + std::to_string(size) + ", while " +
                                      std::to_string(common->second.size()) +
                                      " other file(s) of the job claim " +
                                      std::to_string(common->first),
                                  false});
  }
  if (!job.empty() && byJob.empty() && !set.jobs.empty()) {
    set.problems.push_back(
        {"", "no trace file of job '" + job + "' here; the jobs found:" + listJobs(set.jobs),
         true});
    set.fatal = true;
  } else if (byJob.size() > 1) {
    set.problems.push_back(
        {"",
         "the traces come from " + std::to_string(byJob.size()) +
             " different jobs; name the one to analyze with --job ID:" + listJobs(set.jobs),
         true});
    set.fatal = true;
  } else if (byJob.size() == 1) {
    set.jobId = byJob.begin()->first;
  }
  std::stable_sort(set.files.begin(), set.files.end(), [](const TraceFile &a, const TraceFile &b) {
    return static_cast<uint32_t>(a.worldRank) < static_cast<uint32_t>(b.worldRank);
  });
  // Two files claiming one world rank (a restarted rank, a copied file): which one is that rank's
  // run is undecidable, so neither is analyzed; the rank is then left unchecked like a missing
  // file, and the other ranks are checked among themselves.
  std::vector<TraceFile> kept;
  for (size_t i = 0; i < set.files.size();) {
    size_t j = i + 1;
    while (j < set.files.size() && set.files[i].worldRank >= 0 &&
           set.files[j].worldRank == set.files[i].worldRank)
      ++j;
    if (j - i > 1) {
      for (size_t k = i; k < j; ++k)
        set.problems.push_back(
            {set.files[k].path,
             "claims world rank " + std::to_string(set.files[k].worldRank) + ", as does " +
                 set.files[k == i ? i + 1 : i].path +
                 (j - i > 2 ? " (and " + std::to_string(j - i - 2) + " more)" : "") +
                 "; a folder must hold one run of one job, so neither is analyzed and the "
                 "rank's calls are left unchecked",
             true});
    } else {
      kept.push_back(std::move(set.files[i]));
    }
    i = j;
  }
  set.files = std::move(kept);
  for (const TraceFile &f : set.files) // of the files analyzed, duplicates left out
    set.totalSlots += f.slots;
  if (set.files.empty() && !set.fatal) {
    set.problems.push_back({"", "no usable trace file", true});
    set.fatal = true;
  }
  int32_t maxRank = -1;
  for (const TraceFile &f : set.files)
    maxRank = std::max(maxRank, f.worldRank);
  set.worldSize = std::max(set.worldSize, maxRank + 1);
  set.byWorldRank_.assign(static_cast<size_t>(std::max(set.worldSize, 0)), -1);
  for (size_t i = 0; i < set.files.size(); ++i)
    if (set.files[i].worldRank >= 0)
      set.byWorldRank_[static_cast<size_t>(set.files[i].worldRank)] = static_cast<int>(i);
  for (int32_t r = 0; r < set.worldSize; ++r)
    if (set.byWorldRank_[static_cast<size_t>(r)] < 0)
      set.missingRanks.push_back(r);
  return set;
}

int TraceSet::fileOfWorldRank(int32_t worldRank) const {
  if (worldRank < 0 || static_cast<size_t>(worldRank) >= byWorldRank_.size())
    return -1;
  return byWorldRank_[static_cast<size_t>(worldRank)];
}

} // namespace collcheck::analyzer
