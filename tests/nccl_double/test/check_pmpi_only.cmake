# Fails when the library refers to an MPI_* function: the collcheck tracer interposes those names,
# and the double's own traffic must stay invisible to it (PMPI_* only).
execute_process(COMMAND ${NM} -D --undefined-only ${LIBRARY} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "[ \t]U MPI_[A-Za-z_]+" traced "${symbols}")
if(traced)
  message(FATAL_ERROR "${LIBRARY} calls traced MPI entry points:${traced}")
endif()
string(REGEX MATCHALL "[ \t]U PMPI_[A-Za-z_]+" untraced "${symbols}")
list(LENGTH untraced count)
if(count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY} refers to no PMPI_* entry point: is it linked against MPI?")
endif()
message(STATUS "${LIBRARY}: ${count} PMPI_* entry points, no MPI_* ones")
