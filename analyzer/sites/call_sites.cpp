#include "analyzer/sites/call_sites.h"

#include "analyzer/load/page_release.h"

#include "format/sites.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <map>
#include <thread>
#include <unordered_map>

namespace collcheck::analyzer {

namespace {

// What one file says of the calls looked for: per finding index, the site index found.
struct FileSites {
  std::map<size_t, uint16_t> siteOfFinding;
  format::SiteTable table;
  bool hasSites = false;
};

// The calls looked for: per communicator, per sequence number, the findings at that position;
// and the range of those sequence numbers, which rejects most records before any look-up.
struct Targets {
  std::unordered_map<uint64_t, std::unordered_map<uint64_t, std::vector<size_t>>> byComm;
  uint64_t minSeq = UINT64_MAX, maxSeq = 0;
};

FileSites scanFile(const TraceFile &file, const Targets &targets, size_t wanted) {
  FileSites out;
  const format::Reader &reader = *file.reader;
  uint32_t version = reader.header().version;
  if (version < 3)
    return out;
  out.hasSites = true;
  format::SiteTableBuilder builder;
  std::vector<uint16_t> needed;
  size_t found = 0;
  // Read where the file is mapped, as the merge reads (match/chunk_reader.h), the pages given back
  // behind the reading so that memory does not grow with the trace.
  PageReleaser released;
  constexpr uint64_t kChunk = 4096;
  bool done = false;
  for (uint64_t first = 0; first < reader.slotCount() && !done; first += kChunk) {
    const uint64_t count = std::min(kChunk, reader.slotCount() - first);
    const format::Record *buffer = &reader.slot(first);
    for (uint64_t k = 0; k < count; ++k) {
      const format::Record &r = buffer[k];
      if (builder.add(r))
        continue;
      if (found < wanted && format::isCallKind(r.kind)) {
        uint64_t seq = r.seq();
        if (seq < targets.minSeq || seq > targets.maxSeq)
          continue;
        auto comm = targets.byComm.find(r.commId);
        if (comm == targets.byComm.end())
          continue;
        auto at = comm->second.find(seq);
        if (at == comm->second.end() || format::classify(r) != format::SlotState::Published)
          continue;
        uint16_t site = format::callSite(r, version);
        for (size_t finding : at->second)
          if (out.siteOfFinding.emplace(finding, site).second)
            ++found;
        needed.push_back(site);
      }
    }
    // A site's table entries are written right after the first call that uses it, its module
    // before it: once every call is found and every entry they need, the rest is not read.
    done = found == wanted && std::all_of(needed.begin(), needed.end(), [&](uint16_t s) {
             return s == format::kNoSite || s == format::kSiteOverflow || builder.hasSite(s);
           });
    released.add(reader, first, count);
  }
  out.table = builder.finish();
  return out;
}

// A return address of a trace's table, symbolized; `hint` says why not, where it is not. A source
// site's line (`offset`) needs no symbolizing: its module is the function and file.
CodePoint pointOf(const format::SiteTable &table, uint64_t address, uint64_t offset,
                  int32_t moduleIndex, bool sourceLine, Symbolizer &symbolizer, std::string &hint) {
  const format::ModuleInfo *module = table.module(moduleIndex);
  if (sourceLine) {
    CodePoint point;
    if (!module || !module->source) {
      hint = "the record of the source file was lost (a torn record)";
      return point;
    }
    point.resolved = !module->path.empty() && offset > 0;
    point.file = module->path;
    point.function = module->function;
    point.line = static_cast<int>(std::min<uint64_t>(offset, INT32_MAX));
    if (module->path.empty())
      hint = "the source file's name was lost (a torn record)";
    else if (offset == 0) {
      hint = "the program gave no line for this site";
      point.module = module->path; // shown as the place: the file, at least
    }
    return point;
  }
  if (!module) {
    hint = "the address lies in no module the process had loaded when it was recorded";
    CodePoint point;
    point.offset = address;
    return point;
  }
  SourceLocation loc = symbolizer.resolve(module->path, module->buildId, offset);
  hint = loc.hint;
  return loc;
}

} // namespace

CallSiteStats attachCallSites(const TraceSet &traces, std::vector<Finding> &findings,
                              Symbolizer &symbolizer, unsigned threads) {
  CallSiteStats stats;
  Targets targets;
  size_t wanted = 0;
  for (size_t i = 0; i < findings.size(); ++i)
    if (findings[i].hasPosition && findings[i].commId) {
      targets.byComm[findings[i].commId][findings[i].firstSeq].push_back(i);
      targets.minSeq = std::min(targets.minSeq, findings[i].firstSeq);
      targets.maxSeq = std::max(targets.maxSeq, findings[i].firstSeq);
      ++wanted;
    }
  if (!wanted)
    return stats;
  std::vector<FileSites> perFile(traces.files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t f; (f = next.fetch_add(1)) < traces.files.size();)
      perFile[f] = scanFile(traces.files[f], targets, wanted);
  };
  std::vector<std::thread> pool;
  unsigned n = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(perFile.size())));
  for (unsigned t = 1; t < n; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();

  // Per finding: ranks grouped by where they made the call.
  std::vector<std::map<std::string, CallSite>> grouped(findings.size());
  for (size_t f = 0; f < perFile.size(); ++f) {
    const TraceFile &file = traces.files[f];
    if (!perFile[f].hasSites) {
      ++stats.filesWithoutSites;
      continue;
    }
    if (file.worldRank < 0)
      continue;
    for (const auto &[finding, siteIndex] : perFile[f].siteOfFinding) {
      const format::SiteInfo *site = perFile[f].table.site(siteIndex);
      if (!site)
        continue; // no site recorded (a caller not known, the table full or a lost record)
      CallSite cs;
      static_cast<CodePoint &>(cs) = pointOf(perFile[f].table, site->address, site->offset,
                                             site->module, site->sourceLine, symbolizer, cs.hint);
      if (site->from) {
        std::string ignored;
        cs.from = pointOf(perFile[f].table, site->from, site->fromOffset, site->fromModule, false,
                          symbolizer, ignored);
      }
      auto [it, inserted] = grouped[finding].emplace(describeCallSite(cs), cs);
      it->second.ranks.push_back(file.worldRank);
    }
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    std::vector<CallSite> sites;
    for (auto &[key, site] : grouped[i]) {
      std::sort(site.ranks.begin(), site.ranks.end());
      sites.push_back(std::move(site));
    }
    // In the order of their lowest rank, as the rank groups are.
    std::sort(sites.begin(), sites.end(),
              [](const CallSite &a, const CallSite &b) { return a.ranks < b.ranks; });
    findings[i].callSites = std::move(sites);
  }
  return stats;
}

} // namespace collcheck::analyzer
