// --perfetto FILE: Chrome trace-event JSON, which the Perfetto UI (and chrome://tracing) opens.
// One process per rank, one thread per communicator, one complete event per call (a call that
// never returned lasts to the end of its trace), findings as global instant events.
#include "analyzer/load/page_release.h"
#include "analyzer/model/signature.h"
#include "analyzer/report/report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace collcheck::analyzer {
namespace {

std::string jsonString(const std::string &s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

bool writePerfetto(const std::string &path, const ReportInput &in, std::string &error) {
  std::FILE *out = std::fopen(path.c_str(), "w");
  if (!out) {
    error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  std::unordered_map<uint64_t, std::pair<int, std::string>> comms;
  for (const CommSummary &c : in.result.communicators)
    comms.emplace(c.comm.id, std::make_pair(static_cast<int>(c.comm.index) + 1, c.comm.label));
  uint64_t base = UINT64_MAX;
  for (const TraceFile &f : in.traces.files)
    base = std::min(base, f.reader->header().createdRealtimeNs);
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
  bool first = true;
  auto sep = [&] {
    if (!first)
      std::fputs(",\n", out);
    first = false;
  };
  for (size_t fi = 0; fi < in.traces.files.size(); ++fi) {
    const TraceFile &f = in.traces.files[fi];
    const format::Reader &reader = *f.reader;
    const format::FileHeader &h = reader.header();
    int pid = f.worldRank >= 0 ? f.worldRank : 1000000 + static_cast<int>(fi);
    double offsetUs = static_cast<double>(h.createdRealtimeNs - base) / 1000.0;
    sep();
    std::fprintf(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":%s}}",
                 pid, jsonString(f.label).c_str());
    sep();
    std::fprintf(out,
                 "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,"
                 "\"args\":{\"sort_index\":%d}}",
                 pid, pid);
    std::unordered_map<uint64_t, bool> named;
    double endUs =
        -std::numeric_limits<double>::infinity(); // times may precede the file's creation
    // The trace's end, where a call that never returned is drawn to.
    for (uint64_t i = 0; i < reader.slotCount(); ++i)
      if (reader.usable(i) && format::hasTimestamp(reader.slot(i).kind))
        endUs = std::max(endUs, format::nanosSinceCreate(h, reader.slot(i).tscStart) / 1000.0 +
                                    format::durationNanos(h, reader.slot(i)) / 1000.0);
    for (uint64_t i = 0; i < reader.slotCount(); ++i) {
      if (!reader.usable(i))
        continue;
      const format::Record &r = reader.slot(i);
      if (!format::isSequenced(kindOf(r)))
        continue;
      auto it = comms.find(r.commId);
      int tid = it == comms.end() ? 0 : it->second.first;
      if (!named[r.commId]) {
        named[r.commId] = true;
        std::string label = it == comms.end() ? "comm " + shortCommId(r.commId) : it->second.second;
        sep();
        std::fprintf(out,
                     "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                     "\"args\":{\"name\":%s}}",
                     pid, tid, jsonString(label).c_str());
      }
      double startUs = format::nanosSinceCreate(h, r.tscStart) / 1000.0;
      bool returned = format::returned(r);
      double durUs = returned ? std::max(0.001, format::durationNanos(h, r) / 1000.0)
                              : std::max(0.001, endUs - startUs);
      std::string name(format::kindName(kindOf(r)));
      if (!returned)
        name += " (did not return)";
      sep();
      std::fprintf(out,
                   "{\"ph\":\"X\",\"name\":%s,\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                   "\"dur\":%.3f,\"args\":{\"seq\":%llu,\"call\":%s,\"window\":%u,"
                   "\"returned\":%s}}",
                   jsonString(name).c_str(), isPointToPoint(kindOf(r)) ? "p2p" : "collective", pid,
                   tid, offsetUs + startUs, durUs, static_cast<unsigned long long>(r.seq()),
                   jsonString(describeCall(r)).c_str(), r.window, returned ? "true" : "false");
    }
    releaseSlots(reader, 0, reader.slotCount());
  }
  for (const Finding &finding : in.result.findings) {
    if (finding.firstTimeNs < 0)
      continue;
    double ts = (finding.firstTimeNs - static_cast<double>(base)) / 1000.0;
    sep();
    std::fprintf(out,
                 "{\"ph\":\"i\",\"s\":\"g\",\"name\":%s,\"cat\":\"finding\",\"pid\":0,\"tid\":0,"
                 "\"ts\":%.3f,\"args\":{\"severity\":\"%s\",\"message\":%s,\"where\":%s}}",
                 jsonString(finding.ruleId).c_str(), ts,
                 std::string(rules::severityName(finding.severity)).c_str(),
                 jsonString(finding.message).c_str(), jsonString(findingLocation(finding)).c_str());
  }
  std::fputs("\n]}\n", out);
  bool ok = std::ferror(out) == 0;
  ok = std::fclose(out) == 0 && ok;
  if (!ok)
    error = path + ": write failed: " + std::strerror(errno);
  return ok;
}

} // namespace collcheck::analyzer
