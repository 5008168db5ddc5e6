# Run by prefix_test.sh and deb_test.sh inside `hidden` (common.sh), in their scratch folder: uses
# the collcheck installed at $PREFIX and nothing else of collcheck. Environment: PREFIX, VERSION,
# LINT and TIDY (ON or OFF: installed or not), JOBS (what to run); arguments: the mpirun command.
#   consumer: ./consumer (a copy of tests/install/consumer) built with find_package(collcheck) and
#             pkg-config, traced, analyzed, linted, checked by clang-tidy
#   example:  the installed example trainer traced and analyzed (examples/README.md)
set -euo pipefail
prefix=$PREFIX version=$VERSION lint=$LINT tidy=$TIDY jobs=$JOBS
mpirun=("$@")
bin=$prefix/bin

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_status() { # STATUS LOG COMMAND...: runs COMMAND, output to LOG, wants exit status STATUS
  local want=$1 log=$2 status=0
  shift 2
  "$@" >"$log" 2>&1 || status=$?
  ((status == want)) || { cat "$log" >&2; fail "status $status (wanted $want): $*"; }
}
contains() { # FILE TEXT
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 lacks \"$2\""; }
}

# Versions: the one of CMakeLists.txt's project(), in the tools and the trace header. (Outputs are
# read whole before grep: grep -q leaving early would break the pipe.)
shown=$("$bin/collcheck" --version)
[[ $shown == "collcheck $version (trace format 1)" ]] || fail "collcheck --version: $shown"
if [[ $lint == ON ]]; then
  shown=$("$bin/collcheck-lint" --version)
  grep -q "^collcheck-lint $version " <<<"$shown" || fail "collcheck-lint --version: $shown"
fi
# The rule pages are embedded: explain needs no file of the source tree.
shown=$("$bin/collcheck" explain uncompensated-mean)
grep -q "^## Rationale" <<<"$shown" || fail "collcheck explain uncompensated-mean: $shown"

trace_version() { # DIR: the tracer version in the header of every file of DIR
  local file
  local file header
  for file in "$1"/*.cctrace; do
    header=$("$bin/collcheck" dump "$file")
    header=${header%%$'\n'*}
    grep -q "\"tracer_version\": *\"$version\"" <<<"$header" ||
      fail "$file: tracer_version is not $version: $header"
  done
}

if [[ " $jobs " == *" consumer "* ]]; then
  # find_package(collcheck) from the installed prefix only.
  cmake -S consumer -B consumer-build -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >consumer-configure.log 2>&1 ||
    { cat consumer-configure.log >&2; fail "configuring consumer/ with find_package(collcheck)"; }
  cmake --build consumer-build >consumer-build.log 2>&1 ||
    { cat consumer-build.log >&2; fail "building consumer/"; }
  package=consumer-build/collcheck-package.txt
  contains "$package" "COLLCHECK_VERSION=$version"
  contains "$package" "COLLCHECK_INCLUDE_DIR=$prefix/include"
  contains "$package" "COLLCHECK_EXECUTABLE=$bin/collcheck"
  contains "$package" "COLLCHECK_PRELOAD_LIBRARY=$prefix/lib/collcheck/libcollcheck_preload.so"
  contains "$package" "COLLCHECK_TRACES_MPI=ON"
  if [[ $lint == ON ]]; then
    contains "$package" "COLLCHECK_LINT_EXECUTABLE=$bin/collcheck-lint"
    contains "$package" "COLLCHECK_CUDA_COMPAT_DIR=$prefix/share/collcheck/cuda/compat"
  fi
  [[ $tidy == OFF ]] ||
    contains "$package" "COLLCHECK_TIDY_PLUGIN=$prefix/lib/collcheck/libcollcheck-tidy.so"
  contains consumer-build/compile_commands.json "$prefix/include"

  # pkg-config, for builds without CMake.
  export PKG_CONFIG_PATH=$prefix/share/pkgconfig
  [[ $(pkg-config --modversion collcheck) == "$version" ]] || fail "pkg-config --modversion"
  printf '#include <collcheck/annotate.h>\nint main(void) { collcheck_annotate_window(0); return 0; }\n' >pc.c
  # shellcheck disable=SC2046 # the flags are words
  { cc $(pkg-config --cflags collcheck) pc.c -o pc && ./pc; } || fail "a program built with pkg-config's flags"

  # The job averages local means: uncompensated-mean, from the annotations in the trace.
  expect_status 0 run-wrong.log "$bin/collcheck" run -o traces-wrong -- "${mpirun[@]}" -np 2 \
    consumer-build/weighted_mean
  contains run-wrong.log "gradient 2"
  trace_version traces-wrong
  expect_status 1 analyze-wrong.log "$bin/collcheck" analyze traces-wrong
  contains analyze-wrong.log "uncompensated-mean"
  # Compensated, the same job is the global item mean, and nothing is reported.
  expect_status 0 run-right.log "$bin/collcheck" run -o traces-right -- "${mpirun[@]}" -np 2 \
    consumer-build/weighted_mean --compensate
  contains run-right.log "gradient 2.5"
  expect_status 0 analyze-right.log "$bin/collcheck" analyze traces-right

  if [[ $lint == ON ]]; then
    expect_status 1 lint.log "$bin/collcheck-lint" -p consumer-build consumer/weighted_mean.c
    contains lint.log "[uncompensated-mean]"
    contains lint.log "collcheck-lint: 1 finding in 1 file"
  fi
  if [[ $tidy == ON ]]; then
    expect_status 0 tidy.log clang-tidy-19 --load="$prefix/lib/collcheck/libcollcheck-tidy.so" \
      -checks='-*,collcheck-*' -p consumer-build consumer/weighted_mean.c
    contains tidy.log "[collcheck-uncompensated-mean]"
  fi
fi

if [[ " $jobs " == *" example "* ]]; then
  # The demo job of examples/README.md: its defaults average local means (w 9.8, not 9.75).
  [[ -x $bin/collcheck-example-trainer ]] || fail "no $bin/collcheck-example-trainer"
  expect_status 0 example-run.log "$bin/collcheck" run -o example-traces -- "${mpirun[@]}" -np 2 \
    "$bin/collcheck-example-trainer"
  contains example-run.log "update 1 w 9.8"
  trace_version example-traces
  expect_status 1 example-analyze.log "$bin/collcheck" analyze example-traces
  contains example-analyze.log "uncompensated-mean"
fi
echo "installed job ($jobs) from $prefix: ok"
