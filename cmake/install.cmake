# Install rules and the CMake package: `cmake --install build --prefix DIR` gives a prefix that works
# alone (docs in README.md, *Install*):
#   bin/                      collcheck, collcheck-lint, collcheck-example-trainer
#   lib/collcheck/            the preload library, the clang-tidy plugin
#   include/collcheck/        annotate.h
#   <libdir>/cmake/collcheck/ find_package(collcheck)
#   share/pkgconfig/          collcheck.pc (the annotations)
#   share/collcheck/cuda/     the lint's CUDA compatibility headers, for the clang-tidy plugin
#   share/doc/collcheck/      README, docs, rule pages
# The tools find their libraries relative to their own file (bin/../lib/collcheck), so the prefix
# can be moved; nothing of the build tree is written into an installed file (install RPATHs are
# empty: every library the tools link is a system one).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Not CMAKE_INSTALL_LIBDIR: `collcheck run` looks exactly in ../lib/collcheck beside its bin/,
# whatever the platform's library directory is called. These are loaded with
# LD_PRELOAD or dlopen, never linked, so they stay off the linker's path.
set(COLLCHECK_INSTALL_PRIVATE_DIR lib/collcheck)
set(COLLCHECK_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/collcheck)
set(COLLCHECK_INSTALL_DATA_DIR ${CMAKE_INSTALL_DATADIR}/collcheck)

