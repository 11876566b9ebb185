# cmake -DSOURCE=.. -DBUILD=.. -DCXX=clang++ -DCC=clang -P fuzz_build.cmake:
# configures and builds the fuzz targets (cmake/fuzz.cmake) in BUILD,
# optimised little and with line tables only (a build type of its own: the
# build is part of the test suite's time), and makes the scratch
# directories their short runs write to.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BUILD} -DPYHANG_FUZZ=ON -DPYHANG_TESTS=OFF
                        -DCMAKE_BUILD_TYPE=Fuzz "-DCMAKE_CXX_FLAGS=-O1 -gline-tables-only" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the fuzz targets failed")
endif()
include(ProcessorCount)
ProcessorCount(jobs)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} -j${jobs} --target pyhang_fuzzers RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz targets failed")
endif()
file(GLOB corpora LIST_DIRECTORIES true ${SOURCE}/native/fuzz/corpus/*)
foreach(dir ${corpora})
  get_filename_component(name ${dir} NAME)
  file(MAKE_DIRECTORY ${BUILD}/work/${name})
endforeach()
file(MAKE_DIRECTORY ${BUILD}/artifacts)
