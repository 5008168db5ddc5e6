#include "analyzer/checks/objective/windows.h"

#include "analyzer/checks/objective/numbers.h"

#include <cmath>
#include <map>

namespace collcheck::analyzer::objective {

namespace {

bool countLike(double value) {
  return std::isfinite(value) && value >= 0 && value == std::floor(value);
}

// A float count reduction carries whole non-negative numbers on every rank.
bool inputsLookLikeCounts(const CountEvidence &e) {
  if (e.inputs.empty())
    return false;
  for (const std::vector<double> &values : e.inputs) {
    if (values.empty())
      return false;
    for (double v : values)
      if (!countLike(v))
        return false;
  }
  return true;
}

// Some element carries each rank's declared count (the window's, or its last micro-batch's).
bool matchesDeclaredCounts(const CountEvidence &e) {
  size_t elements = e.inputs.front().size();
  for (size_t element = 0; element < elements; ++element) {
    bool all = true;
    for (size_t rank = 0; rank < e.inputs.size() && all; ++rank) {
      double v = element < e.inputs[rank].size() ? e.inputs[rank][element] : NAN;
      all =
          sameCount(v, e.declaredCounts[rank].first) || sameCount(v, e.declaredCounts[rank].second);
    }
    if (all)
      return true;
  }
  return false;
}

CountEvidence evidenceOf(const Reduction &r, const Communicator &comm, uint32_t window,
                         const Ledger &ledger, bool useDeclarations) {
  CountEvidence e;
  bool declared = useDeclarations;
  for (size_t rank = 0; rank < comm.fileOf.size(); ++rank) {
    if (!r.issuedBy(rank))
      continue;
    std::vector<double> inputs;
    if (rank < r.values.size())
      for (size_t element = 0; element < r.values[rank].input.size(); ++element)
        inputs.push_back(r.values[rank].hasInput(element) ? r.values[rank].input[element] : NAN);
    e.inputs.push_back(std::move(inputs));
    const Declarations *d = ledger.declarations(window, comm.fileOf[rank]);
    if (d && d->countRecords > 0)
      e.declaredCounts.emplace_back(d->validCount, d->lastCount);
    else
      declared = false;
  }
  if (!declared)
    e.declaredCounts.clear();
  return e;
}

// Without the inputs of every issuing rank the inputs do not look like counts (classify).
bool everyIssuerCaptured(const Reduction &r, const Communicator &comm) {
  for (size_t rank = 0; rank < comm.fileOf.size(); ++rank)
    if (r.issuedBy(rank) && (rank >= r.values.size() || r.values[rank].input.empty()))
      return false;
  return true;
}

} // namespace

ReductionRole classify(const format::Record &call, const CountEvidence &e) {
  auto type = static_cast<format::DataType>(call.dataType);
  if (hasCountShape(call) && isIntegerType(type))
    return ReductionRole::Count;
  if (!isWeightedReduction(call) || !isFloatType(type))
    return ReductionRole::Other;
  if (hasCountShape(call) && inputsLookLikeCounts(e) && e.followedByGradient) {
    // A float count comes before the gradient it normalizes and, where the ranks declared their
    // counts, carries them: a small gradient of whole numbers is neither.
    if (e.declaredCounts.size() == e.inputs.size())
      return matchesDeclaredCounts(e) ? ReductionRole::Count : ReductionRole::Gradient;
    return ReductionRole::Count;
  }
  return ReductionRole::Gradient;
}

std::vector<WindowReductions> groupByWindow(const Ledger &ledger, const JobView &job) {
  const bool annotatedWindows = ledger.hasWindowAnnotations();
  const std::deque<Reduction> &all = ledger.reductions();

  // A float count reduction without declarations is recognized by what follows it.
  std::vector<bool> followedByGradient(all.size(), false);
  {
    std::map<std::pair<uint64_t, uint32_t>, bool> gradientAfter; // (comm, window) seen from the end
    for (size_t i = all.size(); i-- > 0;) {
      const Reduction &r = all[i];
      uint32_t window = annotatedWindows ? r.window : 0;
      bool &after = gradientAfter[{r.commId, window}];
      followedByGradient[i] = after;
      if (isWeightedReduction(r.reference) &&
          isFloatType(static_cast<format::DataType>(r.reference.dataType)))
        after = true;
    }
  }

  std::vector<WindowReductions> windows;
  std::map<std::pair<uint64_t, uint32_t>, size_t> index;
  std::map<uint64_t, uint32_t> inferredWindow; // per comm: the current inferred window
  std::map<uint64_t, bool> gradientInWindow;   // per comm: a gradient since the last count
  for (size_t i = 0; i < all.size(); ++i) {
    const Reduction &r = all[i];
    const Communicator *comm = job.communicator(r.commId);
    if (!comm || comm->size <= 0)
      continue;
    // The evidence (per rank: captured inputs, declared counts) decides only for a float sum of
    // count shape followed by a gradient, and only if every rank that issued it captured its
    // inputs; gathering it for every reduction costs the communicator's size each.
    CountEvidence e;
    if (followedByGradient[i] && hasCountShape(r.reference) && everyIssuerCaptured(r, *comm))
      e = evidenceOf(r, *comm, r.window, ledger, annotatedWindows);
    e.followedByGradient = followedByGradient[i];
    ReductionRole role = classify(r.reference, e);
    if (role == ReductionRole::Other)
      continue;
    uint32_t window = r.window;
    if (!annotatedWindows) {
      uint32_t &current = inferredWindow[r.commId];
      bool &sawGradient = gradientInWindow[r.commId];
      if (role == ReductionRole::Count && sawGradient) {
        ++current;
        sawGradient = false;
      }
      sawGradient = sawGradient || role == ReductionRole::Gradient;
      window = current;
    }
    auto [slot, inserted] = index.try_emplace({r.commId, window}, windows.size());
    if (inserted) {
      WindowReductions w;
      w.comm = comm;
      w.window = window;
      w.inferred = !annotatedWindows;
      windows.push_back(std::move(w));
    }
    WindowReductions &w = windows[slot->second];
    (role == ReductionRole::Count ? w.counts : w.gradients).push_back(&r);
  }
  return windows;
}

} // namespace collcheck::analyzer::objective
