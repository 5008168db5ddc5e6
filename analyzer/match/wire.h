// A byte buffer for what the processes of a split analysis send each other: plain values in the
// host's byte order (the processes of one analysis run the same binary on one kind of machine).
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
  void putString(std::string_view s) {
    put<uint64_t>(s.size());
    putBytes(s);
  }
  // Bytes without their length: the second half of a putString whose length was put before.
  void putBytes(std::string_view s) { out_.append(s); }
  std::string take() { return std::move(out_); }
  size_t size() const { return out_.size(); }
  // Room for `bytes` more, so that a large message is written without growing (and copying)
  // its buffer again and again.
  void reserve(size_t bytes) { out_.reserve(out_.size() + bytes); }

private:
  std::string out_;
};

// What a Writer would hold after the same calls, without writing: the size of a message before it
// is built (an encoder written once, as a template over the two).
class Counter {
public:
  template <typename T> void put(const T &) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_ += sizeof(T);
  }
  template <typename T> void putVector(const std::vector<T> &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_ += sizeof(uint64_t) + v.size() * sizeof(T);
  }
  void putString(std::string_view s) { bytes_ += sizeof(uint64_t) + s.size(); }
  void putBytes(std::string_view s) { bytes_ += s.size(); }
  size_t size() const { return bytes_; }

private:
  size_t bytes_ = 0;
};

// Bytes held by value or as a part of a message they keep alive: a share's event log, hundreds of
// megabytes in a job of many communicators, is decoded where it arrived rather than copied out
// (a copy into new memory costs the first touch of every page, which some machines charge dearly).
// Copies share the bytes, which never change.
class Bytes {
public:
  Bytes() = default;
  Bytes(std::string owned) // NOLINT(google-explicit-constructor): a log taken from its Writer
      : owner_(std::make_shared<const std::string>(std::move(owned))), view_(*owner_) {}
  Bytes(std::shared_ptr<const std::string> message, std::string_view part)
      : owner_(std::move(message)), view_(part) {}
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
  bool getString(std::string &s) {
    std::string_view view;
    if (!getView(view))
      return false;
    s.assign(view);
    return true;
  }
  // A string without copying it: the view points into the reader's input.
  bool getView(std::string_view &s) {
    uint64_t n = 0;
    if (!get(n) || n > in_.size() - at_)
      return false;
    s = in_.substr(at_, n);
    at_ += n;
    return true;
  }
  bool done() const { return at_ == in_.size(); }

private:
  std::string_view in_;
  size_t at_ = 0;
};

} // namespace collcheck::analyzer::wire
