// collcheck analyze DIR...: load, match, judge, report. The exit status is the contract with CI:
// 0 clean, 1 findings at or above --fail-on, 2 unusable input or usage, or nothing to check (no
// collective recorded).
#include "analyzer/checks/objective/reference_comparison.h"
#include "analyzer/load/trace_set.h"
#include "analyzer/match/analysis.h"
#include "analyzer/parallel/thread_split.h"
#include "analyzer/report/report.h"
#include "analyzer/sites/call_sites.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "format/clock.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace collcheck::cli {
namespace {

using namespace analyzer;

struct Output {
  std::string path; // "-" for stdout
  bool wanted = false;
};

bool writeTo(const Output &o, const std::function<void(std::ostream &)> &write) {
  if (o.path.empty() || o.path == "-") {
    write(std::cout);
    std::cout.flush();
    return true;
  }
  std::ofstream file(o.path);
  if (!file) {
    std::fprintf(stderr, "collcheck analyze: %s: cannot write\n", o.path.c_str());
    return false;
  }
  write(file);
  return static_cast<bool>(file);
}

// Peak resident memory so far (VmHWM), in MiB; 0 where /proc does not tell.
double peakResidentMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}

bool decideTty(const std::string &mode, int fd) {
  if (mode == "always")
    return true;
  if (mode == "never")
    return false;
  return isatty(fd) != 0;
}

// Whether the job's matching is split among the threads (parallel/thread_split.h): with more
// than one, for a whole job (a partition is one thread's), large enough to gain by it.
// COLLCHECK_THREAD_SPLIT_MIN_SLOTS replaces that size (the tests split small jobs).
bool threadSplit(const TraceSet &traces, unsigned threads, const AnalysisOptions &options) {
  if (threads < 2 || options.partitionCount > 1 || traces.fatal || traces.files.empty())
    return false;
  uint64_t least = parallel::kThreadSplitMinSlots;
  if (const char *text = std::getenv("COLLCHECK_THREAD_SPLIT_MIN_SLOTS"); text && *text)
    least = std::strtoull(text, nullptr, 10);
  return traces.totalSlots >= least;
}

} // namespace

