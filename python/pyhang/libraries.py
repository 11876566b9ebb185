"""Which mapped object a path is: one list of each kind of library, here."""
import os

# glibc and the dynamic loader: their frames are where every blocked thread sleeps.
SYSTEM_LIBRARIES = ("libc.so", "libc-", "libpthread", "ld-linux")
# CUDA driver / runtime libraries.
CUDA_LIBRARIES = ("libcuda.so", "libcudart.so", "libnvcuda", "libcudnn.so")
# libgomp, GCC's OpenMP runtime (PyTorch and numpy builds use it).
GOMP_LIBRARIES = ("libgomp.so", "libgomp-")
# The CPython interpreter, as an executable or a shared library.
PYTHON_LIBRARIES = ("python", "libpython")


def basename(path):
    return os.path.basename(path or "")


def is_one_of(path, prefixes):
    return basename(path).startswith(prefixes)


def is_system_library(path):
    return is_one_of(path, SYSTEM_LIBRARIES)
