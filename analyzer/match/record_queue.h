// A FIFO of records for one member of one communicator: filled by the file reader, drained by the
// aligner. A ring buffer that only grows when the aligner falls behind, so its size is set by the
// lookahead and the read chunk, not by the trace length.
#pragma once

#include "format/record.h"

#include <cstddef>
#include <vector>

namespace collcheck::analyzer {

class RecordQueue {
public:
  size_t size() const { return tail_ - head_; }
  bool empty() const { return tail_ == head_; }
  format::Record &at(size_t i) { return buffer_[(head_ + i) & mask_]; }
  const format::Record &at(size_t i) const { return buffer_[(head_ + i) & mask_]; }
  format::Record &front() { return at(0); }
  const format::Record &front() const { return at(0); }
  void push(const format::Record &r) {
    if (size() == buffer_.size())
      grow();
    buffer_[tail_++ & mask_] = r;
  }
  void pop(size_t n = 1) { head_ += n; }
  // The record popped last; valid until the next push.
  const format::Record &lastPopped() const { return buffer_[(head_ - 1) & mask_]; }

private:
  void grow() {
    std::vector<format::Record> bigger(buffer_.empty() ? 64 : buffer_.size() * 2);
    size_t n = size();
    for (size_t i = 0; i < n; ++i)
      bigger[i + 1] = at(i);
    if (!buffer_.empty())
      bigger[0] = buffer_[(head_ - 1) & mask_]; // keep lastPopped() readable
    head_ = 1;
    tail_ = n + 1;
    buffer_.swap(bigger);
    mask_ = buffer_.size() - 1;
  }
  std::vector<format::Record> buffer_;
  size_t head_ = 0, tail_ = 0, mask_ = 0;
};

// A placeholder for a record the trace lost (a sequence number skipped because of a torn or
// corrupt slot): it matches any call and makes its rank "no trace" at that position.
inline constexpr uint8_t kHoleKind = 0xff;
inline bool isHole(const format::Record &r) { return r.kind == kHoleKind; }

} // namespace collcheck::analyzer
