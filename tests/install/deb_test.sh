# install.deb: `cpack -G DEB` from the build tree; the package's fields and files; its Depends
# checked against the libraries its binaries link (each one's Debian package must be named); apt
# accepts it (simulated); and the example job run from its unpacked files with the build and
# source trees hidden (installed_job.sh).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"
need cpack dpkg-deb dpkg-shlibdeps dpkg-query readelf ldd

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >cpack.log 2>&1 ||
  { cat cpack.log >&2; fail "cpack -G DEB"; }
debs=("$work"/out/collcheck_"$version"_*.deb)
[[ -f ${debs[0]} ]] || { cat cpack.log >&2; fail "no collcheck_${version}_<arch>.deb in $work/out"; }
deb=${debs[0]}
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == collcheck ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version), not $version"
[[ $(field Architecture) == "$(dpkg --print-architecture)" ]] || fail "Architecture"
depends=$(field Depends)
echo "Depends: $depends"

# Its files: the tools, libraries, header, CMake and pkg-config files and docs, under /usr;
# nothing of the test tree (the NCCL test double, test programs).
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >contents.txt
expected=(/usr/bin/collcheck /usr/bin/collcheck-example-trainer
  /usr/lib/collcheck/libcollcheck_preload.so
  /usr/include/collcheck/annotate.h /usr/share/pkgconfig/collcheck.pc
  /usr/share/doc/collcheck/README.md /usr/share/doc/collcheck/rules/uncompensated-mean.md)
[[ $lint == OFF ]] || expected+=(/usr/bin/collcheck-lint
  /usr/share/collcheck/cuda/compat/texture_fetch_functions.h)
[[ $tidy == OFF ]] || expected+=(/usr/lib/collcheck/libcollcheck-tidy.so)
for file in "${expected[@]}"; do
  grep -qx -- "$file" contents.txt || { cat contents.txt >&2; fail "the package lacks $file"; }
done
grep -q '/cmake/collcheck/collcheckConfig.cmake$' contents.txt || fail "no collcheckConfig.cmake"
outside=$(grep -v -e '/$' -e '^/usr/bin/collcheck' -e '^/usr/lib/collcheck/' \
  -e '^/usr/include/collcheck/' -e '^/usr/lib/.*cmake/collcheck/' \
  -e '^/usr/share/pkgconfig/collcheck.pc$' -e '^/usr/share/doc/collcheck/' \
  -e '^/usr/share/collcheck/' contents.txt || true)
[[ -z $outside ]] || fail "unexpected files in the package:"$'\n'"$outside"

mkdir root
dpkg-deb -x "$deb" root
no_tree_paths root

# Depends names the Debian package of every library a binary of the package links. One
# dpkg-query for all of them: each call reads the whole package database.
links=() # "file soname path"
while IFS= read -r -d '' file; do
  readelf -h "$file" >/dev/null 2>&1 || continue
  resolved=$(ldd "$file")
  while read -r soname; do
    # ldd prints "name => path (address)", or "path (address)" for the dynamic loader.
    path=$(awk -v name="$soname" '
      $1 == name && $2 == "=>" { print $3; exit }
      substr($1, length($1) - length(name)) == "/" name { print $1; exit }' <<<"$resolved")
    [[ -n $path && -e $path ]] || fail "$file: $soname is not found (ldd)"
    links+=("$file $soname $path")
  done < <(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done < <(find root -type f -print0)
((${#links[@]} > 0)) || fail "no linked library found"
# usrmerge: a package may list /lib/... where ldd says /usr/lib/..., or the other way round.
variants() { local p; for p in "$1" "$(realpath "$1")"; do echo "$p" "${p#/usr}" "/usr${p#/usr}"; done; }
mapfile -t candidates < <(for link in "${links[@]}"; do variants "${link##* }"; done | tr ' ' '\n' | sort -u)
declare -A owner_of
while IFS= read -r line; do # "package[:arch][, package...]: path"
  owner_of[${line#*: }]=${line%%[:,]*}
done < <(dpkg-query -S "${candidates[@]}" 2>/dev/null || true)
depended=$(tr ',' '\n' <<<"$depends" | awk '{ print $1 }') # the package names, one a line
for link in "${links[@]}"; do
  read -r file soname path <<<"$link"
  owner=''
  for candidate in $(variants "$path"); do
    owner=${owner_of[$candidate]:-}
    [[ -z $owner ]] || break
  done
  [[ -n $owner ]] || fail "$file links $path, which no Debian package holds"
  grep -qxF -- "$owner" <<<"$depended" ||
    fail "$file links $soname of $owner, which Depends does not name"
done
echo "Depends covers the ${#links[@]} libraries the package's binaries link"
[[ $lint == OFF ]] || grep -qx 'libclang-common-19-dev' <<<"$depended" ||
  fail "Depends lacks libclang-common-19-dev (Clang's builtin headers, used by collcheck-lint)"

# apt resolves the package against this system (a simulation: nothing is installed).
if command -v apt-get >/dev/null; then
  apt-get install --simulate --no-download "$deb" >apt.log 2>&1 ||
    { cat apt.log >&2; fail "apt-get install --simulate $deb"; }
fi

cp "$here/installed_job.sh" "$work/"
hidden env PREFIX="$work/root/usr" VERSION="$version" LINT="$lint" TIDY="$tidy" JOBS="example" \
  bash "$work/installed_job.sh" "${mpirun[@]}"
