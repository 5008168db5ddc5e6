#include "analyzer/checks/objective/weighing.h"

#include "analyzer/checks/objective/numbers.h"

#include <algorithm>
#include <cmath>

namespace collcheck::analyzer::objective {

using format::LossNormalization;
using format::ReduceOp;

bool sameWeight(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b))
    return a == b;
  return std::fabs(a - b) <= kWeightTolerance * std::max(std::fabs(a), std::fabs(b));
}

namespace {

double inputOf(const Reduction &r, size_t rank, size_t element) {
  if (rank >= r.values.size() || !r.values[rank].hasInput(element))
    return kUnknown;
  return r.values[rank].input[element];
}

double outputOf(const Reduction &r, size_t element) {
  for (const CapturedValues &v : r.values)
    if (v.hasOutput(element))
      return v.output[element];
  return kUnknown;
}

// The element of a count reduction whose inputs are the members' `declared` counts (the window's
// or, with `last`, the last micro-batch's); -1 when none.
int elementCarrying(const Reduction &count, const std::vector<const Declarations *> &declared,
                    bool last) {
  for (size_t element = 0; element < 4; ++element) {
    bool all = true, any = false;
    for (size_t rank = 0; rank < declared.size() && all; ++rank) {
      if (!count.issuedBy(rank))
        continue;
      const Declarations *d = declared[rank];
      double in = inputOf(count, rank, element);
      all = d && d->countRecords > 0 && !std::isnan(in) &&
            sameCount(in, last ? d->lastCount : d->validCount);
      any = true;
    }
    if (all && any)
      return static_cast<int>(element);
  }
  return -1;
}

// Whether some rank's window spans micro-batches with counts of their own, so that a count of the
// last one alone differs from the window's.
bool accumulates(const std::vector<const Declarations *> &declared) {
  for (const Declarations *d : declared)
    if (d && d->countRecords > 1 && !sameCount(d->lastCount, d->validCount))
      return true;
  return false;
}

// A summed has-data flag (count-on-active-ranks) rather than a count of items: every input 0 or 1.
bool flagLike(const Reduction &r) {
  bool any = false;
  for (const CapturedValues &v : r.values)
    for (size_t element = 0; element < v.input.size(); ++element) {
      if (!v.hasInput(element))
        continue;
      if (v.input[element] != 0 && v.input[element] != 1)
        return false;
      any = true;
    }
  return any;
}

double reducerOpFactor(const Reduction &r, size_t rank, int32_t ranks) {
  switch (static_cast<ReduceOp>(r.reference.op)) {
  case ReduceOp::Sum:
    return 1;
  case ReduceOp::Avg:
    return 1.0 / ranks;
  case ReduceOp::PreMulSum:
    return rank < r.scalars.size() ? r.scalars[rank] : kUnknown;
  default:
    return kUnknown;
  }
}

void fillCounts(GradientCheck &c, const WindowReductions &w,
                const std::vector<const Declarations *> &declared) {
  bool annotated = !w.inferred;
  for (size_t rank = 0; rank < declared.size(); ++rank)
    annotated = annotated && declared[rank] && declared[rank]->countRecords > 0;
  // The count reduction this gradient uses, among the window's before it: the last one that
  // carries the declared counts of the window, else the last that carries its last micro-batch's
  // (partial-window), else the last one. Other small integer sums may come between (a metric, a
  // has-data flag): without declared counts, the last one that is not a flag.
  const Reduction *last = nullptr, *whole = nullptr, *lastBatch = nullptr, *counting = nullptr;
  int wholeElement = -1, lastBatchElement = -1;
  for (const Reduction *count : w.counts) {
    if (count->firstSeq() >= c.reduction->firstSeq())
      continue;
    last = count;
    if (annotated) {
      if (int e = elementCarrying(*count, declared, false); e >= 0) {
        whole = count;
        wholeElement = e;
      } else if (e = elementCarrying(*count, declared, true); e >= 0) {
        lastBatch = count;
        lastBatchElement = e;
      }
    } else if (!flagLike(*count)) {
      counting = count;
    }
  }
  int element = -1;
  if (whole) {
    c.countReduction = whole;
    element = wholeElement;
  } else if (lastBatch && accumulates(declared)) {
    c.countReduction = lastBatch;
    element = lastBatchElement;
    c.partial = {lastBatch, static_cast<size_t>(lastBatchElement)};
  } else {
    c.countReduction = counting ? counting : last;
  }
  if (c.countReduction) {
    c.countElement = element < 0 ? 0 : static_cast<size_t>(element);
    c.reducedCount = outputOf(*c.countReduction, c.countElement);
  }
  if (annotated) {
    c.countSource = CountSource::Annotations;
    for (size_t rank = 0; rank < declared.size(); ++rank)
      c.terms[rank].count = declared[rank]->validCount;
  } else if (c.countReduction) {
    bool all = true;
    for (size_t rank = 0; rank < c.terms.size() && all; ++rank) {
      c.terms[rank].count = inputOf(*c.countReduction, rank, c.countElement);
      all = !std::isnan(c.terms[rank].count);
    }
    if (all)
      c.countSource = CountSource::CountReduction;
  }
  if (c.countSource == CountSource::None)
    return;
  double sum = 0;
  for (const RankTerm &t : c.terms)
    sum += t.count;
  c.globalCount = c.countSource == CountSource::CountReduction && !std::isnan(c.reducedCount)
                      ? c.reducedCount
                      : sum;
}

void fillFactors(GradientCheck &c) {
  // A globally normalized loss was divided by the count the job reduced, right or wrong.
  double dividedBy = !std::isnan(c.reducedCount) ? c.reducedCount : c.globalCount;
  for (size_t rank = 0; rank < c.terms.size(); ++rank) {
    RankTerm &t = c.terms[rank];
    if (const Declarations *d = t.declared; d && d->hasNormalization) {
      t.normalization = d->normalization;
      switch (d->normalization) {
      case LossNormalization::LocalMean:
        t.normalizationKnown = !std::isnan(t.count);
        t.normalizationFactor = 1.0 / t.count;
        break;
      case LossNormalization::GlobalMean:
        t.normalizationKnown = !std::isnan(dividedBy);
        t.normalizationFactor = 1.0 / dividedBy;
        break;
      case LossNormalization::Sum:
        t.normalizationKnown = true;
        t.normalizationFactor = 1;
        break;
      case LossNormalization::Multiplier:
        t.normalizationKnown = true;
        t.normalizationFactor = d->multiplier;
        break;
      default:
        break;
      }
    }
    t.reducerFactor = reducerOpFactor(*c.reduction, rank, c.ranks);
    if (t.declared && t.declared->hasReducerScale)
      t.reducerFactor *= t.declared->reducerScale;
    t.reducerKnown = !std::isnan(t.reducerFactor);
  }
}

Outcome decide(GradientCheck &c) {
  if (c.countSource == CountSource::None) {
    // Declared by some ranks only (a rank that declared nothing here, or whose trace is missing):
    // say which, rather than that nobody declared.
    std::vector<int32_t> declaring, silent;
    for (const RankTerm &t : c.terms)
      (t.declared && t.declared->countRecords > 0 ? declaring : silent)
          .push_back(t.worldRank >= 0 ? t.worldRank : t.commRank);
    if (!declaring.empty() && !silent.empty() && !c.window->inferred)
      c.unverifiedReason = "no valid counts for every rank: " + describeRanks(declaring) +
                           " declared theirs (collcheck_annotate_valid_count), " +
                           describeRanks(silent) +
                           " did not in this window or left no trace, and no count all-reduce "
                           "before it carries them";
    else
      c.unverifiedReason = "no valid counts: neither declared (collcheck_annotate_valid_count) "
                           "nor carried by a count all-reduce before it";
    return Outcome::Unverified;
  }
  if (!(c.globalCount > 0))
    return Outcome::NotApplicable;
  const double intended = 1.0 / c.globalCount;
  bool normalizationsKnown = true, allIntended = true, allDouble = true, allGlobal = true;
  bool uniformReducer = true, compensatingReducer = true;
  const RankTerm *first = nullptr;
  for (const RankTerm &t : c.terms) {
    if (!t.issued || !t.hasItems())
      continue;
    if (!t.reducerKnown) {
      c.unverifiedReason = "the PreMulSum scalar of rank " + std::to_string(t.worldRank) +
                           " was kept in device memory, where the tracer does not read it";
      return Outcome::Unverified;
    }
    if (!first)
      first = &t;
    uniformReducer = uniformReducer && sameWeight(t.reducerFactor, first->reducerFactor);
    compensatingReducer = compensatingReducer && sameWeight(t.reducerFactor, t.count * intended);
    if (!t.normalizationKnown) {
      normalizationsKnown = false;
      continue;
    }
    allIntended = allIntended && sameWeight(t.weight(), intended);
    allDouble = allDouble && sameWeight(t.weight(), intended / c.ranks);
    allGlobal = allGlobal && t.normalization == LossNormalization::GlobalMean;
  }
  if (!first)
    return Outcome::NotApplicable;
  if (!normalizationsKnown) {
    if (compensatingReducer) // scalars nᵣ/N: the compensation of a local mean
      return Outcome::Correct;
    if (uniformReducer && sameWeight(first->reducerFactor, 1.0 / c.ranks) && !c.countsEqual())
      return Outcome::MeanOverUnequalCounts;
    c.unverifiedReason =
        "the loss normalization is not declared (collcheck_annotate_normalization)";
    return Outcome::Unverified;
  }
  if (allIntended)
    return Outcome::Correct;
  if (allGlobal && allDouble && c.ranks > 1)
    return Outcome::DoubleNormalization;
  return Outcome::UnequalWeights;
}

} // namespace

