#include "format/reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace collcheck::format {
namespace {

bool allZero(const Record &r) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(&r);
  for (size_t i = 0; i < sizeof r; ++i)
    if (bytes[i] != 0)
      return false;
  return true;
}

uint32_t byteSwap32(uint32_t v) { return __builtin_bswap32(v); }

} // namespace

Reader::~Reader() {
  if (map_)
    munmap(map_, mapBytes_);
}

SlotState Reader::state(uint64_t i) const { return classify(records_[i]); }

std::unique_ptr<Reader> Reader::open(const std::string &path, std::string &error, Scan scan) {
  std::string reason;
  auto reader = openWithReason(path, reason, scan);
  if (!reader)
    error = path + ": " + reason;
  return reader;
}

std::unique_ptr<Reader> Reader::openWithReason(const std::string &path, std::string &reason,
                                               Scan scan) {
  std::unique_ptr<Reader> reader(new Reader());
  reader->path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    reason = std::string("cannot open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    reason = "not a regular file";
    close(fd);
    return nullptr;
  }
  auto size = static_cast<uint64_t>(st.st_size);
  if (size < sizeof(FileHeader)) {
    reason = "truncated: " + std::to_string(size) + " bytes, shorter than the trace header (" +
             std::to_string(sizeof(FileHeader)) + ")";
    close(fd);
    return nullptr;
  }
  ssize_t got = pread(fd, &reader->header_, sizeof(FileHeader), 0);
  if (got != static_cast<ssize_t>(sizeof(FileHeader))) {
    reason = "cannot read the trace header";
    close(fd);
    return nullptr;
  }
  const FileHeader &h = reader->header_;
  auto fail = [&](const std::string &why) {
    reason = why;
    close(fd);
    return nullptr;
  };
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    return fail("not a collcheck trace (bad magic)");
  if (h.endianTag != kEndianTag)
    return fail(h.endianTag == byteSwap32(kEndianTag)
                    ? "written with the other byte order; not supported"
                    : "bad byte-order tag; the header is corrupt");
  if (h.version < kOldestVersion || h.version > kVersion)
    return fail("unsupported trace version " + std::to_string(h.version) + " (this build reads " +
                std::to_string(kOldestVersion) + " to " + std::to_string(kVersion) + ")");
  if (h.headerSize != kHeaderSize || h.recordSize != kRecordSize)
    return fail("unexpected header or record size (" + std::to_string(h.headerSize) + ", " +
                std::to_string(h.recordSize) + ")");
  // A corrupt header must not make a reader size anything by it: bounds every consumer can trust.
  if (h.worldSize < -1 || h.worldSize > kMaxWorldSize || h.worldRank < -1 ||
      (h.worldSize >= 0 && h.worldRank >= h.worldSize) ||
      (h.worldSize < 0 && h.worldRank >= kMaxWorldSize))
    return fail("implausible world rank " + std::to_string(h.worldRank) + " of size " +
                std::to_string(h.worldSize) + "; the header is corrupt");
  uint64_t body = size > kHeaderSize ? size - kHeaderSize : 0;
  reader->summary_.partialTail = body % kRecordSize != 0;
  uint64_t slots = body / kRecordSize;
  if (slots > 0) {
    reader->mapBytes_ = static_cast<size_t>(size);
    void *map = mmap(nullptr, reader->mapBytes_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
      return fail(std::string("cannot map: ") + std::strerror(errno));
    madvise(map, reader->mapBytes_, MADV_SEQUENTIAL);
    reader->map_ = map;
    reader->records_ = reinterpret_cast<const Record *>(static_cast<char *>(map) + kHeaderSize);
  }
  if (scan == Scan::HeaderOnly) {
    reader->slots_ = slots;
    // A finished trace says how many slots its writer handed out; the rest is the preallocated,
    // never-written end, which costs a streaming reader what records cost. It is left unread when
    // the slots right after the count are empty: a record reserved after the trace was marked
    // finished lands there, and a count damaged downwards points into records. (Read, not
    // touched through the mapping, which would map the pages around them too.)
    uint64_t used = h.finished == 1 ? h.slotsAtFinish : 0;
    if (used > 0 && used < slots) {
      Record after[kEndCheckSlots];
      uint64_t n = std::min<uint64_t>(slots - used, kEndCheckSlots);
      bool endIsEmpty =
          pread(fd, after, n * kRecordSize, static_cast<off_t>(kHeaderSize + used * kRecordSize)) ==
          static_cast<ssize_t>(n * kRecordSize);
      for (uint64_t i = 0; i < n && endIsEmpty; ++i)
        endIsEmpty = classify(after[i]) == SlotState::Empty;
      if (endIsEmpty)
        reader->slots_ = used;
    }
    close(fd);
    return reader;
  }
  close(fd);
  // Find the last non-empty slot, then classify everything before it.
  uint64_t last = slots;
  while (last > 0 && allZero(reader->records_[last - 1]))
    --last;
  reader->slots_ = last;
  Summary &s = reader->summary_;
  for (uint64_t i = 0; i < last; ++i) {
    switch (reader->state(i)) {
    case SlotState::Published:
      ++s.published;
      if (!isKnownKind(reader->records_[i].kind))
        ++s.unknownKind;
      break;
    case SlotState::Empty:
      ++s.holes;
      break;
    case SlotState::Torn:
      ++s.torn;
      s.firstProblem = std::min(s.firstProblem, i);
      break;
    case SlotState::Corrupt:
      ++s.corrupt;
      s.firstProblem = std::min(s.firstProblem, i);
      break;
    }
  }
  return reader;
}

} // namespace collcheck::format
