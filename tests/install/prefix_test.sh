# install.prefix: `cmake --install` into a temporary prefix, which is then moved; what it holds;
# no path of the build or source tree in any installed file and no RPATH; then, with both trees
# hidden, a separate project built against the moved prefix, traced and analyzed with its tools
# (installed_job.sh).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"
need cmake pkg-config readelf cc
[[ $tidy == OFF ]] || need clang-tidy-19

cmake --install "$build" --prefix "$work/staged" --strip >install.log 2>&1 ||
  { cat install.log >&2; fail "cmake --install"; }
mv "$work/staged" "$work/prefix" # an installation moved elsewhere still works
prefix=$work/prefix

expected=(bin/collcheck bin/collcheck-example-trainer lib/collcheck/libcollcheck_preload.so
  include/collcheck/annotate.h
  share/pkgconfig/collcheck.pc
  share/doc/collcheck/README.md share/doc/collcheck/analyzer.md
  share/doc/collcheck/examples/README.md share/doc/collcheck/rules/uncompensated-mean.md)
[[ $lint == OFF ]] || expected+=(bin/collcheck-lint share/collcheck/cuda/compat/texture_fetch_functions.h
  share/collcheck/cuda/fallback/cuda_runtime.h)
[[ $tidy == OFF ]] || expected+=(lib/collcheck/libcollcheck-tidy.so)
for file in "${expected[@]}"; do
  [[ -f $prefix/$file ]] || fail "cmake --install did not install $file"
done
# The package under the platform's library directory (lib, lib64 or lib/<triplet>).
config=$(cd "$prefix" && find lib* -path '*/cmake/collcheck/collcheckConfig.cmake')
[[ -n $config ]] || fail "cmake --install did not install collcheckConfig.cmake"
for file in collcheckConfigVersion.cmake collcheckTargets.cmake; do
  [[ -f $prefix/$(dirname "$config")/$file ]] || fail "no $file beside $config"
done
pages=$(find "$source/rules/pages" -name '*.md' | wc -l)
installed_pages=$(find "$prefix/share/doc/collcheck/rules" -name '*.md' | wc -l)
((pages == installed_pages)) || fail "$installed_pages rule pages installed, $pages in rules/pages"

no_tree_paths "$prefix"
while IFS= read -r -d '' file; do
  if readelf -h "$file" >/dev/null 2>&1 && readelf -d "$file" | grep -E 'R(UN)?PATH'; then
    fail "$file keeps an RPATH"
  fi
done < <(find "$prefix" -type f -print0)

cp -r "$here/consumer" "$here/installed_job.sh" "$work/"
hidden env PREFIX="$prefix" VERSION="$version" LINT="$lint" TIDY="$tidy" JOBS="consumer example" \
  bash "$work/installed_job.sh" "${mpirun[@]}"