bool GradientCheck::countsEqual() const {
  const RankTerm *first = nullptr;
  for (const RankTerm &t : terms) {
    if (!t.issued)
      continue;
    if (first && !sameCount(t.count, first->count))
      return false;
    first = first ? first : &t;
  }
  return true;
}

std::string GradientCheck::describeReducer() const {
  std::string out;
  switch (static_cast<ReduceOp>(reduction->reference.op)) {
  case ReduceOp::Sum:
    out = "sum";
    break;
  case ReduceOp::Avg:
    out = "avg (sum, then /" + std::to_string(ranks) + ")";
    break;
  case ReduceOp::PreMulSum: {
    bool uniform = true;
    for (const RankTerm &t : terms)
      uniform = uniform && sameWeight(t.reducerFactor, terms.front().reducerFactor);
    out =
        uniform && !terms.empty() && terms.front().reducerKnown
            ? "PreMulSum (scalar " +
                  formatWeight(reduction->scalars.empty() ? kUnknown : reduction->scalars.front()) +
                  ")"
            : "PreMulSum (per-rank scalars)";
    break;
  }
  default:
    out = "?";
  }
  const Declarations *d = terms.empty() ? nullptr : terms.front().declared;
  if (d && d->hasReducerScale)
    out += ", then x" + formatWeight(d->reducerScale) + " (declared reducer scale)";
  return out;
}

