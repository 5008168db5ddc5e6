// The weighing of one gradient reduction: for every rank r, its valid count nᵣ, the per-item factor
// of its loss normalization aᵣ, the factor its reducer applies bᵣ, and the effective per-item
// weight wᵣ = aᵣ·bᵣ, to be compared with 1/N, N = Σr nᵣ. The algebra is written once, in
// rules/pages/uncompensated-mean.md; this computes it from what the traces say and nothing else.
#pragma once

#include "analyzer/checks/objective/windows.h"

#include <limits>
#include <string>
#include <vector>

namespace collcheck::analyzer::objective {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
// Two weights are the same when they agree to this relative precision (float32 gradients and
// float scalars such as 1/3 are exact to about 1e-7).
inline constexpr double kWeightTolerance = 1e-5;
bool sameWeight(double a, double b);

enum class CountSource : uint8_t { None, Annotations, CountReduction };

// One rank's term of a gradient reduction.
struct RankTerm {
  int32_t commRank = -1, worldRank = -1;
  bool issued = true;
  Presence presence = Presence::Matched;
  const Declarations *declared = nullptr; // what its process declared in the window, or null
  double count = kUnknown;                // nᵣ
  bool normalizationKnown = false;
  format::LossNormalization normalization = format::LossNormalization::Unknown;
  double normalizationFactor = kUnknown; // aᵣ
  bool reducerKnown = false;
  double reducerFactor = kUnknown; // bᵣ, the declared reducer scale included
  double weight() const { return normalizationFactor * reducerFactor; }
  bool hasItems() const { return count > 0; }
};

// A count reduction that carries only the last micro-batch's counts (partial-window).
struct PartialCount {
  const Reduction *countReduction = nullptr;
  size_t element = 0;
};

enum class Outcome : uint8_t {
  Correct,               // every rank with items weighs them 1/N
  UnequalWeights,        // proven: some rank's weight differs from 1/N
  DoubleNormalization,   // divided by N, then averaged over P ranks again
  MeanOverUnequalCounts, // a mean reducer over unequal counts, normalization not declared
  Unverified,            // something the algebra needs is unknown (`unverifiedReason`)
  NotApplicable,         // no item anywhere (N = 0): judged by the zero-count rules
};

struct GradientCheck {
  const Reduction *reduction = nullptr;
  const WindowReductions *window = nullptr;
  const Communicator *comm = nullptr;
  int32_t ranks = 0;           // P
  std::vector<RankTerm> terms; // per comm rank
  CountSource countSource = CountSource::None;
  double globalCount = kUnknown;             // N
  const Reduction *countReduction = nullptr; // the window's count reduction before this one
  size_t countElement = 0;
  double reducedCount = kUnknown; // N as that count reduction computed it
  PartialCount partial;           // set when the count covers only the last micro-batch
  bool resultsCaptured = false;   // output values of this reduction were captured
  bool nonFiniteResult = false;   // ... and some are NaN or infinite
  Outcome outcome = Outcome::Unverified;
  std::string unverifiedReason;

  bool countsEqual() const;
  // "sum", "avg (÷P)", "PreMulSum (per-rank scalars)", with the declared reducer scale.
  std::string describeReducer() const;
};

// A count reduction and what the members declared in its window.
struct CountCheck {
  const Reduction *reduction = nullptr;
  const WindowReductions *window = nullptr;
  const Communicator *comm = nullptr;
  std::vector<const Declarations *> declared; // per comm rank (null: nothing declared)
  std::vector<const Declarations *> previous; // per comm rank: the window before
};

// Receives each check as it is weighed, window by window (a window's count reductions, then its
// gradient reductions). A check holds a term per rank: it lives only for its visit, so memory grows
// with the ranks, not with ranks x reductions.
class WeighingVisitor {
public:
  virtual ~WeighingVisitor() = default;
  virtual void count(const CountCheck &check) = 0;
  virtual void gradient(const GradientCheck &check) = 0;
};

void weigh(const std::vector<WindowReductions> &windows, const Ledger &ledger,
           WeighingVisitor &visitor);

} // namespace collcheck::analyzer::objective
