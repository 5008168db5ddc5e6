#!/bin/sh
# Every quoted #include of the product, its tests and benchmarks names its header by the path from
# the repository root (#include "analyzer/match/analysis.h"), never "../x.h" nor a name that only
# resolves inside one target's folder, so that a reader finds each header from the line alone.
# Left out: lint/ and its tests (paths from lint/), the example trainer (built on its own against an
# installed collcheck), the installed API header (collcheck/annotate.h, as applications include
# it) and the generated rule pages. Exits 77, which CTest reports as skipped, outside a git checkout.
if ! command -v git > /dev/null 2>&1 || ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "SKIP: not a git checkout: git ls-files lists the sources to check"
  exit 77
fi
tracked=$(mktemp) || exit 1
trap 'rm -f "$tracked"' EXIT
git ls-files > "$tracked"
sources=$(grep -E '\.(cpp|h|c|cu|def)$' "$tracked" | grep -v -e '^lint/' -e '^tests/lint/' -e '^examples/')
if [ -z "$sources" ]; then
  echo "FAIL: git lists no C or C++ source"
  exit 1
fi
bad=$(echo "$sources" | xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
  while IFS= read -r line; do
    path=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
    case $path in
    collcheck/annotate.h | catalogue_pages.inc) continue ;;
    esac
    grep -qxF "$path" "$tracked" || printf '%s\n' "$line"
  done)
if [ -n "$bad" ]; then
  echo "FAIL: includes that do not name a header by its path from the repository root:"
  echo "$bad"
  exit 1
fi
echo "PASSED: $(echo "$sources" | wc -l) files include headers by their path from the root"
