// Each part of the native library registers its own functions and types on
// the one extension module, `_pyhang_native`.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>

#include "pyhang/target/core_file.hpp"

namespace pyhang::cpython {
class PyObjects;
}

namespace pyhang::bindings {

void register_target(pybind11::module_& m);   // python/bind_target.cpp
void register_cpython(pybind11::module_& m);  // python/bind_cpython.cpp
void register_locks(pybind11::module_& m);    // python/bind_locks.cpp
void register_pylocks(pybind11::module_& m);  // python/bind_pylocks.cpp
void register_waitgraph(pybind11::module_& m);  // python/bind_waitgraph.cpp
void register_fork(pybind11::module_& m);       // python/bind_fork.cpp
void register_unwind(pybind11::module_& m);     // python/bind_unwind.cpp

// None for an empty optional, else the value.
template <class T>
pybind11::object opt(const std::optional<T>& v) {
  return v ? pybind11::cast(*v) : pybind11::none();
}

// A decoded Python value {address, type, kind, boolean, integer, real, text,
// length, problem}; `length` also for containers value() does not size (a
// deque).  Defined in python/bind_pylocks.cpp.
pybind11::dict value_dict(cpython::PyObjects& objects, Addr address);

}  // namespace pyhang::bindings
