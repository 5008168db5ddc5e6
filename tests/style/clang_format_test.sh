#!/bin/sh
# Every C and C++ source git tracks (the lint corpus left out: its expected diagnostics are written
# against its line numbers) is as clang-format writes it. Usage: clang_format_test.sh CLANG_FORMAT
# (empty when none was found). Exits 77, which CTest reports as skipped, where clang-format or a git
# checkout is missing: the check then cannot run, and must not pass.
cf=$1
if [ -z "$cf" ] || ! command -v "$cf" > /dev/null 2>&1; then
  echo "SKIP: no clang-format (scripts/setup installs it)"
  exit 77
fi
if ! command -v git > /dev/null 2>&1 || ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "SKIP: not a git checkout: git ls-files lists the sources to check"
  exit 77
fi
files=$(git ls-files '*.cpp' '*.h' '*.c' '*.cu' | grep -v '^tests/lint/corpus/')
if [ -z "$files" ]; then
  echo "FAIL: git lists no C or C++ source"
  exit 1
fi
echo "$files" | xargs "$cf" --dry-run -Werror || exit 1
echo "PASSED: $(echo "$files" | wc -l) files as clang-format writes them"
