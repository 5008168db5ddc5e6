// One file's records read by slot number, away from the chunked reading: the cut search of a split
// among threads and a share's look at the creations before its range. Copied, a page of records at
// a time, as the chunks are (match/chunk_reader.h), so that no page of the file is mapped.
#pragma once

#include "reader.h"

#include <cstdint>

namespace collcheck::analyzer {

class SlotWindow {
public:
  // Copied from a descriptor of the file opened here (through the mapping where the file cannot
  // be opened again).
  explicit SlotWindow(const format::Reader &reader);
  // Copied from `borrowed.fd`, which stays the caller's, when it is open (>= 0); else through the
  // mapping.
  struct BorrowedFd {
    int fd;
  };
  SlotWindow(const format::Reader &reader, BorrowedFd borrowed)
      : reader_(reader), fd_(borrowed.fd) {}
  ~SlotWindow();
  SlotWindow(const SlotWindow &) = delete;
  SlotWindow &operator=(const SlotWindow &) = delete;

  uint64_t count() const { return reader_.slotCount(); }
  // Slot `i` < count(). A file that became shorter than its reader saw (truncated under it) is
  // read through the mapping, as the chunks are.
  const format::Record &operator[](uint64_t i) {
    return fd_ >= 0 && i - first_ < valid_ ? window_[i - first_] : fill(i);
  }

private:
  static constexpr uint64_t kWindow = 4096 / sizeof(format::Record);
  const format::Record &fill(uint64_t i);

  const format::Reader &reader_;
  int fd_ = -1;
  bool ownsFd_ = false;
  uint64_t first_ = 0, valid_ = 0; // window_ holds slots first_ .. first_ + valid_ - 1
  format::Record window_[kWindow];
};

} // namespace collcheck::analyzer
