#include "sync.h"

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
