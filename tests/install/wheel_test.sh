# install.wheel: scripts/build-wheel builds the Python annotations offline without writing into the
# source tree; the wheel carries the project's version and installs with no index into a fresh
# virtual environment, where the module imports from it, is inert without the tracer and finds
# the preload library's entry points under it.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"
python=python3
[[ -x /usr/bin/python3 ]] && python=/usr/bin/python3 # Debian's, with python3-setuptools
need "$python"
"$python" -c 'import setuptools, wheel, ensurepip' 2>/dev/null ||
  skip "$python lacks setuptools, wheel or ensurepip (python3-setuptools python3-wheel python3-venv)"

module=$source/tracer/python
listing() { (cd "$module" && find . -path '*/__pycache__' -prune -o -print | sort); }
listing >before.txt
PYTHON=$python "$source/scripts/build-wheel" "$work/dist" >build.log 2>&1 ||
  { cat build.log >&2; fail "scripts/build-wheel"; }
listing >after.txt
diff before.txt after.txt || fail "scripts/build-wheel wrote into $module"
wheel=$work/dist/collcheck-$version-py3-none-any.whl
[[ -f $wheel ]] || { ls "$work/dist" >&2; fail "no collcheck-$version-py3-none-any.whl"; }
[[ $(tail -n 1 build.log) == "$wheel" ]] || fail "build-wheel printed $(tail -n 1 build.log)"

"$python" -m venv "$work/venv" >venv.log 2>&1 || { cat venv.log >&2; fail "python3 -m venv"; }
PIP_CONFIG_FILE=/dev/null "$work/venv/bin/python" -m pip install --no-index --no-deps --quiet \
  "$wheel" || fail "pip install --no-index $wheel"

probe='
import collcheck, collcheck.torch, importlib.metadata, sys
assert collcheck.__file__.startswith(sys.prefix), collcheck.__file__
print(importlib.metadata.version("collcheck"), collcheck.active())
collcheck.window_begin(0)
collcheck.valid_count(3)
collcheck.normalization(collcheck.LOCAL_MEAN)
'
[[ $("$work/venv/bin/python" -c "$probe") == "$version False" ]] ||
  fail "the installed module without the tracer: $("$work/venv/bin/python" -c "$probe" 2>&1)"
[[ $(LD_PRELOAD=$preload COLLCHECK_OUTPUT=$work/traces "$work/venv/bin/python" -c "$probe") == \
  "$version True" ]] || fail "the installed module under LD_PRELOAD=$preload"
echo "wheel $(basename "$wheel") installed into a fresh venv: ok"
