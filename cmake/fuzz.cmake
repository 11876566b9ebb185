# libFuzzer targets of native/fuzz (issue 16).
#
# With -DPYHANG_FUZZ=ON (clang only), the build is the sanitizer build
# alone: the native library and one executable per native/fuzz/fuzz_*.cpp,
# all under AddressSanitizer and UndefinedBehaviorSanitizer, every report
# fatal (-fno-sanitize-recover=all); make_corpus, which writes the seeds of
# native/fuzz/corpus; and, when Catch2 is present, the Catch2 unit tests
# (pyhang_unit_tests) over the same sanitized library.
#
# In the normal build with the tests, when clang++ links a libFuzzer
# program, ctest gets "fuzz: build" (the sanitizer build in <build>/fuzz),
# one "fuzz: <target>" per target, a short run on its committed corpus
# (PYHANG_FUZZ_SECONDS each, 5 by default), and "sanitizers: unit tests",
# every Catch2 test under the sanitizers, stack use after return included.
# Without clang or libFuzzer the entries are not registered and a status
# line says why.

file(GLOB PYHANG_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/native/fuzz/fuzz_*.cpp)

if(PYHANG_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PYHANG_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(PYHANG_SANITIZE -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  file(GLOB_RECURSE PYHANG_NATIVE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/native/src/*.cpp)
  add_library(pyhang_native_fuzz STATIC ${PYHANG_NATIVE_SOURCES})
  # Compiled as a few large files (a unity build): the sanitized build is part of the suite's time, and the
  # library's sources share most of their headers.
  set_target_properties(pyhang_native_fuzz PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 12)
  target_include_directories(pyhang_native_fuzz PUBLIC ${CMAKE_SOURCE_DIR}/native/include ${CMAKE_SOURCE_DIR}/native/src)
  target_compile_options(pyhang_native_fuzz PUBLIC ${PYHANG_SANITIZE} PRIVATE -fsanitize=fuzzer-no-link)
  target_link_options(pyhang_native_fuzz PUBLIC -fsanitize=address,undefined)
  target_link_libraries(pyhang_native_fuzz PUBLIC ${CMAKE_DL_LIBS})
  foreach(src ${PYHANG_FUZZ_SOURCES})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE pyhang_native_fuzz)
    list(APPEND PYHANG_FUZZ_TARGETS ${name})
  endforeach()
  add_custom_target(pyhang_fuzzers)
  add_dependencies(pyhang_fuzzers ${PYHANG_FUZZ_TARGETS})
  add_executable(make_corpus ${CMAKE_SOURCE_DIR}/native/fuzz/make_corpus.cpp)
  target_include_directories(make_corpus PRIVATE ${CMAKE_SOURCE_DIR}/native/tests)
  target_link_libraries(make_corpus PRIVATE pyhang_native_fuzz)
  # The unit tests over the sanitized library: a dangling reference or an
  # overflow that a normal build survives by luck stops them here.
  find_package(Catch2 2 QUIET)
  if(Catch2_FOUND)
    file(GLOB_RECURSE PYHANG_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/native/tests/*.cpp)
    # Not part of `all`: a long fuzzing session builds the targets alone;
    # fuzz_build.cmake names it.
    add_executable(pyhang_unit_tests EXCLUDE_FROM_ALL ${PYHANG_UNIT_TESTS})
    target_include_directories(pyhang_unit_tests PRIVATE ${CMAKE_SOURCE_DIR}/native/tests)
    target_link_libraries(pyhang_unit_tests PRIVATE pyhang_native_fuzz Catch2::Catch2)
    # The tests' own code unoptimised: it compiles in less time (the
    # library under test keeps the build's -O1).
    target_compile_options(pyhang_unit_tests PRIVATE -O0)
    pyhang_catch_header(pyhang_unit_tests)
  endif()
  return()
endif()

if(NOT PYHANG_TESTS)
  return()
endif()
set(PYHANG_FUZZ_SECONDS 5 CACHE STRING "Seconds each fuzz target runs in the test suite")
find_program(PYHANG_CLANGXX clang++)
find_program(PYHANG_CLANG clang)
set(PYHANG_FUZZ_PROBE_DIR ${CMAKE_BINARY_DIR}/fuzz-probe)
set(PYHANG_FUZZ_OK FALSE)
if(PYHANG_CLANGXX AND PYHANG_CLANG)
  file(WRITE ${PYHANG_FUZZ_PROBE_DIR}/probe.cpp
       "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  execute_process(COMMAND ${PYHANG_CLANGXX} -fsanitize=fuzzer,address,undefined probe.cpp -o probe
                  WORKING_DIRECTORY ${PYHANG_FUZZ_PROBE_DIR} RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(probe_rc EQUAL 0)
    set(PYHANG_FUZZ_OK TRUE)
  endif()
endif()
if(NOT PYHANG_FUZZ_OK)
  message(STATUS "clang++ with libFuzzer (-fsanitize=fuzzer) not found: the fuzz targets are not run by ctest")
  return()
endif()

set(PYHANG_FUZZ_BUILD ${CMAKE_BINARY_DIR}/fuzz)
set(PYHANG_SANITIZER_ENV "ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:halt_on_error=1"
                         "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
add_test(NAME "fuzz: build"
  COMMAND ${CMAKE_COMMAND} -DSOURCE=${CMAKE_SOURCE_DIR} -DBUILD=${PYHANG_FUZZ_BUILD}
          -DFIXTURES=${CMAKE_BINARY_DIR}/testdata
          -DCXX=${PYHANG_CLANGXX} -DCC=${PYHANG_CLANG} -P ${CMAKE_SOURCE_DIR}/cmake/fuzz_build.cmake)
set_tests_properties("fuzz: build" PROPERTIES FIXTURES_SETUP pyhang_fuzz TIMEOUT 900)
# Every Catch2 test once, under the sanitizers (the live-target test finds
# the fixture programs through <build>/fuzz/testdata, a link to <build>/testdata).
add_test(NAME "sanitizers: unit tests" COMMAND ${PYHANG_FUZZ_BUILD}/pyhang_unit_tests)
set_tests_properties("sanitizers: unit tests" PROPERTIES FIXTURES_REQUIRED pyhang_fuzz TIMEOUT 600
                     ENVIRONMENT "${PYHANG_SANITIZER_ENV}")
foreach(src ${PYHANG_FUZZ_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" corpus ${name})
  # New inputs go to a scratch corpus in the build tree, crashes to
  # <build>/fuzz/artifacts: the committed seeds are only read.
  add_test(NAME "fuzz: ${name}"
    COMMAND ${PYHANG_FUZZ_BUILD}/${name} -max_total_time=${PYHANG_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
            -print_final_stats=1 -artifact_prefix=${PYHANG_FUZZ_BUILD}/artifacts/${name}-
            ${PYHANG_FUZZ_BUILD}/work/${corpus} ${CMAKE_SOURCE_DIR}/native/fuzz/corpus/${corpus})
  set_tests_properties("fuzz: ${name}" PROPERTIES FIXTURES_REQUIRED pyhang_fuzz
                       TIMEOUT 300
                       ENVIRONMENT "${PYHANG_SANITIZER_ENV}")
endforeach()