int analyzeMain(Args args) {
  CLI::App app{"Checks the per-process traces of one job: which collectives did not match "
               "across ranks, why, and who is to blame.",
               "collcheck analyze"};
  std::vector<std::string> inputs;
  Output json, sarif, html;
  std::string perfetto, failOn = "warning", color = "auto", progress = "auto", partition;
  unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  size_t lookahead = 8, chunk = AnalysisOptions{}.readChunk;
  bool quiet = false, timings = false;
  app.add_option("inputs", inputs, "trace folders (DIR/*.cctrace) or trace files");
  app.add_option("--json", json.path, "write the JSON report to FILE ('-': stdout)")
      ->expected(0, 1)
      ->default_str("-");
  app.add_option("--sarif", sarif.path, "write a SARIF 2.1.0 log to FILE ('-': stdout)")
      ->expected(0, 1)
      ->default_str("-");
  app.add_option("--html", html.path, "write a self-contained HTML report to FILE ('-': stdout)")
      ->expected(0, 1)
      ->default_str("-");
  app.add_option("--perfetto", perfetto, "write a Chrome trace JSON for the Perfetto UI to FILE");
  app.add_option("--fail-on", failOn,
                 "exit 1 when a finding is at least this severe: error, warning (default), note, "
                 "never")
      ->check(CLI::IsMember({"error", "warning", "note", "never"}));
  app.add_option("--color", color, "color the text report: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--progress", progress,
                 "progress bar on stderr: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--threads", threads,
                 "threads used to open the files; more than one also splits the matching of a "
                 "large job among them")
      ->check(CLI::Range(1u, 256u));
  app.add_option("--lookahead", lookahead, "calls looked at ahead of a divergence, per rank")
      ->check(CLI::Range(size_t{2}, size_t{64}));
  app.add_option("--chunk", chunk,
                 "records read from one file at a time (default 2048, fewer above 1,024 files, "
                 "at least 512)")
      ->check(CLI::Range(size_t{16}, size_t{65536}));
  app.add_option("--partition", partition, "I/N: match only the communicators of part I of N");
  app.add_flag("-q,--quiet", quiet, "no text report (the exit status still tells)");
  app.add_flag("--timings", timings, "print the time of each stage on stderr");
  std::string job;
  bool listJobs = false;
  app.add_option("--job", job,
                 "ID: analyze only the files of this job, where the inputs hold several");
  app.add_flag("--list-jobs", listJobs, "list the jobs of the inputs and their files, then exit");
  std::string reference;
  double tolerance = objective::kDefaultReferenceTolerance;
  app.add_option("--reference", reference,
                 "REF: compare the reduced gradients, window by window, with a single-process run "
                 "traced into REF (both with COLLCHECK_CAPTURE_RESULTS=K)");
  app.add_option("--tolerance", tolerance, "relative tolerance of --reference")
      ->check(CLI::NonNegativeNumber);
  std::vector<std::string> debugDirs;
  app.add_option("--debug-dir", debugDirs,
                 "DIR: where to find the program's binaries or their debug files (DIR/NAME, "
                 "DIR/.build-id/) when they are not where the job ran them; repeatable")
      ->allow_extra_args(false)
      ->check(CLI::ExistingDirectory);

  std::vector<std::string> argv{"collcheck analyze"};
  for (const char *a : args)
    argv.emplace_back(a);
  std::vector<const char *> raw;
  for (auto &a : argv)
    raw.push_back(a.c_str());
  try {
    // Each report flag was given when its option has a count; its path defaults to stdout.
    app.parse(static_cast<int>(raw.size()), raw.data());
  } catch (const CLI::CallForHelp &e) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError &e) {
    std::fprintf(stderr, "collcheck analyze: %s\n(collcheck analyze --help)\n", e.what());
    return 2;
  }
  json.wanted = app.count("--json") > 0;
  sarif.wanted = app.count("--sarif") > 0;
  html.wanted = app.count("--html") > 0;
  // `--json traces/` means the report of traces/ on stdout, not a report written over a folder.
  for (Output *o : {&json, &sarif, &html}) {
    struct stat st;
    if (o->wanted && !o->path.empty() && o->path != "-" && stat(o->path.c_str(), &st) == 0 &&
        (S_ISDIR(st.st_mode) || o->path.ends_with(format::kFileSuffix))) {
      inputs.insert(inputs.begin(), o->path);
      o->path = "-";
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "collcheck analyze: name a trace folder or files (collcheck analyze "
                         "--help)\n");
    return 2;
  }
  int stdoutReports = 0;
  for (const Output *o : {&json, &sarif, &html})
    stdoutReports += o->wanted && (o->path.empty() || o->path == "-");
  if (stdoutReports > 1) {
    std::fprintf(stderr, "collcheck analyze: only one of --json, --sarif and --html can go to "
                         "stdout; give the others a FILE\n");
    return 2;
  }
  AnalysisOptions options;
  options.lookahead = lookahead;
  options.readChunk = chunk;
  if (!partition.empty()) {
    unsigned index = 0, count = 0;
    if (std::sscanf(partition.c_str(), "%u/%u", &index, &count) != 2 || count == 0 ||
        index >= count) {
      std::fprintf(stderr, "collcheck analyze: --partition wants I/N with 0 <= I < N, not '%s'\n",
                   partition.c_str());
      return 2;
    }
    options.partitionIndex = index;
    options.partitionCount = count;
  }

  // The bar shows after a second; COLLCHECK_PROGRESS_DELAY_MS changes that (tests use 0).
  auto delay = std::chrono::milliseconds(1000);
  if (const char *ms = std::getenv("COLLCHECK_PROGRESS_DELAY_MS"))
    delay = std::chrono::milliseconds(std::atoll(ms));

  ProgressBar bar(decideTty(progress, STDERR_FILENO), delay);
  std::atomic<uint64_t> filesOpened{0}, recordsRead{0};
  // The number of files is known only once the folders are listed; the bar shows the count.
  bar.phase("opening traces", &filesOpened, 0, "files");
  auto t0 = std::chrono::steady_clock::now();
  // Never destroyed: the process exits right after the analysis, and the kernel drops the files'
  // mappings at its exit faster than one munmap per file (0.01-0.02 s less at 4,096 files).
  TraceSet &traces = *new TraceSet(TraceSet::open(inputs, threads, &filesOpened, job));
  auto t1 = std::chrono::steady_clock::now();
  if (listJobs) {
    bar.stop();
    for (const JobSummary &j : traces.jobs)
      std::printf("%s\t%zu file(s)\tworld size %s\te.g. %s\n", j.id.c_str(), j.files,
                  j.worldSize >= 0 ? std::to_string(j.worldSize).c_str() : "unknown",
                  j.example.c_str());
    if (traces.jobs.empty()) {
      std::fprintf(stderr, "collcheck analyze: no readable trace file among the inputs\n");
      return 2;
    }
    return 0;
  }
  double openPeakMiB = timings ? peakResidentMiB() : 0;
  bool unusable = traces.fatal;
  for (const InputProblem &p : traces.problems) {
    if (!p.unusable)
      continue;
    unusable = true;
    std::fprintf(stderr, "collcheck analyze: %s%s%s\n", p.file.c_str(), p.file.empty() ? "" : ": ",
                 p.reason.c_str());
  }
  if (traces.fatal || traces.files.empty()) {
    bar.stop();
    return 2;
  }
  if (app.count("--chunk") == 0)
    options.readChunk = readChunkFor(traces.files.size());
  bar.phase("merging", &recordsRead, traces.totalSlots, "records");
  options.recordsRead = &recordsRead;
  // The reference run of rule reference-mismatch, opened for the whole analysis.
  TraceSet referenceTraces;
  objective::ReferenceRun referenceRun;
  if (!reference.empty()) {
    referenceTraces = TraceSet::open({reference}, threads);
    referenceRun = {&referenceTraces, reference, tolerance};
    options.reference = &referenceRun;
  }
  AnalysisResult result;
  parallel::ThreadSplitStats threadStats;
  std::string threadFallback;
  if (threadSplit(traces, threads, options)) {
    if (!parallel::analyzeInThreads(traces, options, threads, result, threadFallback, threadStats,
                                    parallel::balanceFromEnvironment()))
      result = analyze(traces, options); // the same report, from one thread
  } else {
    result = analyze(traces, options);
  }
  auto t2 = std::chrono::steady_clock::now();
  bar.stop();
  auto seconds = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  // A job the rules could not judge as asked (a --reference run with nothing to compare) is never
  // reported as "no findings".
  if (!result.uncheckable.empty()) {
    for (const std::string &why : result.uncheckable)
      std::fprintf(stderr, "collcheck analyze: %s\n", why.c_str());
    return 2;
  }

  // Where each finding's call was made: read from the traces again, only as far as needed.
  auto sitesStart = std::chrono::steady_clock::now();
  Symbolizer symbolizer(debugDirs);
  CallSiteStats siteStats = attachCallSites(traces, result.findings, symbolizer, threads);
  double siteSeconds = seconds(sitesStart, std::chrono::steady_clock::now());
  ReportInput report{traces, result, inputs};
  if (siteStats.filesWithoutSites)
    report.siteNotes.push_back(std::to_string(siteStats.filesWithoutSites) +
                               " trace(s) were written before call sites were recorded (format "
                               "version 3): their ranks' call sites are not known");
  if (!Symbolizer::available())
    report.siteNotes.push_back("this collcheck was built without libdw: call sites are shown as "
                               "module+offset");
  report.failNever = failOn == "never";
  if (!report.failNever)
    rules::parseSeverity(failOn, report.failOn);
  bool written = true;
  if (json.wanted)
    written &= writeTo(json, [&](std::ostream &o) { writeJson(o, report); });
  if (sarif.wanted)
    written &= writeTo(sarif, [&](std::ostream &o) { writeSarif(o, report); });
  if (html.wanted)
    written &= writeTo(html, [&](std::ostream &o) { writeHtml(o, report); });
  if (!perfetto.empty()) {
    std::string error;
    if (!writePerfetto(perfetto, report, error)) {
      std::fprintf(stderr, "collcheck analyze: %s\n", error.c_str());
      written = false;
    }
  }
  if (!quiet) {
    // With a machine-readable report on stdout the text goes to stderr, keeping stdout parseable.
    bool toStderr = stdoutReports > 0;
    std::ostream &out = toStderr ? std::cerr : std::cout;
    writeText(out, report, decideTty(color, toStderr ? STDERR_FILENO : STDOUT_FILENO));
  }
  if (timings) {
    std::fprintf(stderr,
                 "collcheck analyze: open and validate %.3f s (peak %.0f MiB), merge and match "
                 "%.3f s, reports %.3f s (call sites %.3f s); %llu records; peak resident %.0f "
                 "MiB\n",
                 seconds(t0, t1), openPeakMiB, seconds(t1, t2),
                 seconds(t2, std::chrono::steady_clock::now()), siteSeconds,
                 static_cast<unsigned long long>(result.recordsRead), peakResidentMiB());
    if (threadStats.threads > 0)
      std::fprintf(stderr,
                   "collcheck analyze: split over %d threads: shares %.3f s, %d range(s) merged, "
                   "merge %.3f s (%d cut(s) read across)%s%s\n",
                   threadStats.threads, threadStats.shareSeconds, threadStats.ranges,
                   threadStats.mergeSeconds, threadStats.joined,
                   threadFallback.empty() ? "" : "; analyzed whole: ", threadFallback.c_str());
  }
  if (unusable || !written)
    return 2;
  uint64_t pointToPoint = 0;
  for (const CommSummary &c : result.communicators)
    pointToPoint += c.pointToPoint;
  if (result.positions == 0 && pointToPoint == 0) {
    // Nothing was checked: never "no findings". Annotations alone (a PyTorch job whose
    // collectives went through gloo, say) are the common cause.
    std::fprintf(stderr,
                 "collcheck analyze: no collective was recorded in these traces (%llu records), "
                 "so nothing could be checked. collcheck traces MPI and NCCL: a PyTorch job on "
                 "the gloo backend, or collectives through another library, are not seen\n",
                 static_cast<unsigned long long>(result.recordsRead));
    return 2;
  }
  if (report.failNever)
    return 0;
  for (const Finding &f : result.findings)
    if (static_cast<int>(f.severity) >= static_cast<int>(report.failOn))
      return 1;
  return 0;
}

} // namespace collcheck::cli
