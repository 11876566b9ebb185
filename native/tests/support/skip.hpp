// A test whose environment is missing (no ptrace, no libc file, a fixture
// not built) is skipped, not passed.  The Catch2 of Debian 12 is 2.13, which
// has no SKIP (Catch2 3.3 added it): PYHANG_SKIP says why behind a marker
// and leaves the test, and ctest counts a test whose output has the marker
// as skipped (SKIP_REGULAR_EXPRESSION on the discovered tests, CMakeLists.txt).
// Run directly, pyhang_unit_tests shows the marker as a warning.
#pragma once

#include <catch2/catch.hpp>

#define PYHANG_SKIP_MARKER "pyhang-test-skipped: "

#define PYHANG_SKIP(why)                  \
  do {                                    \
    WARN(PYHANG_SKIP_MARKER << why);      \
    return;                               \
  } while (0)
