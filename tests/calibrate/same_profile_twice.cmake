# Runs a `parasim calibrate from-trace … --out FILE` command twice and checks that both runs wrote the
# same bytes (the report itself carries read times and peak memory, which vary).
#   -DCOMMAND="exe;arg;…"  the command, writing -DFILE=f
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc1 OUTPUT_QUIET ERROR_VARIABLE err1 WORKING_DIRECTORY "${WORKDIR}")
if(NOT rc1 EQUAL 0)
  message(FATAL_ERROR "first run exited ${rc1}: ${err1}")
endif()
file(READ "${FILE}" first)
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc2 OUTPUT_QUIET ERROR_VARIABLE err2 WORKING_DIRECTORY "${WORKDIR}")
if(NOT rc2 EQUAL 0)
  message(FATAL_ERROR "second run exited ${rc2}: ${err2}")
endif()
file(READ "${FILE}" second)
if(NOT first STREQUAL second)
  message(FATAL_ERROR "${FILE} differs between two runs")
endif()
