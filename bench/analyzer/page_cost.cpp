// What this machine charges for reading trace files out of the page cache, by one process and by
// two side by side: the ceiling under any split of the analysis, whatever the analyzer does.
// Machines of one kind differ here by several times (docs/performance.md, *Split analysis*), and a
// split can only gain what two processes gain in reading. Two ways of reading, in turn for a number
// of rounds:
//   mapped  each file mapped and every record's first word loaded (what the analyzer's matching in
//           place does: each page's first touch maps it), then unmapped;
//   pread   each file copied 256 KiB at a time into one buffer that is used again (no new pages).
// "two" runs two forked processes side by side, each over half the files; its time is the slower
// one's, and the speed-up is over "one" of the same round. Usage:
//   collcheck_bench_page_cost DIR [ROUNDS=3]
// Then the analyzer's own measurement (load/reading_cost.h), 20 times: the ratios it finds and how
// often it would copy. The files should be in the page cache (read them once before): a read from
// disk measures the disk.
#include "load/reading_cost.h"
#include "load/trace_set.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kPage = 4096;
constexpr size_t kLine = 64;
constexpr size_t kCopyChunk = 256 * 1024;

struct Pass {
  double seconds = 0;
  uint64_t bytes = 0;
  bool ok = true;
};

// The loads must not be optimized away: their sum is kept here.
volatile uint64_t sink;

Pass readMapped(const std::vector<std::string> &files, size_t begin, size_t end) {
  Pass pass;
  auto start = Clock::now();
  uint64_t sum = 0;
  for (size_t i = begin; i < end; ++i) {
    int fd = open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      pass.ok = false;
      if (fd >= 0)
        close(fd);
      continue;
    }
    auto size = static_cast<size_t>(st.st_size) & ~(kPage - 1);
    void *map = size ? mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) {
      pass.ok = size == 0;
      continue;
    }
    const auto *bytes = static_cast<const unsigned char *>(map);
    for (size_t at = 0; at < size; at += kLine)
      sum += *reinterpret_cast<const uint64_t *>(bytes + at);
    munmap(map, size);
    pass.bytes += size;
  }
  sink = sum;
  pass.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return pass;
}

Pass readCopied(const std::vector<std::string> &files, size_t begin, size_t end) {
  Pass pass;
  std::vector<unsigned char> buffer(kCopyChunk, 1); // touched once, before the clock starts
  auto start = Clock::now();
  uint64_t sum = 0;
  for (size_t i = begin; i < end; ++i) {
    int fd = open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      pass.ok = false;
      continue;
    }
    off_t at = 0;
    for (ssize_t got; (got = pread(fd, buffer.data(), buffer.size(), at)) > 0; at += got)
      sum += buffer[0];
    close(fd);
    pass.bytes += static_cast<uint64_t>(at);
  }
  sink = sum;
  pass.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return pass;
}

using Reading = Pass (*)(const std::vector<std::string> &, size_t, size_t);

// Two processes side by side, each over half the files: the slower one's time, the bytes of both.
Pass sideBySide(Reading read, const std::vector<std::string> &files) {
  const size_t half = files.size() / 2;
  Pass both;
  int fds[2][2];
  pid_t pids[2] = {-1, -1};
  for (int k = 0; k < 2; ++k) {
    if (pipe(fds[k]) != 0) {
      both.ok = false;
      return both;
    }
    pids[k] = fork();
    if (pids[k] == 0) {
      Pass mine = k == 0 ? read(files, 0, half) : read(files, half, files.size());
      ssize_t wrote = write(fds[k][1], &mine, sizeof mine);
      _exit(wrote == static_cast<ssize_t>(sizeof mine) ? 0 : 1);
    }
    close(fds[k][1]);
  }
  for (int k = 0; k < 2; ++k) {
    Pass mine;
    mine.ok = pids[k] > 0 && ::read(fds[k][0], &mine, sizeof mine) == sizeof mine;
    close(fds[k][0]);
    int status = 0;
    if (pids[k] > 0)
      waitpid(pids[k], &status, 0);
    both.ok = both.ok && mine.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    both.seconds = std::max(both.seconds, mine.seconds);
    both.bytes += mine.bytes;
  }
  return both;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [ROUNDS=3]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  if (rounds < 1) {
    std::fprintf(stderr, "page_cost: ROUNDS must be positive\n");
    return 2;
  }
  std::string error;
  const std::vector<std::string> files = collcheck::analyzer::listTraceFiles(argv[1], error);
  if (!error.empty() || files.size() < 2) {
    std::fprintf(stderr, "page_cost: %s\n",
                 error.empty() ? "the folder needs at least two trace files" : error.c_str());
    return 1;
  }
  struct Way {
    const char *name;
    Reading read;
    std::vector<double> speedUps;
  } ways[] = {{"mapped", readMapped, {}}, {"pread", readCopied, {}}};
  std::printf("%zu files\n", files.size());
  for (int round = 1; round <= rounds; ++round) {
    for (Way &way : ways) {
      const Pass one = way.read(files, 0, files.size());
      const Pass two = sideBySide(way.read, files);
      if (!one.ok || !two.ok || one.bytes != two.bytes || one.bytes == 0) {
        std::fprintf(stderr, "page_cost: %s: a file could not be read\n", way.name);
        return 1;
      }
      const double pages = static_cast<double>(one.bytes) / kPage;
      way.speedUps.push_back(one.seconds / two.seconds);
      std::printf("round %d, %-6s: one process %.3f s (%.2f GB/s, %.0f ns a page), two side by "
                  "side %.3f s: %.2fx\n",
                  round, way.name, one.seconds, static_cast<double>(one.bytes) / one.seconds / 1e9,
                  one.seconds / pages * 1e9, two.seconds, way.speedUps.back());
    }
  }
  for (const Way &way : ways)
    std::printf("median speed-up of two processes, %s: %.2f\n", way.name, median(way.speedUps));
  const collcheck::analyzer::TraceSet traces = collcheck::analyzer::TraceSet::open({argv[1]}, 1);
  std::vector<double> ratios;
  int copies = 0;
  constexpr int kProbes = 20;
  for (int i = 0; i < kProbes; ++i) {
    const collcheck::analyzer::ReadingCost cost = collcheck::analyzer::measureReadingCost(traces);
    if (cost.pages == 0) {
      std::printf("the analyzer's measurement: the files hold too few records to measure\n");
      return 0;
    }
    ratios.push_back(cost.mappedNsPerPage / cost.copiedNsPerPage);
    copies += collcheck::analyzer::copyingIsCheaper(cost);
  }
  std::printf("the analyzer's measurement, %d times: a mapped page over a copied one %.1f-%.1f "
              "(median %.1f); copying chosen %d times\n",
              kProbes, *std::min_element(ratios.begin(), ratios.end()),
              *std::max_element(ratios.begin(), ratios.end()), median(ratios), copies);
  return 0;
}
