// What the objective checks need from a job, gathered while the traces stream past: per window and
// process what the annotations declared (valid counts, normalization, reducer scale); per reduction
// its signature, who issued it and the values the tracer captured. It is judged when the job ends,
// because a window is complete only then (a count may be declared after the reduction it weighs).
// Memory: one small entry per window and process, one per distinct reduction of a window (runs of
// identical reductions on a communicator, such as gradient buckets, are kept as one).
#pragma once

#include "analyzer/checks/rule.h"

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace collcheck::analyzer::objective {

// What one process declared in one window.
struct Declarations {
  bool began = false;        // a window_begin record
  uint32_t countRecords = 0; // valid_count records (one per micro-batch)
  double validCount = 0;     // their sum: the window's count
  double lastCount = 0;      // the last micro-batch's count
  bool hasNormalization = false;
  format::LossNormalization normalization = format::LossNormalization::Unknown;
  double multiplier = 0;
  bool normalizationChanged = false; // declared twice with different values (the last one holds)
  bool hasReducerScale = false;
  double reducerScale = 1;
  bool reducerScaleChanged = false;
};

// Values the tracer captured for one rank of one reduction, by element; an element is captured
// when its bit is set (a captured value may itself be NaN: a local mean over no item).
struct CapturedValues {
  std::vector<double> input, output;
  uint8_t inputCaptured = 0, outputCaptured = 0; // bit e: element e
  bool hasInput(size_t e) const { return e < 8 && (inputCaptured >> e & 1); }
  bool hasOutput(size_t e) const { return e < 8 && (outputCaptured >> e & 1); }
};

// One reduction position of a communicator (or a run of identical ones).
struct Reduction {
  uint64_t commId = 0;
  format::Record reference{}; // the call of the largest agreeing group
  uint32_t window = 0;
  uint64_t lastSeq = 0; // the last position of the run
  uint64_t repeats = 1;
  std::vector<Presence> presence; // per comm rank; empty: every member issued it
  std::vector<double> scalars;    // PreMulSum: per comm rank (NaN: kept on the device); else empty
  std::vector<CapturedValues> values; // per comm rank, attached by Ledger::finish()

  uint64_t firstSeq() const { return reference.seq(); }
  bool issuedBy(size_t commRank) const {
    return presence.empty() || (commRank < presence.size() && issued(presence[commRank]));
  }
  bool everyoneIssued() const;
};

class Ledger {
public:
  void meta(int file, const format::Record &record, size_t files);
  void collective(const CollectiveEvent &event);
  void extra(const ExtraEvent &event);
  // Attaches the captured values to their reductions; once, after the last record.
  void finish();

  // What `file` declared in `window`, or null when it declared nothing there.
  const Declarations *declarations(uint32_t window, int file) const;
  bool hasWindowAnnotations() const { return windowBegins_ > 0; }
  bool hasAnnotations() const { return annotations_ > 0; }
  const std::deque<Reduction> &reductions() const { return reductions_; }

private:
  Declarations &slot(uint32_t window, int file, size_t files);
  void add(Reduction reduction);

  std::map<uint32_t, std::vector<Declarations>> windows_; // per window, per trace file
  // A deque: one reduction per communicator and window in a job of many communicators is millions
  // of them, and a vector's growth would move each and touch twice the memory they need.
  std::deque<Reduction> reductions_;
  std::unordered_map<uint64_t, size_t> lastOnComm_; // index of the newest reduction per comm
  // (comm id, seq) -> per comm rank: captured values wait here for their reduction.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<CapturedValues>> captures_;
  uint64_t windowBegins_ = 0, annotations_ = 0;
};

// The reductions whose weighting the objective checks judge: reduce, all-reduce and
// reduce-scatter with a sum, an average or a PreMulSum.
bool isWeightedReduction(const format::Record &call);
// A mean reducer: avg or PreMulSum, which average per-rank values on the wire.
bool averagesOverRanks(const format::Record &call);
bool isFloatType(format::DataType type);
bool isIntegerType(format::DataType type);
// A SUM all-reduce of at most four elements: the shape of a count reduction.
bool hasCountShape(const format::Record &call);

} // namespace collcheck::analyzer::objective
