# The objective checks (windows, valid counts, gradient weighting) and the reference comparison:
# part of the analyzer library, listed here so that their folder stays self-contained.
set(COLLCHECK_OBJECTIVE_SOURCES
  checks/objective/ledger.cpp
  checks/objective/windows.cpp
  checks/objective/weighing.cpp
  checks/objective/numbers.cpp
  checks/objective/objective_checks.cpp
  checks/objective/uncompensated_mean.cpp
  checks/objective/double_normalization.cpp
  checks/objective/partial_window.cpp
  checks/objective/zero_count_skip.cpp
  checks/objective/zero_count_division.cpp
  checks/objective/count_on_active_ranks.cpp
  checks/objective/unverified_reduction.cpp
  checks/objective/reference_comparison.cpp)