# The annotations: header-only, C and C++ (tracer/include/collcheck/annotate.h).
set(COLLCHECK_ANNOTATE_INCLUDE ${PROJECT_SOURCE_DIR}/tracer/include)
add_library(collcheck_annotate INTERFACE)
add_library(collcheck::annotate ALIAS collcheck_annotate)
target_include_directories(collcheck_annotate
                           INTERFACE $<BUILD_INTERFACE:${COLLCHECK_ANNOTATE_INCLUDE}>
                                     $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(collcheck_annotate PROPERTIES EXPORT_NAME annotate)
install(TARGETS collcheck_annotate EXPORT collcheckTargets)
install(DIRECTORY ${COLLCHECK_ANNOTATE_INCLUDE}/collcheck DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

# The tools and libraries, each only where this configuration builds it (no Clang 19: no lint). Imported in find_package(collcheck) as collcheck::<export name>.
set(collcheck_exported "")
foreach(entry collcheck:collcheck collcheck-lint:lint collcheck_preload:preload
              collcheck-tidy:tidy-plugin)
  string(REPLACE ":" ";" entry ${entry})
  list(GET entry 0 target)
  list(GET entry 1 name)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
    install(TARGETS ${target} EXPORT collcheckTargets
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
            LIBRARY DESTINATION ${COLLCHECK_INSTALL_PRIVATE_DIR})
    list(APPEND collcheck_exported ${name})
  endif()
endforeach()

# The example trainer, the demo job (examples/README.md). A test build links its NCCL backend to
# the NCCL test double (tests/nccl_double), which is never installed, so the installed trainer is
# then the same program built from the same sources with its MPI backend only.
if(TARGET collcheck-example-trainer)
  get_property(trainer_on_double GLOBAL PROPERTY COLLCHECK_EXAMPLE_TRAINER_ON_NCCL_DOUBLE)
  if(trainer_on_double)
    get_target_property(trainer_dir collcheck-example-trainer SOURCE_DIR)
    get_target_property(trainer_sources collcheck-example-trainer SOURCES)
    list(FILTER trainer_sources EXCLUDE REGEX "nccl")
    list(TRANSFORM trainer_sources PREPEND ${trainer_dir}/)
    find_package(CLI11 CONFIG REQUIRED) # its imported target is local to examples/
    add_executable(collcheck_example_trainer_mpi ${trainer_sources})
    foreach(property INCLUDE_DIRECTORIES COMPILE_DEFINITIONS LINK_LIBRARIES)
      get_target_property(value collcheck-example-trainer ${property})
      list(FILTER value EXCLUDE REGEX "[Nn][Cc][Cc][Ll]")
      set_property(TARGET collcheck_example_trainer_mpi PROPERTY ${property} ${value})
    endforeach()
    set_target_properties(collcheck_example_trainer_mpi PROPERTIES
                          OUTPUT_NAME collcheck-example-trainer
                          RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/install-only/bin)
    install(TARGETS collcheck_example_trainer_mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  else()
    install(TARGETS collcheck-example-trainer RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endif()

# The rule pages (also embedded in collcheck and collcheck-lint: `collcheck explain` needs no file)
# and the docs.
get_target_property(rules_dir collcheck_rules SOURCE_DIR)
install(DIRECTORY ${rules_dir}/pages/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/rules
        FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/examples/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The lint's CUDA headers (embedded in collcheck-lint too): the clang-tidy plugin needs
# `-isystem <prefix>/share/collcheck/cuda/compat` for .cu files (docs/lint.md).
if(TARGET collcheck-lint)
  get_target_property(lint_dir collcheck-lint SOURCE_DIR)
  install(DIRECTORY ${lint_dir}/cuda/ DESTINATION ${COLLCHECK_INSTALL_DATA_DIR}/cuda
          FILES_MATCHING PATTERN "*.h")
endif()

# find_package(collcheck): the targets, the tools' paths, and the version (SameMinorVersion: the
# 0.x releases may change the trace format between minor versions).
install(EXPORT collcheckTargets NAMESPACE collcheck:: DESTINATION ${COLLCHECK_INSTALL_CMAKE_DIR})
set(COLLCHECK_HAVE_MPI_TRACING OFF)
set(COLLCHECK_HAVE_NCCL_TRACING OFF)
if(TARGET collcheck_preload)
  set(COLLCHECK_HAVE_MPI_TRACING ${COLLCHECK_HAVE_MPI})
  set(COLLCHECK_HAVE_NCCL_TRACING ${COLLCHECK_HAVE_NCCL})
endif()
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/collcheckConfig.cmake.in ${CMAKE_BINARY_DIR}/collcheckConfig.cmake
  INSTALL_DESTINATION ${COLLCHECK_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR COLLCHECK_INSTALL_DATA_DIR CMAKE_INSTALL_DOCDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/collcheckConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/collcheckConfig.cmake
              ${CMAKE_BINARY_DIR}/collcheckConfigVersion.cmake
        DESTINATION ${COLLCHECK_INSTALL_CMAKE_DIR})

# pkg-config, for the annotations: relative to the .pc file, so the prefix can move.
file(RELATIVE_PATH COLLCHECK_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_DATADIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" COLLCHECK_PC_TO_PREFIX ${COLLCHECK_PC_TO_PREFIX})
configure_file(${CMAKE_CURRENT_LIST_DIR}/collcheck.pc.in ${CMAKE_BINARY_DIR}/collcheck.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/collcheck.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)

# The Python package (tracer/python) carries the same version; pyproject.toml cannot read it from
# here, so a mismatch stops the configuration rather than ship two versions.
set(collcheck_pyproject ${PROJECT_SOURCE_DIR}/tracer/python/pyproject.toml)
if(EXISTS ${collcheck_pyproject})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${collcheck_pyproject})
  file(STRINGS ${collcheck_pyproject} python_version REGEX "^version *= *\"")
  string(REGEX REPLACE "^version *= *\"([^\"]*)\".*" "\\1" python_version "${python_version}")
  if(NOT python_version STREQUAL PROJECT_VERSION)
    message(FATAL_ERROR "collcheck: tracer/python/pyproject.toml has version \"${python_version}\", "
                        "the project ${PROJECT_VERSION} (CMakeLists.txt, project()): make them equal")
  endif()
endif()

# The Debian package of the same files.
include(${CMAKE_CURRENT_LIST_DIR}/packaging.cmake)
