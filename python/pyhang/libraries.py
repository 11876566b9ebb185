"""Which mapped object a path is: one list of each kind of library, here.
Each list holds file-name prefixes, matched against the path's file name
(is_one_of).  Plain Python: the analysis and `pyhang merge` /
`report --snapshot` need no compiled module."""
import os

# glibc's own libraries: libc (libc-2.X.so before 2.34's renaming),
# libpthread (merged into libc in 2.34; not libpthreadpool, PyTorch's thread
# pool) and the dynamic loader.  The native decoders have the same list in
# native/src/glibc/libraries.cpp (kPrefixes), where C++ reads it at compile
# time; python/tests/test_libraries.py reads both lists as text and fails
# when they differ, and compares the two answers over many names when the
# native module is built.  (Generating one from the other would add a build
# step to the native-only and fuzz builds for five strings.)
GLIBC_LIBRARIES = ("libc.so", "libc-2.", "libpthread.so", "libpthread-2.", "ld-linux")
# CUDA driver / runtime libraries.
CUDA_LIBRARIES = ("libcuda.so", "libcudart.so", "libnvcuda", "libcudnn.so")
# Libraries whose internal locks are the "driver lock" of a driver deadlock
# (a thread calls back into Python from inside them): the CUDA driver and
# runtime, NVIDIA's other user-space drivers, NCCL and UCX.
DRIVER_LIBRARIES = ("libcuda.so", "libcudart.so", "libcuda_", "libnvidia-", "libnccl.so",
                    "libucp.so", "libucs.so", "libuct.so", "libucx")
# Name prefixes of the threads those drivers start for their own work (the
# CUDA driver's "cuda-EvtHandlr", "cuda0000..."; NCCL's; UCX's): they sleep
# on the drivers' internal words by design.  Thread names, not files.
DRIVER_HELPER_THREADS = ("cuda-", "cuda0000", "nccl", "ucx-", "ucp-")
# libgomp, GCC's OpenMP runtime (PyTorch and numpy builds use it).
GOMP_LIBRARIES = ("libgomp.so", "libgomp-")
SQLITE_LIBRARIES = ("libsqlite3.so",)
# Native thread pools whose workers wait for work between tasks: GCC's and
# LLVM's/Intel's OpenMP runtimes, PyTorch's pthreadpool, OpenBLAS, oneTBB.
POOL_LIBRARIES = GOMP_LIBRARIES + ("libomp.so", "libiomp5", "libpthreadpool", "libopenblas", "libtbb.so")
# gRPC's core (in the Python package's cygrpc module, or a shared libgrpc): its executors, timer threads and
# event engine's workers wait for work between callbacks.
GRPC_LIBRARIES = ("cygrpc.", "libgrpc.so", "libgrpc_", "libgpr.so")
POOL_LIBRARIES += GRPC_LIBRARIES
# Libraries a native pool's thread sleeps in below its own frames, never where its work runs: Abseil's
# Mutex and CondVar (their per-thread semaphore), on which gRPC's threads wait.
POOL_WAIT_LIBRARIES = ("libabsl_synchronization.so",)
# Native worker loops that wait for work on a condition variable between tasks, by function (their
# library is a large one that does much else): torch.distributed's gloo process-group workers.
NATIVE_IDLE_LOOPS = ("c10d::ProcessGroupGloo::runLoop",)
# The CPython interpreter, as an executable or a shared library.
PYTHON_LIBRARIES = ("python", "libpython")
# The interpreter and the foreign-function modules through which C calls
# into Python and Python into C: never the library that owns a native lock.
PYTHON_RUNTIME_LIBRARIES = PYTHON_LIBRARIES + ("_ctypes", "_cffi_backend")


def basename(path):
    return os.path.basename(path or "")


def is_one_of(path, prefixes):
    return basename(path).startswith(prefixes)


def is_system_library(path):
    """glibc and the dynamic loader: where every blocked thread sleeps."""
    return is_one_of(path, GLIBC_LIBRARIES)


def is_driver_library(path):
    return is_one_of(path, DRIVER_LIBRARIES)


def is_driver_helper_thread(name):
    """A thread a driver started for itself: never a suspect, never a waiter to explain."""
    return (name or "").startswith(DRIVER_HELPER_THREADS)
