# The objective checks (windows, valid counts, gradient weighting) and the reference comparison:
# part of the analyzer library, listed here so that their folder stays self-contained.
set(COLLCHECK_OBJECTIVE_SOURCES
  objective/ledger.cpp
  objective/windows.cpp
  objective/weighing.cpp
  objective/numbers.cpp
  objective/objective_checks.cpp
  objective/uncompensated_mean.cpp
  objective/double_normalization.cpp
  objective/partial_window.cpp
  objective/zero_count_skip.cpp
  objective/zero_count_division.cpp
  objective/count_on_active_ranks.cpp
  objective/unverified_reduction.cpp
  objective/reference_comparison.cpp)
