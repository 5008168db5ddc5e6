// Reads one trace file without trusting it: validates the header, maps the records read-only and
// classifies every slot (published, never published, torn, corrupt). Memory use does not depend on
// the file's length beyond the mapping itself.
#pragma once

#include "format/record.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace collcheck::format {

enum class SlotState : uint8_t {
  Published, // check matches: the record reads back exactly as written
  Empty,     // all zero: reserved or never reached
  Torn,      // some bytes written, never published (the writer died mid-record)
  Corrupt,   // published but its bytes do not match the check
};

// The state of one slot, from its bytes alone (what Reader::state says of a mapped slot).
inline SlotState classify(const Record &r) {
  if (r.check == 0) {
    // A file's preallocated end is empty slots, up to half of it: one test of eight words each
    // (a byte loop with an early exit costs more than matching a record).
    uint64_t words[sizeof r / sizeof(uint64_t)];
    std::memcpy(words, &r, sizeof r);
    uint64_t any = 0;
    for (uint64_t w : words)
      any |= w;
    return any ? SlotState::Torn : SlotState::Empty;
  }
  return r.check == recordHash(r) ? SlotState::Published : SlotState::Corrupt;
}

// A fixed-size text field of a header (host, job id, executable): up to its first NUL, with every
// byte outside printable ASCII shown as '?'. The fields come from the traced environment and from
// files that may be damaged: they must not put control sequences on a terminal or invalid UTF-8
// in a report.
inline std::string headerText(const char *field, size_t size) {
  std::string out(field, strnlen(field, size));
  for (char &c : out)
    if (c < 0x20 || c > 0x7e)
      c = '?';
  return out;
}

class Reader {
public:
  static constexpr uint64_t kEndCheckSlots = 8;
  // Full: classify every slot at open (summary(), slotCount() trimmed to the last non-empty
  // slot). HeaderOnly: validate the header and map the file, nothing more: slotCount() is every
  // whole slot of the file (of a finished trace, the slots its writer handed out, when the
  // kEndCheckSlots after them are empty) and summary() holds only partialTail; a caller that
  // streams the records classifies them itself (classify()), saving a pass over the file.
  enum class Scan { Full, HeaderOnly };
  // Null with `error` naming the file and the reason ("PATH: REASON") when the file is not a
  // readable trace.
  static std::unique_ptr<Reader> open(const std::string &path, std::string &error,
                                      Scan scan = Scan::Full);
  // The same with the reason alone, for a caller that reports the file beside it (an analyzer's
  // input problem has its own file field).
  static std::unique_ptr<Reader> openWithReason(const std::string &path, std::string &reason,
                                                Scan scan = Scan::Full);
  ~Reader();
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  const std::string &path() const { return path_; }
  const FileHeader &header() const { return header_; }
  // Slots up to and including the last non-empty one.
  uint64_t slotCount() const { return slots_; }
  const Record &slot(uint64_t i) const { return records_[i]; }
  SlotState state(uint64_t i) const;

  struct Summary {
    uint64_t published = 0;
    uint64_t holes = 0; // empty slots before the last published one (a writer died reserving)
    uint64_t torn = 0;
    uint64_t corrupt = 0;
    uint64_t unknownKind = 0;
    bool partialTail = false;           // file length is not a whole number of records
    uint64_t firstProblem = UINT64_MAX; // slot index of the first torn or corrupt slot
  };
  const Summary &summary() const { return summary_; }
  // A published record of a kind this reader does not know is skipped, not misread.
  bool usable(uint64_t i) const {
    return state(i) == SlotState::Published && isKnownKind(records_[i].kind);
  }

private:
  Reader() = default;
  std::string path_;
  FileHeader header_{};
  const Record *records_ = nullptr;
  void *map_ = nullptr;
  size_t mapBytes_ = 0;
  uint64_t slots_ = 0;
  Summary summary_;
};

} // namespace collcheck::format
