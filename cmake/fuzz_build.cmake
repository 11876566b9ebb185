# cmake -DSOURCE=.. -DBUILD=.. -DFIXTURES=.. -DCXX=clang++ -DCC=clang -P fuzz_build.cmake:
# configures and builds the sanitizer build (cmake/fuzz.cmake) in BUILD:
# the fuzz targets and the unit tests, optimised little and with line
# tables only (a build type of its own: the build is part of the test
# suite's time); makes the scratch directories the fuzz runs write to, and
# links BUILD/testdata to FIXTURES (the normal build's fixture programs,
# which the live-target unit test starts).
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BUILD} -DPYHANG_FUZZ=ON -DPYHANG_TESTS=OFF
                        -DCMAKE_BUILD_TYPE=Fuzz "-DCMAKE_CXX_FLAGS=-O1 -gline-tables-only" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the fuzz targets failed")
endif()
include(ProcessorCount)
ProcessorCount(jobs)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} -j${jobs} --target pyhang_fuzzers pyhang_unit_tests
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz targets and the unit tests failed")
endif()
if(FIXTURES AND NOT EXISTS ${BUILD}/testdata)
  file(CREATE_LINK ${FIXTURES} ${BUILD}/testdata SYMBOLIC)
endif()
file(GLOB corpora LIST_DIRECTORIES true ${SOURCE}/native/fuzz/corpus/*)
foreach(dir ${corpora})
  get_filename_component(name ${dir} NAME)
  file(MAKE_DIRECTORY ${BUILD}/work/${name})
endforeach()
file(MAKE_DIRECTORY ${BUILD}/artifacts)
