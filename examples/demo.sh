#!/usr/bin/env bash
# Set-up (Debian packages, build for gdb's Python), then the demo: a hung
# Python program, pyhang's report on it through gdb, and the program stopped.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/testdata/setup.sh"
exec /usr/bin/python3 "$ROOT/examples/demo.py"
