// A byte buffer for the event logs of a job analyzed in parts (event_log.h): plain values in the
// host's byte order (written and read by the same process).
// Reading past the end or a length beyond what is left fails, and never reads out of bounds.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace collcheck::analyzer::wire {

class Writer {
public:
  template <typename T> void put(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  template <typename T> void putVector(const std::vector<T> &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(v.size());
    if (!v.empty()) // an empty vector's data() may be null, which memcpy must not get
      out_.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }
  size_t size() const { return out_.size(); }

private:
  std::string out_;
};

// A share's event log, held by value: copies share the bytes, which never change (a log is
// hundreds of megabytes in a job of many communicators).
class Bytes {
public:
  Bytes() = default;
  Bytes(std::string owned) // NOLINT(google-explicit-constructor): a log taken from its Writer
      : owner_(std::make_shared<const std::string>(std::move(owned))), view_(*owner_) {}
  operator std::string_view() const { return view_; } // NOLINT(google-explicit-constructor)
  const char *data() const { return view_.data(); }
  size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }

private:
  std::shared_ptr<const std::string> owner_;
  std::string_view view_;
};

class Reader {
public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T> bool get(T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (in_.size() - at_ < sizeof v)
      return false;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  template <typename T> bool getVector(std::vector<T> &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    uint64_t n = 0;
    if (!get(n) || n > (in_.size() - at_) / sizeof(T))
      return false;
    v.resize(n);
    if (n > 0)
      std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return true;
  }
  bool done() const { return at_ == in_.size(); }

private:
  std::string_view in_;
  size_t at_ = 0;
};

} // namespace collcheck::analyzer::wire