void weigh(const std::vector<WindowReductions> &windows, const Ledger &ledger,
           WeighingVisitor &visitor) {
  for (const WindowReductions &w : windows) {
    const Communicator &comm = *w.comm;
    const size_t members = static_cast<size_t>(comm.size);
    // Without window annotations every declaration is in window 0: the normalization and reducer
    // scale hold for the job, the counts (summed over all updates) are not used.
    std::vector<const Declarations *> declared(members, nullptr), previous(members, nullptr);
    for (size_t rank = 0; rank < members; ++rank) {
      int file = rank < comm.fileOf.size() ? comm.fileOf[rank] : -1;
      declared[rank] = ledger.declarations(w.inferred ? 0 : w.window, file);
      if (!w.inferred && w.window > 0)
        previous[rank] = ledger.declarations(w.window - 1, file);
    }
    for (const Reduction *count : w.counts)
      visitor.count({count, &w, &comm, declared, previous});
    for (const Reduction *gradient : w.gradients) {
      GradientCheck c;
      c.reduction = gradient;
      c.window = &w;
      c.comm = &comm;
      c.ranks = comm.size;
      c.terms.resize(members);
      for (size_t rank = 0; rank < members; ++rank) {
        RankTerm &t = c.terms[rank];
        t.commRank = static_cast<int32_t>(rank);
        t.worldRank = comm.nameOf(t.commRank);
        t.issued = gradient->issuedBy(rank);
        t.presence =
            rank < gradient->presence.size() ? gradient->presence[rank] : Presence::Matched;
        t.declared = declared[rank];
      }
      fillCounts(c, w, declared);
      fillFactors(c);
      for (const CapturedValues &v : gradient->values)
        for (size_t e = 0; e < v.output.size(); ++e)
          if (v.hasOutput(e)) {
            c.resultsCaptured = true;
            c.nonFiniteResult = c.nonFiniteResult || !std::isfinite(v.output[e]);
          }
      c.outcome = decide(c);
      visitor.gradient(c);
    }
  }
}

} // namespace collcheck::analyzer::objective
