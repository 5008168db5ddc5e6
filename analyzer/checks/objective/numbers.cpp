#include "analyzer/checks/objective/numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace collcheck::analyzer::objective {

std::string formatValue(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string formatWeight(double weight) {
  if (std::isfinite(weight) && weight > 0 && weight < 1) {
    double reciprocal = 1.0 / weight;
    double whole = std::round(reciprocal);
    if (whole <= 1e9 && std::fabs(reciprocal - whole) <= 1e-6 * whole) {
      char text[32];
      std::snprintf(text, sizeof text, "1/%.0f", whole);
      return text;
    }
  }
  return formatValue(weight);
}

bool sameCount(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

} // namespace collcheck::analyzer::objective
