# Runs a command and checks its exit code and that stderr is one line matching a regular expression.
#   -DCOMMAND="exe;arg;…" -DEXPECT_RC=n -DEXPECT_STDERR_REGEX=r
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${COMMAND}")
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "`${shown}` exited ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(REGEX REPLACE "\n$" "" err "${err}")
if(err MATCHES "\n")
  message(FATAL_ERROR "`${shown}`: the error is more than one line:\n${err}")
endif()
if(NOT err MATCHES "${EXPECT_STDERR_REGEX}")
  message(FATAL_ERROR "`${shown}` printed on stderr:\n  ${err}\nexpected a match of:\n  ${EXPECT_STDERR_REGEX}")
endif()
