// Each part of the native library registers its own functions and types on
// the one extension module, `_pyhang_native`.
#pragma once

#include <pybind11/pybind11.h>

namespace pyhang::bindings {

void register_target(pybind11::module_& m);   // python/bind_target.cpp
void register_cpython(pybind11::module_& m);  // python/bind_cpython.cpp
void register_locks(pybind11::module_& m);    // python/bind_locks.cpp
void register_pylocks(pybind11::module_& m);  // python/bind_pylocks.cpp
void register_waitgraph(pybind11::module_& m);  // python/bind_waitgraph.cpp

}  // namespace pyhang::bindings
