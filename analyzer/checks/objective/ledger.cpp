#include "analyzer/checks/objective/ledger.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace collcheck::analyzer::objective {

using format::DataType;
using format::Kind;
using format::ReduceOp;

namespace {

// Captured elements kept per rank: a count reduction has at most four, and the checks only look
// for non-finite results beyond that (the reference comparison reads the files itself).
constexpr size_t kKeptElements = 4;
constexpr double kNotCaptured = std::numeric_limits<double>::quiet_NaN();

bool sameScalars(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))))
      return false;
  return true;
}

double scalarOf(const format::Record &call) {
  return (call.flags & format::kFlagScalarUnknown) ? kNotCaptured : call.auxDouble();
}

} // namespace

bool isFloatType(DataType type) {
  switch (type) {
  case DataType::Float16:
  case DataType::BFloat16:
  case DataType::Float32:
  case DataType::Float64:
  case DataType::LongDouble:
  case DataType::Float8E4M3:
  case DataType::Float8E5M2:
    return true;
  default:
    return false;
  }
}

bool isIntegerType(DataType type) {
  switch (type) {
  case DataType::Int8:
  case DataType::Uint8:
  case DataType::Int16:
  case DataType::Uint16:
  case DataType::Int32:
  case DataType::Uint32:
  case DataType::Int64:
  case DataType::Uint64:
    return true;
  default:
    return false;
  }
}

bool isWeightedReduction(const format::Record &call) {
  auto kind = static_cast<Kind>(call.kind);
  if (kind != Kind::AllReduce && kind != Kind::Reduce && kind != Kind::ReduceScatter &&
      kind != Kind::ReduceScatterBlock)
    return false;
  auto op = static_cast<ReduceOp>(call.op);
  return op == ReduceOp::Sum || op == ReduceOp::Avg || op == ReduceOp::PreMulSum;
}

bool averagesOverRanks(const format::Record &call) {
  auto op = static_cast<ReduceOp>(call.op);
  return op == ReduceOp::Avg || op == ReduceOp::PreMulSum;
}

bool hasCountShape(const format::Record &call) {
  return static_cast<Kind>(call.kind) == Kind::AllReduce &&
         static_cast<ReduceOp>(call.op) == ReduceOp::Sum && call.count >= 1 && call.count <= 4;
}

bool Reduction::everyoneIssued() const {
  return std::all_of(presence.begin(), presence.end(), [](Presence p) { return issued(p); });
}

Declarations &Ledger::slot(uint32_t window, int file, size_t files) {
  std::vector<Declarations> &perFile = windows_[window];
  if (perFile.size() < files)
    perFile.resize(files);
  if (static_cast<size_t>(file) >= perFile.size())
    perFile.resize(static_cast<size_t>(file) + 1);
  return perFile[static_cast<size_t>(file)];
}

const Declarations *Ledger::declarations(uint32_t window, int file) const {
  auto it = windows_.find(window);
  if (it == windows_.end() || file < 0 || static_cast<size_t>(file) >= it->second.size())
    return nullptr;
  return &it->second[static_cast<size_t>(file)];
}

void Ledger::meta(int file, const format::Record &r, size_t files) {
  if (file < 0)
    return;
  switch (static_cast<Kind>(r.kind)) {
  case Kind::WindowBegin: {
    // The record carries the window it opens; count and window agree unless it was truncated.
    slot(static_cast<uint32_t>(r.count), file, files).began = true;
    ++windowBegins_;
    ++annotations_;
    return;
  }
  case Kind::ValidCount: {
    Declarations &d = slot(r.window, file, files);
    d.validCount += r.auxDouble();
    d.lastCount = r.auxDouble();
    ++d.countRecords;
    ++annotations_;
    return;
  }
  case Kind::Normalization: {
    Declarations &d = slot(r.window, file, files);
    auto how = r.op < static_cast<uint8_t>(format::LossNormalization::Count)
                   ? static_cast<format::LossNormalization>(r.op)
                   : format::LossNormalization::Unknown;
    if (d.hasNormalization && (d.normalization != how || d.multiplier != r.auxDouble()))
      d.normalizationChanged = true;
    d.hasNormalization = true;
    d.normalization = how;
    d.multiplier = r.auxDouble();
    ++annotations_;
    return;
  }
  case Kind::ReducerScale: {
    Declarations &d = slot(r.window, file, files);
    if (d.hasReducerScale && d.reducerScale != r.auxDouble())
      d.reducerScaleChanged = true;
    d.hasReducerScale = true;
    d.reducerScale = r.auxDouble();
    ++annotations_;
    return;
  }
  case Kind::ValueCapture:
  case Kind::CapturedValues:
  case Kind::AllReduce: { // one that holds its values (format::holdsValues)
    if (r.commRank < 0 || r.commRank >= format::kMaxWorldSize)
      return;
    format::CapturedValue values[2 * format::kPackedMaxElements];
    int n = format::capturedValues(r, values);
    for (int k = 0; k < n; ++k) {
      const format::CapturedValue &c = values[k];
      if (c.index >= kKeptElements)
        continue;
      std::vector<CapturedValues> &perRank = captures_[{r.commId, r.seq()}];
      if (perRank.size() <= static_cast<size_t>(r.commRank))
        perRank.resize(static_cast<size_t>(r.commRank) + 1);
      CapturedValues &v = perRank[static_cast<size_t>(r.commRank)];
      std::vector<double> &into = c.output ? v.output : v.input;
      size_t elements = std::min<size_t>(kKeptElements, c.elements);
      if (into.size() < elements)
        into.resize(elements, kNotCaptured);
      if (c.index < into.size()) {
        into[c.index] = c.value;
        (c.output ? v.outputCaptured : v.inputCaptured) |= static_cast<uint8_t>(1u << c.index);
      }
    }
    return;
  }
  default:
    return;
  }
}

