# Runs one trainer command and checks what it printed. Arguments (lists separated by "|", since
# CTest splits on ";"):
#   COMMAND         the command line
#   EXPECTED        the exact "update ..." lines, in order (SORTED=ON: in any order)
#   REFERENCE       a second command line whose "update ..." lines must equal the first's
#   EXIT_CODE       the expected exit status (default 0; "nonzero" for any failure)
#   STDERR_REGEX    a regular expression the standard error must match
cmake_policy(SET CMP0007 NEW) # keep list semantics exact

foreach(required COMMAND)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "expect_updates.cmake: ${required} is required")
  endif()
endforeach()

function(run_updates command_text out_lines out_status out_stderr)
  string(REPLACE "|" ";" command "${command_text}")
  execute_process(COMMAND ${command} OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr
                  RESULT_VARIABLE status TIMEOUT 120)
  string(REPLACE "\n" ";" lines "${stdout}")
  list(FILTER lines INCLUDE REGEX "^update ")
  set(${out_lines} "${lines}" PARENT_SCOPE)
  set(${out_status} "${status}" PARENT_SCOPE)
  set(${out_stderr} "${stderr}" PARENT_SCOPE)
endfunction()

run_updates("${COMMAND}" lines status stderr)
string(REPLACE "|" " " shown "${COMMAND}")

if(NOT DEFINED EXIT_CODE)
  set(EXIT_CODE 0)
endif()
if(EXIT_CODE STREQUAL "nonzero")
  if(status EQUAL 0)
    message(FATAL_ERROR "${shown}\nexited 0, a failure was expected\nstderr:\n${stderr}")
  endif()
elseif(NOT status EQUAL EXIT_CODE)
  message(FATAL_ERROR "${shown}\nexited ${status}, expected ${EXIT_CODE}\nstderr:\n${stderr}")
endif()

if(DEFINED STDERR_REGEX AND NOT stderr MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "${shown}\nstderr does not match \"${STDERR_REGEX}\":\n${stderr}")
endif()

if(DEFINED REFERENCE)
  run_updates("${REFERENCE}" EXPECTED reference_status reference_stderr)
  if(NOT reference_status EQUAL 0)
    message(FATAL_ERROR "reference run failed (${reference_status}):\n${reference_stderr}")
  endif()
elseif(DEFINED EXPECTED)
  string(REPLACE "|" ";" EXPECTED "${EXPECTED}")
endif()

if(DEFINED EXPECTED OR DEFINED REFERENCE)
  if(SORTED)
    list(SORT lines)
    list(SORT EXPECTED)
  endif()
  if(NOT "${lines}" STREQUAL "${EXPECTED}")
    string(REPLACE ";" "\n  " got "${lines}")
    string(REPLACE ";" "\n  " want "${EXPECTED}")
    message(FATAL_ERROR "${shown}\nprinted:\n  ${got}\nexpected:\n  ${want}\nstderr:\n${stderr}")
  endif()
endif()
message(STATUS "${shown}: as expected")
