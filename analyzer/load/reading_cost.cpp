#include "reading_cost.h"

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace collcheck::analyzer {
namespace {

using Clock = std::chrono::steady_clock;
// Per file and way: enough pages that a region's own costs (a look-up of the file, a call into the
// kernel) weigh little beside its pages', as in the analysis, which maps each file once.
constexpr uint64_t kRegion = 256 * 1024;
constexpr uint64_t kLine = 64;
constexpr size_t kSampleFiles = 16;
constexpr double kCopiesPerMappedPage = 4;

// Every line of a region loaded, as the matching loads every record.
void loadLines(const unsigned char *bytes) {
  for (uint64_t at = 0; at < kRegion; at += kLine)
    (void)*reinterpret_cast<const volatile uint64_t *>(bytes + at);
}

// Through the file's own mapping, as the analysis reads it: the pages' first touch maps them, and
// the release the analysis makes of read pages unmaps them.
double mapped(const unsigned char *region) {
  auto start = Clock::now();
  loadLines(region);
  madvise(const_cast<unsigned char *>(region), kRegion, MADV_DONTNEED);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double copied(int fd, uint64_t offset, unsigned char *buffer, bool &ok) {
  auto start = Clock::now();
  ok =
      ok && pread(fd, buffer, kRegion, static_cast<off_t>(offset)) == static_cast<ssize_t>(kRegion);
  loadLines(buffer);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

ReadingCost measureReadingCost(const TraceSet &traces) {
  ReadingCost cost;
  static const auto pageSize = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (format::kHeaderSize % pageSize != 0 || kRegion % pageSize != 0)
    return cost; // the records' pages would not start where the regions do
  // Two regions per file, side by side.
  const uint64_t regionSlots = kRegion / format::kRecordSize;
  std::vector<size_t> sample;
  for (size_t i = 0; i < traces.files.size(); ++i)
    if (traces.files[i].slots >= 2 * regionSlots)
      sample.push_back(i);
  if (sample.size() > kSampleFiles) { // spread over the set, not its first files only
    std::vector<size_t> spread;
    for (size_t k = 0; k < kSampleFiles; ++k)
      spread.push_back(sample[k * sample.size() / kSampleFiles]);
    sample = std::move(spread);
  }
  std::vector<unsigned char> buffer(kRegion, 0); // touched now, not in the measurement
  // Each way's least time over the files: a region whose process was preempted, or that met the
  // other process's reading or MPI's start, costs more than the machine's own price, never less.
  double mappedSeconds = 0, copiedSeconds = 0;
  uint64_t regions = 0;
  for (size_t k = 0; k < sample.size(); ++k) {
    const TraceFile &file = traces.files[sample[k]];
    int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    // From the file's middle: its first pages come into the page cache in read-ahead's smallest
    // folios, which cost either way more per page than the rest of the file.
    const uint64_t a = file.slots / 2 / regionSlots * regionSlots - regionSlots,
                   b = a + regionSlots;
    auto at = [&](uint64_t slot) {
      return reinterpret_cast<const unsigned char *>(&file.reader->slot(slot));
    };
    auto offset = [](uint64_t slot) { return format::kHeaderSize + slot * format::kRecordSize; };
    // Alternately first: whichever goes first pays for the file's first look-ups.
    bool ok = true;
    double m = 0, c = 0;
    if (k % 2 == 0) {
      m = mapped(at(a));
      c = copied(fd, offset(b), buffer.data(), ok);
    } else {
      c = copied(fd, offset(a), buffer.data(), ok);
      m = mapped(at(b));
    }
    close(fd);
    if (!ok)
      return {};
    mappedSeconds = regions == 0 ? m : std::min(mappedSeconds, m);
    copiedSeconds = regions == 0 ? c : std::min(copiedSeconds, c);
    ++regions;
  }
  if (regions == 0)
    return {};
  const uint64_t regionPages = kRegion / pageSize;
  cost.pages = regions * regionPages;
  cost.mappedNsPerPage = mappedSeconds * 1e9 / static_cast<double>(regionPages);
  cost.copiedNsPerPage = copiedSeconds * 1e9 / static_cast<double>(regionPages);
  return cost;
}

bool copyingIsCheaper(const ReadingCost &cost) {
  return cost.pages > 0 && cost.mappedNsPerPage > kCopiesPerMappedPage * cost.copiedNsPerPage;
}

} // namespace collcheck::analyzer
