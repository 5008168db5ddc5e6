#include "sync.h"

float MaskedMean::of(const float *loss, const bool *valid, int n) const {
  MaskedLoss masked;
  return masked.compute(loss, valid, n);
}

float MaskedLoss::compute(const float *loss, const bool *valid, int n) const {
  float sum = 0;
  int count = 0;
  for (int i = 0; i < n; ++i)
    if (valid[i]) {
      sum += loss[i];
      ++count;
    }
  return sum / count;
}

// The (weighted) mean of this rank's labels.
double SquaredError::start_score() const {
  double sum = 0, total = 0;
  if (weights_ != nullptr) {
    for (int i = 0; i < num_items_; ++i) {
      sum += labels_[i] * weights_[i];
      total += weights_[i];
    }
  } else {
    total = static_cast<double>(num_items_);
    for (int i = 0; i < num_items_; ++i)
      sum += labels_[i];
  }
  return sum / total;
}

// The median of this rank's labels (sorted by the caller).
double AbsoluteError::start_score() const { return num_items_ > 0 ? labels_[num_items_ / 2] : 0; }
