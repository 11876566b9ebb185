"""Which mapped object a path is: one list of each kind of library, here
(glibc's own: the native library's list, the one its decoders use)."""
import os

import _pyhang_native as native

# CUDA driver / runtime libraries.
CUDA_LIBRARIES = ("libcuda.so", "libcudart.so", "libnvcuda", "libcudnn.so")
# libgomp, GCC's OpenMP runtime (PyTorch and numpy builds use it).
GOMP_LIBRARIES = ("libgomp.so", "libgomp-")
# Native thread pools whose workers wait for work between tasks: GCC's and
# LLVM's/Intel's OpenMP runtimes, PyTorch's pthreadpool, OpenBLAS, oneTBB.
POOL_LIBRARIES = GOMP_LIBRARIES + ("libomp.so", "libiomp5", "libpthreadpool", "libopenblas", "libtbb.so")
# The CPython interpreter, as an executable or a shared library.
PYTHON_LIBRARIES = ("python", "libpython")


def basename(path):
    return os.path.basename(path or "")


def is_one_of(path, prefixes):
    return basename(path).startswith(prefixes)


def is_system_library(path):
    """glibc and the dynamic loader: where every blocked thread sleeps."""
    return native.is_glibc_library(path or "")