void Ledger::add(Reduction reduction) {
  auto it = lastOnComm_.find(reduction.commId);
  if (it != lastOnComm_.end()) {
    Reduction &last = reductions_[it->second];
    // Runs of identical reductions (gradient buckets) weigh the same way: keep one.
    if (last.window == reduction.window && last.reference.kind == reduction.reference.kind &&
        last.reference.op == reduction.reference.op &&
        last.reference.dataType == reduction.reference.dataType &&
        !hasCountShape(reduction.reference) && !hasCountShape(last.reference) &&
        last.presence.empty() && reduction.presence.empty() &&
        sameScalars(last.scalars, reduction.scalars)) {
      ++last.repeats;
      last.lastSeq = reduction.reference.seq();
      return;
    }
  }
  lastOnComm_[reduction.commId] = reductions_.size();
  reductions_.push_back(std::move(reduction));
}

void Ledger::collective(const CollectiveEvent &e) {
  const format::Record &call = e.reference;
  // A persistent collective's initialization reduces nothing yet: its starts do, unrecorded.
  if ((call.flags & format::kFlagPersistent) ||
      (!isWeightedReduction(call) && !hasCountShape(call)))
    return;
  Reduction r;
  r.commId = e.comm.id;
  r.reference = call;
  r.window = call.window;
  r.lastSeq = call.seq();
  if (!e.allMatched)
    r.presence.assign(e.presence.begin(), e.presence.end());
  if (static_cast<ReduceOp>(call.op) == ReduceOp::PreMulSum) {
    r.scalars.assign(e.presence.size(), scalarOf(call));
    for (size_t rank = 0; rank < e.records.size() && rank < r.scalars.size(); ++rank)
      if (const format::Record *own = e.records[rank])
        r.scalars[rank] = scalarOf(*own);
  }
  add(std::move(r));
}

void Ledger::extra(const ExtraEvent &e) {
  if (!isWeightedReduction(e.call) && !hasCountShape(e.call))
    return;
  Reduction r;
  r.commId = e.comm.id;
  r.reference = e.call;
  r.window = e.call.window;
  r.lastSeq = e.call.seq();
  size_t members = e.comm.size > 0 ? static_cast<size_t>(e.comm.size) : 0;
  r.presence.assign(members, Presence::NoTrace);
  for (int32_t rank : e.issuedBy)
    if (rank >= 0 && static_cast<size_t>(rank) < members)
      r.presence[static_cast<size_t>(rank)] = Presence::Matched;
  for (int32_t rank : e.notIssuedBy)
    if (rank >= 0 && static_cast<size_t>(rank) < members)
      r.presence[static_cast<size_t>(rank)] = Presence::Skipped;
  if (static_cast<ReduceOp>(e.call.op) == ReduceOp::PreMulSum)
    r.scalars.assign(members, scalarOf(e.call));
  add(std::move(r));
}

void Ledger::finish() {
  for (Reduction &r : reductions_) {
    auto it = captures_.find({r.commId, r.firstSeq()});
    if (it != captures_.end())
      r.values = std::move(it->second);
  }
  captures_.clear();
}

} // namespace collcheck::analyzer::objective
