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
