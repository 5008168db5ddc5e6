// A byte buffer for what the processes of a split analysis send each other: plain values in the
// host's byte order (the processes of one analysis run the same binary on one kind of machine).
// Reading past the end or a length beyond what is left fails, and never reads out of bounds.
#pragma once

#include <cstdint>
#include <cstring>
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
    out_.append(s);
  }
  std::string take() { return std::move(out_); }
  size_t size() const { return out_.size(); }

private:
  std::string out_;
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
    uint64_t n = 0;
    if (!get(n) || n > in_.size() - at_)
      return false;
    s.assign(in_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool done() const { return at_ == in_.size(); }

private:
  std::string_view in_;
  size_t at_ = 0;
};

} // namespace collcheck::analyzer::wire
