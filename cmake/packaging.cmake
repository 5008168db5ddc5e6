# The Debian package: `cpack --config build/CPackConfig.cmake -G DEB` packs what the install rules
# (cmake/install.cmake) install, under /usr, as collcheck_<version>_<arch>.deb. Its Depends line
# comes from the libraries the binaries link (dpkg-shlibdeps) plus what they use without linking.
set(CPACK_PACKAGE_NAME collcheck)
set(CPACK_PACKAGE_VENDOR collcheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "checks the collectives of distributed training jobs: tracer, analyzer, lint")
# The long description (CPack puts the summary above it as the synopsis line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "collcheck records every MPI and NCCL collective call of an unmodified job through an
LD_PRELOAD tracer (collcheck run), checks the traces after the run for missing ranks, reorders,
mismatched counts, datatypes, operations and roots, hangs and wrongly weighted gradient
reductions (collcheck analyze), and checks the source code for the same mistakes
(collcheck-lint, also a clang-tidy plugin). Includes the header-only annotations
(collcheck/annotate.h), a CMake package and a pkg-config file.")
set(COLLCHECK_PACKAGE_CONTACT "collcheck maintainers <maintainers@collcheck.invalid>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT ${COLLCHECK_PACKAGE_CONTACT})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Used without being linked: the lint hands Clang 19's builtin headers (stddef.h, ...) to every
# parse; `collcheck run -- mpirun ...` wants a launcher; the clang-tidy
# plugin is loaded by clang-tidy 19; the Python annotations are a wheel of their own.
set(collcheck_depends "")
if(TARGET collcheck-lint)
  list(APPEND collcheck_depends libclang-common-19-dev)
endif()
list(JOIN collcheck_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS openmpi-bin)
if(TARGET collcheck-tidy)
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS clang-tidy-19)
endif()
include(CPack)
