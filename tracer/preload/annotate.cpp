// Definitions of the entry points declared weak in collcheck/annotate.h. Each annotation becomes a
// meta record on no communicator, stamped with the current window; a source site is a call site
// (call_site.h).
#include "collcheck/annotate.h"

#include "tracer/preload/call_site.h"
#include "tracer/preload/core.h"

using namespace collcheck::tracer;
namespace format = collcheck::format;

namespace {

void recordValue(format::Kind kind, double value, uint8_t op) {
  Record rec = stampMeta(kind);
  rec.setAuxDouble(value);
  rec.op = op;
  if (Record *r = writeRecord(rec))
    endRecord(r, false);
}

} // namespace

COLLCHECK_EXPORT void collcheck_window_begin(uint64_t window) {
  setWindow(static_cast<uint32_t>(window));
  Record rec = stampMeta(format::Kind::WindowBegin);
  rec.count = window;
  if (Record *r = writeRecord(rec))
    endRecord(r, false);
}

COLLCHECK_EXPORT void collcheck_valid_count(double count) {
  recordValue(format::Kind::ValidCount, count, 0);
}

COLLCHECK_EXPORT void collcheck_normalization(int how, double multiplier) {
  if (how < 0 || how >= static_cast<int>(format::LossNormalization::Count))
    how = static_cast<int>(format::LossNormalization::Unknown);
  recordValue(format::Kind::Normalization, multiplier, static_cast<uint8_t>(how));
}

COLLCHECK_EXPORT void collcheck_reducer_scale(double factor) {
  recordValue(format::Kind::ReducerScale, factor, 0);
}

COLLCHECK_EXPORT uint32_t collcheck_source_site(const char *file, const char *function,
                                                uint32_t line) {
  return file && function ? internSourceSite(file, function, line) : format::kNoSite;
}

COLLCHECK_EXPORT int collcheck_site_enter(uint32_t site) {
  if (detail::outerSite != format::kNoSite || site == format::kNoSite ||
      site > format::kSiteOverflow)
    return 0;
  detail::outerSite = static_cast<uint16_t>(site);
  return 1;
}

COLLCHECK_EXPORT void collcheck_site_leave(void) { detail::outerSite = format::kNoSite; }
