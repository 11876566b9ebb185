"""Which library a path is (pyhang.libraries), told without the compiled
module, and the same answer the native decoders give: glibc's list is
kept twice (here for the analysis, in native/src/glibc/libraries.cpp for
the decoders), and these tests fail when the two differ."""
import os
import re

import pytest

from pyhang.libraries import GLIBC_LIBRARIES, is_system_library

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NATIVE_TABLE = os.path.join(ROOT, "native", "src", "glibc", "libraries.cpp")

# Names of glibc's libraries across releases and distributions, and names
# that only look like them.
GLIBC = ["/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", "/lib64/libc-2.17.so", "/lib/libpthread.so.0",
         "/lib64/libpthread-2.28.so", "/lib64/ld-linux-x86-64.so.2", "ld-linux.so.2",
         "/usr/lib/x86_64-linux-gnu/libc.so"]   # the development link names libc too
NOT_GLIBC = ["/usr/lib/x86_64-linux-gnu/libpthreadpool.so.0", "/usr/lib/libcuda.so.1", "/usr/bin/python3.11",
             "/usr/lib/libcrypt.so.1", "/usr/lib/libcap.so.2", "/lib/libc/libm.so.6", "libc", "",
             None, "/usr/lib/musl/libc.musl-x86_64.so.1", "/opt/libc.so.6/libvendor.so"]


def native_prefixes():
    """The file-name prefixes of the C++ table kPrefixes, read as text."""
    with open(NATIVE_TABLE) as f:
        text = f.read()
    table = text[text.index("kPrefixes[]"):]
    table = table[:table.index("};")]
    return re.findall(r'\{"([^"]+)",\s*Library::\w+\}', table)


def test_the_glibc_list_is_the_one_the_native_decoders_compile():
    assert sorted(native_prefixes()) == sorted(GLIBC_LIBRARIES)


def test_glibcs_libraries_are_told_by_their_file_names():
    assert [p for p in GLIBC if not is_system_library(p)] == []
    assert [p for p in NOT_GLIBC if is_system_library(p)] == []


def test_the_native_decoders_give_the_same_answer_for_every_name():
    native = pytest.importorskip("_pyhang_native")   # from the build directory (conftest.py)
    names = [p for p in GLIBC + NOT_GLIBC if p is not None]
    assert {p: native.is_glibc_library(p) for p in names} == {p: is_system_library(p) for p in names}
