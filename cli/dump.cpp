// collcheck dump FILE...: a trace file as JSON Lines, the header first, then one record a line.
// For people and scripts: every field by name, nothing interpreted beyond the format's own tables.
#include "analyzer/model/communicator.h"
#include "cli/commands.h"
#include "format/reader.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <string>

namespace collcheck::cli {
namespace {

using analyzer::hexCommId;
using nlohmann::ordered_json;

std::string fixed(const char *field, size_t size) { return format::headerText(field, size); }

ordered_json headerJson(const std::string &path, const format::Reader &reader) {
  const format::FileHeader &h = reader.header();
  ordered_json j;
  j["file"] = path;
  j["format_version"] = h.version;
  j["world_rank"] = h.worldRank;
  j["world_size"] = h.worldSize;
  j["host"] = fixed(h.host, sizeof h.host);
  j["pid"] = h.pid;
  j["job_id"] = fixed(h.jobId, sizeof h.jobId);
  j["command"] = fixed(h.command, sizeof h.command);
  j["tracer_version"] = fixed(h.tracerVersion, sizeof h.tracerVersion);
  j["mpi_version"] = fixed(h.mpiVersion, sizeof h.mpiVersion);
  j["nccl_version"] = h.ncclVersion;
  j["thread_level"] =
      h.threadLevel == 0xffffffffu ? ordered_json(nullptr) : ordered_json(h.threadLevel);
  j["finished"] = h.finished != 0;
  j["slots_at_finish"] = h.slotsAtFinish;
  j["dropped_records"] = h.droppedRecords;
  j["created_realtime_ns"] = h.createdRealtimeNs;
  j["tsc_ticks_per_ns"] = h.tscTicksPerNs;
  j["slots"] = reader.slotCount();
  j["published"] = reader.summary().published;
  return j;
}

// One name per flag bit (format version 4; recordFlags() drops the older meanings of value
// records' bits).
ordered_json flagsJson(uint8_t flags) {
  static constexpr std::pair<uint8_t, const char *> kNames[] = {
      {format::kFlagNccl, "nccl"},
      {format::kFlagNonBlocking, "nonblocking"},
      {format::kFlagInPlace, "in_place"},
      {format::kFlagDerived, "derived"},
      {format::kFlagScalarUnknown, "scalar_unknown"},
      {format::kFlagIntercomm, "intercomm"},
      {format::kFlagPersistent, "persistent"},
      {format::kFlagDeviceBuffer, "device_buffer"},
  };
  ordered_json out = ordered_json::array();
  for (auto [bit, name] : kNames)
    if (flags & bit)
      out.push_back(name);
  return out;
}

std::string hexValue(uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(v));
  return buffer;
}

ordered_json recordJson(uint64_t slot, const format::Record &r, const format::FileHeader &h) {
  using format::Kind;
  auto kind = static_cast<Kind>(r.kind);
  ordered_json j;
  j["slot"] = slot;
  j["kind"] = format::kindName(kind);
  bool table = kind == Kind::CallSite || kind == Kind::Module || kind == Kind::ModuleText;
  if (!table)
    j["comm"] = hexCommId(r.commId);
  // A comm_members payload overlays the rank, time and window fields; the call-site table's
  // records use them for their own.
  if (kind != Kind::CommMembers && !table) {
    j["rank"] = r.commRank;
    j["t_ns"] = static_cast<int64_t>(format::nanosSinceCreate(h, r.tscStart));
    j["thread"] = r.thread();
    j["window"] = r.window;
  }
  switch (kind) {
  case Kind::CommCreate:
    j["size"] = r.count;
    j["parent"] = hexCommId(r.aux);
    j["origin"] = format::commOriginName(static_cast<format::CommOrigin>(r.op));
    j["color"] = r.peer;
    break;
  case Kind::CommMembers: {
    j["first"] = r.seq();
    ordered_json members = ordered_json::array();
    for (int i = 0; i < format::kMembersPerRecord; ++i)
      if (int32_t m = format::memberAt(r, i); m >= 0)
        members.push_back(m);
    j["members"] = members;
    break;
  }
  case Kind::CommRelease:
    j["how"] = format::commReleaseName(static_cast<format::CommReleaseHow>(r.op));
    break;
  case Kind::Normalization:
    j["normalization"] =
        format::lossNormalizationName(static_cast<format::LossNormalization>(r.op));
    j["multiplier"] = r.auxDouble();
    break;
  case Kind::ValidCount:
  case Kind::ReducerScale:
  case Kind::ValueCapture:
    j["value"] = r.auxDouble();
    j["count"] = r.count;
    j["dtype"] = format::dataTypeName(static_cast<format::DataType>(r.dataType));
    if (kind == Kind::ValueCapture) {
      format::CapturedValue value[2 * format::kPackedMaxElements];
      if (format::capturedValues(r, value) == 1)
        j["output"] = value[0].output;
    }
    break;
  case Kind::CapturedValues: {
    format::CapturedValue values[2 * format::kPackedMaxElements];
    int n = format::capturedValues(r, values);
    ordered_json inputs = ordered_json::array(), outputs = ordered_json::array();
    for (int k = 0; k < n; ++k)
      (values[k].output ? outputs : inputs).push_back(values[k].value);
    j["seq"] = r.seq();
    j["inputs"] = inputs;
    j["outputs"] = outputs;
    j["dtype"] = format::dataTypeName(static_cast<format::DataType>(r.dataType));
    break;
  }
  case Kind::CallSite:
    j["site"] = r.group;
    if (r.op == format::kSiteSourceLine) { // a line of a program's source (Python)
      j["line"] = r.count;
      j["module"] = r.peer;
      break;
    }
    j["address"] = hexValue(r.commId);
    j["offset"] = hexValue(r.count);
    j["module"] = r.peer;
    if (r.aux) { // the calling function's own return address (its frame pointer was followed)
      j["from_address"] = hexValue(r.aux);
      j["from_offset"] = hexValue(r.tscStart);
      j["from_module"] = static_cast<int64_t>(r.window) - 1;
    }
    break;
  case Kind::Module:
    j["module"] = r.commRank;
    if (r.op == format::kModuleSource) { // a source function: its name, then its file's path
      j["source"] = true;
      j["path_bytes"] = r.peer;
      j["function_bytes"] = r.window;
      break;
    }
    j["load_address"] = hexValue(r.commId);
    j["low"] = hexValue(r.tscStart);
    j["span"] = r.count;
    j["path_bytes"] = r.peer;
    j["build_id_bytes"] = r.window;
    break;
  case Kind::ModuleText:
    j["module"] = r.commRank;
    j["at"] = r.peer;
    j["bytes"] = r.window;
    break;
  default:
    if (format::isSequenced(kind)) {
      j["seq"] = r.seq();
      j["count"] = r.count;
      j["aux"] = r.aux;
      j["dtype"] = format::dataTypeName(static_cast<format::DataType>(r.dataType));
      // MPI's gather, scatter, allgather and alltoall keep the other side's count in op and aux.
      uint64_t otherSide = 0;
      if (format::carriesOtherSide(r))
        j["other_side"] =
            format::otherSideCount(r, otherSide) ? ordered_json(otherSide) : ordered_json(nullptr);
      else
        j["op"] = format::reduceOpName(static_cast<format::ReduceOp>(r.op));
      if (r.op == static_cast<uint8_t>(format::ReduceOp::PreMulSum) &&
          !(r.flags & format::kFlagScalarUnknown))
        j["scalar"] = r.auxDouble();
      if (format::holdsValues(r)) { // a count reduction's values in its own record
        format::CapturedValue values[2 * format::kPackedMaxElements];
        ordered_json inputs = ordered_json::array(), outputs = ordered_json::array();
        for (int k = 0, n = format::capturedValues(r, values); k < n; ++k)
          (values[k].output ? outputs : inputs).push_back(values[k].value);
        j["root"] = -1;
        j["inputs"] = inputs;
        j["outputs"] = outputs;
        j.erase("aux");
      } else {
        j[kind == Kind::Send || kind == Kind::Recv ? "peer" : "root"] = r.peer;
      }
    } else {
      j["count"] = r.count;
      j["aux"] = r.aux;
    }
  }
  // Version 3 calls carry their call site where older records (and meta records) carry the
  // NCCL group ordinal.
  if (h.version >= 3 && format::isCallKind(r.kind))
    j["site"] = format::callSite(r, h.version);
  else if (kind != Kind::CallSite)
    j["group"] = format::groupOrdinal(r, h.version);
  j["flags"] = flagsJson(format::recordFlags(r.kind, r.flags, h.version));
  // Without measured durations (kHeaderDurations) a returned call reads as 0 ns.
  // A captured_values record's duration holds its output (record.h), not a time.
  j["duration_ns"] = format::returned(r) && kind != Kind::CapturedValues
                         ? ordered_json(static_cast<int64_t>(format::durationNanos(h, r)))
                         : ordered_json(nullptr);
  j["failed"] = format::failed(r);
  return j;
}

int dumpFile(const std::string &path) {
  std::string error;
  auto reader = format::Reader::open(path, error);
  if (!reader) {
    std::fprintf(stderr, "collcheck dump: %s\n", error.c_str());
    return 2;
  }
  std::cout
      << headerJson(path, *reader).dump(-1, ' ', false, ordered_json::error_handler_t::replace)
      << '\n';
  uint64_t firstBad = UINT64_MAX, torn = 0, corrupt = 0, unknown = 0;
  std::string line;
  for (uint64_t i = 0; i < reader->slotCount(); ++i) {
    format::SlotState state = reader->state(i);
    if (state == format::SlotState::Empty)
      continue;
    if (state != format::SlotState::Published) {
      (state == format::SlotState::Torn ? torn : corrupt)++;
      firstBad = std::min(firstBad, i);
      continue;
    }
    if (!reader->usable(i)) {
      ++unknown;
      continue;
    }
    line = recordJson(i, reader->slot(i), reader->header())
               .dump(-1, ' ', false, ordered_json::error_handler_t::replace);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  std::fflush(stdout);
  const auto &s = reader->summary();
  if (torn || corrupt)
    std::fprintf(stderr,
                 "collcheck dump: warning: %s: slot %llu is %s; %llu torn and %llu corrupt "
                 "slot(s) skipped\n",
                 path.c_str(), static_cast<unsigned long long>(firstBad),
                 reader->state(firstBad) == format::SlotState::Torn
                     ? "torn (written but never published)"
                     : "corrupt (its check does not match)",
                 static_cast<unsigned long long>(torn), static_cast<unsigned long long>(corrupt));
  if (s.partialTail)
    std::fprintf(stderr,
                 "collcheck dump: warning: %s: the file ends inside slot %llu (truncated); that "
                 "partial record is skipped\n",
                 path.c_str(), static_cast<unsigned long long>(reader->slotCount()));
  if (unknown)
    std::fprintf(stderr,
                 "collcheck dump: warning: %s: %llu record(s) of a kind this version does not "
                 "know were skipped\n",
                 path.c_str(), static_cast<unsigned long long>(unknown));
  return 0;
}

} // namespace

int dumpMain(Args args) {
  if (args.empty()) {
    std::fprintf(stderr, "usage: collcheck dump FILE...\n");
    return 2;
  }
  if (std::string_view(args[0]) == "--help") {
    std::printf("usage: collcheck dump FILE...\n"
                "Prints each trace file's header as one JSON object, then every record as one\n"
                "JSON object a line. Exit 2 when a file is not a readable trace.\n");
    return 0;
  }
  std::ios::sync_with_stdio(true);
  int status = 0;
  for (const char *path : args)
    status = std::max(status, dumpFile(path));
  return status;
}

} // namespace collcheck::cli
