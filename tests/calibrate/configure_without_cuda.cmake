# Configures the project with the CUDA toolkit hidden (-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON) in a
# scratch build directory and checks that it succeeds and leaves the CUPTI collector out.
#   -DSOURCE=dir -DBINARY=dir
file(REMOVE_RECURSE "${BINARY}")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE}" -B "${BINARY}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure without the CUDA toolkit failed (${rc}):\n${out}\n${err}")
endif()
if(NOT out MATCHES "CUDA toolkit not found: parasim-calibrate-gpu is not built")
  message(FATAL_ERROR "configure without the CUDA toolkit did not say the collector is left out:\n${out}")
endif()
if(EXISTS "${BINARY}/calibrate/cupti")
  message(FATAL_ERROR "configure without the CUDA toolkit still set up calibrate/cupti")
endif()
file(REMOVE_RECURSE "${BINARY}")
