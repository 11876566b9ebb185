#!/usr/bin/env bash
# Installs what pyhang needs from Debian's packages (when missing) and builds
# it for the Python that gdb embeds.  With --tests, also what the tests use.  Used by examples/demo.sh and
# testdata/run-tests.sh; safe to run again (it only does what is missing).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PYHANG_BUILD_DIR:-$ROOT/build}

packages=(cmake make g++ gdb binutils libc6-dev python3-dev python3-pytest pybind11-dev catch2 patchelf)
# The tests also run the real-world cases: PyTorch (OpenMP), numpy and gunicorn from Debian,
# check every report against docs/pyhang-report-1.schema.json with jsonschema, and name
# libc's static functions from libc6-dbg as gdb does.
# The services' cases (gRPC, a real PostgreSQL and redis-server on loopback, their clients, SQLAlchemy's pool).
# mmdebstrap makes the root file systems of today's Debian interpreters (below); slurm-wlm and munge run
# the Slurm cluster of `pyhang job`'s tests (testdata/slurm_cluster.py), openssh-server its --hosts tests' sshd,
# musl-tools a program on musl's libc (prog_parked_musl).
if [ "${1:-}" = "--tests" ]; then packages+=(python3-torch python3-numpy python3-jsonschema python3-gunicorn python3-aiohttp python3-requests libc6-dbg mmdebstrap graphviz
  python3-grpcio postgresql redis-server python3-redis python3-psycopg2 python3-sqlalchemy slurm-wlm munge
  openssh-server musl-tools); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pyhang: installing from Debian: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=; elif command -v sudo >/dev/null; then SUDO=sudo; else
    echo "pyhang: please install as root: apt-get install ${missing[*]}" >&2; exit 1; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The module must match the Python inside gdb, not the first python3 on PATH.
GDB_PY=$(gdb -nx -batch -ex 'python import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null | tail -n 1)
PY=/usr/bin/python$GDB_PY
if [ ! -x "$PY" ]; then
  echo "pyhang: gdb embeds Python $GDB_PY but $PY is missing; install python$GDB_PY-dev" >&2; exit 1
fi
# The tests also run today's interpreters as distributions ship them:
# Debian unstable's python3.14 and python3.15 (glibc 2.43) and trixie's
# python3.13 (glibc 2.41), each in a root file system made once per machine
# outside the checkout (testdata/containers.py; about a minute each), and one
# of unstable with its PyTorch for the torch.distributed tests (about 650 MB), and one of unstable with
# the services' clients (psycopg2, SQLAlchemy, redis-py, grpcio, urllib3: about 220 MB).
if [ "${1:-}" = "--tests" ]; then
  python3 "$ROOT/testdata/containers.py" >/dev/null || echo "pyhang: warning: the root file systems of today's interpreters could not all be made; their tests will not run" >&2
fi
cmake -S "$ROOT" -B "$BUILD" -DPYHANG_GDB_PYTHON="$PY" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
echo "pyhang: built in $BUILD for gdb's Python $GDB_PY"
