#include "analyzer/load/slot_window.h"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

namespace collcheck::analyzer {

SlotWindow::SlotWindow(const format::Reader &reader) : reader_(reader) {
  fd_ = ::open(reader.path().c_str(), O_RDONLY | O_CLOEXEC);
  ownsFd_ = fd_ >= 0;
}

SlotWindow::~SlotWindow() {
  if (ownsFd_)
    ::close(fd_);
}

const format::Record &SlotWindow::fill(uint64_t i) {
  if (fd_ < 0)
    return reader_.slot(i);
  first_ = i - i % kWindow;
  const uint64_t want = std::min<uint64_t>(kWindow, count() - first_);
  const ssize_t got = pread(fd_, window_, want * format::kRecordSize,
                            static_cast<off_t>(format::kHeaderSize + first_ * format::kRecordSize));
  valid_ = got > 0 ? static_cast<uint64_t>(got) / format::kRecordSize : 0;
  return i - first_ < valid_ ? window_[i - first_] : reader_.slot(i);
}

} // namespace collcheck::analyzer
