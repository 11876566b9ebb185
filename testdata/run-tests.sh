#!/usr/bin/env bash
# Set-up (testdata/setup.sh), then every test: Catch2 unit tests and the gdb
# integration tests, through ctest, which prints the closing count; then what
# was skipped and why (testdata/skip_summary.py).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PYHANG_BUILD_DIR:-$ROOT/build}
"$ROOT/testdata/setup.sh" --tests
cd "$BUILD"
# One test more than cores: an integration test waits on its scenario processes and on gdb much of its time.
rc=0
ctest --output-on-failure -j"$(( $(nproc) + 1 ))" "$@" || rc=$?
# What did not run, and why (ctest shows no passing test's output).
"$ROOT/testdata/skip_summary.py" Testing/Temporary/LastTest.log || true
exit "$rc"
