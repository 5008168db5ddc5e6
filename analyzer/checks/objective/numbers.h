// Numbers as a person checks them against the algebra: weights as reciprocals ("1/12"), counts
// as whole numbers, factors in short decimal ("0.5").
#pragma once

#include <string>

namespace collcheck::analyzer::objective {

// "8", "2.5", "nan", "inf".
std::string formatValue(double value);
// "1/12" when the weight is the reciprocal of a whole number, else formatValue.
std::string formatWeight(double weight);
// Two counts carried as floating-point values are the same count (relative 1e-9).
bool sameCount(double a, double b);

} // namespace collcheck::analyzer::objective
