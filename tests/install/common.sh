# Shared by the install tests: options, failure and skip, a scratch folder, and running a command
# with the build and source trees out of reach.
#   --build DIR --source DIR --version V [--lint ON|OFF] [--tidy ON|OFF] [--preload LIB]
#   [-- MPIRUN...]
set -euo pipefail
build='' source='' version='' lint=OFF tidy=OFF preload=''
mpirun=()
while (($#)); do
  case $1 in
  --build) build=$(cd "$2" && pwd) && shift 2 ;;
  --source) source=$(cd "$2" && pwd) && shift 2 ;;
  --version) version=$2 && shift 2 ;;
  --lint) lint=$2 && shift 2 ;;
  --tidy) tidy=$2 && shift 2 ;;
  --preload) preload=$2 && shift 2 ;;
  --) shift && mpirun=("$@") && break ;;
  *) echo "unknown option $1" >&2 && exit 2 ;;
  esac
done
[[ -n $build && -n $source && -n $version ]] || { echo "--build, --source, --version" >&2; exit 2; }

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
skip() {
  echo "SKIP: $*"
  exit 77
}
need() { # tool... : skipped (77) when one is not installed
  for tool; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
  done
}
# The installed tools must not find their files through these.
unset COLLCHECK_PRELOAD COLLCHECK_MPI_PLUGIN COLLCHECK_OUTPUT LD_PRELOAD PYTHONPATH

work=$(mktemp -d "${TMPDIR:-/tmp}/collcheck-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
case $work/ in
"$build"/* | "$source"/*) fail "the scratch folder $work lies in the build or source tree (TMPDIR)" ;;
esac

# The trees an installed file must not name: the build tree and the source tree it came from.
no_tree_paths() { # DIR: fails when a file under DIR contains either path
  local hits
  hits=$(grep -rlF --binary-files=text -e "$build" -e "$source" "$1" || true)
  [[ -z $hits ]] || fail "files naming $build or $source:"$'\n'"$hits"
}

# hidden COMMAND...: runs COMMAND in a mount namespace where an empty tmpfs covers the source and
# the build tree, so that nothing of either can be read, loaded or executed. Without mount
# namespaces (a container that forbids them) COMMAND runs as it is and says so; the path scans
# (no_tree_paths) still hold.
hide_with=()
for candidate in "unshare -m" "unshare -rm"; do
  if $candidate -- sh -c "mount -t tmpfs collcheck-hidden '$source'" 2>/dev/null; then
    read -ra hide_with <<<"$candidate"
    break
  fi
done
hidden() {
  if ((${#hide_with[@]} == 0)); then
    echo "note: no mount namespace here: the build tree stays reachable during: $*"
    "$@"
    return
  fi
  "${hide_with[@]}" -- bash -c '
    for tree in "$1" "$2"; do # the build tree first: it may lie inside the source tree
      mount -t tmpfs collcheck-hidden "$tree" && [[ -z $(ls -A "$tree") ]] || exit 1
    done
    shift 2
    exec "$@"' hide "$build" "$source" "$@"
}
