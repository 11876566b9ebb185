#!/usr/bin/env bash
# Set-up (testdata/setup.sh), then every test: Catch2 unit tests and the gdb
# integration tests, through ctest, which prints the closing count.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PYHANG_BUILD_DIR:-$ROOT/build}
"$ROOT/testdata/setup.sh" --tests
cd "$BUILD"
# One test more than cores: an integration test waits on its scenario processes and on gdb much of its time.
ctest --output-on-failure -j"$(( $(nproc) + 1 ))" "$@"
