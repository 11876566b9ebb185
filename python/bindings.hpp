// Each part of the native library registers its own functions and types on
// the one extension module, `_pyhang_native`.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/base/shared_text.hpp"
#include "pyhang/target/core_file.hpp"

namespace pyhang::cpython {
class PyObjects;
struct PyFrame;
struct PyValue;
struct ReadProblem;
struct StateWarning;
}
namespace pyhang::nptl {
struct DescriptorsIssue;
}

// A shared string (a frame's function and file names) crosses as a str.
namespace pybind11::detail {
template <>
struct type_caster<pyhang::SharedText> {
  PYBIND11_TYPE_CASTER(pyhang::SharedText, const_name("str"));
  bool load(handle src, bool) {
    if (!PyUnicode_Check(src.ptr())) return false;
    value = pyhang::SharedText(src.cast<std::string>());
    return true;
  }
  static handle cast(const pyhang::SharedText& s, return_value_policy, handle) {
    return PyUnicode_FromStringAndSize(s.str().data(), static_cast<Py_ssize_t>(s.size()));
  }
};
}  // namespace pybind11::detail

namespace pyhang::bindings {

void register_target(pybind11::module_& m);   // python/bind_target.cpp
void register_cpython(pybind11::module_& m);  // python/bind_cpython.cpp
void register_locks(pybind11::module_& m);    // python/bind_locks.cpp
void register_pylocks(pybind11::module_& m);  // python/bind_pylocks.cpp
void register_fork(pybind11::module_& m);       // python/bind_fork.cpp
void register_unwind(pybind11::module_& m);     // python/bind_unwind.cpp
void register_syscall_args(pybind11::module_& m);  // python/bind_syscalls.cpp
void register_values(pybind11::module_& m);     // python/bind_values.cpp
void register_asyncio(pybind11::module_& m);    // python/bind_asyncio.cpp
void register_parked(pybind11::module_& m);     // python/bind_parked.cpp
void register_stop(pybind11::module_& m);       // python/bind_stop.cpp
void register_records(pybind11::module_& m);    // python/records.cpp

// The Python str of a key literal, made once and interned: `d[key("kind")] = v`
// fills a dict without making its key again for every dict (thousands of
// threads, a dozen keys each), and the analysis's own literals find it by
// identity.  Keyed by the literal's address; never freed.
inline pybind11::handle key(const char* literal) {
  static std::unordered_map<const char*, PyObject*> made;
  PyObject*& k = made[literal];
  if (k == nullptr) {
    k = PyUnicode_InternFromString(literal);
    if (k == nullptr) throw pybind11::error_already_set();
  }
  return k;
}

// None for address 0 (no object), else the address.
inline pybind11::object addr(Addr a) { return a ? pybind11::cast(a) : pybind11::none(); }

// None for an empty string, else the str.
inline pybind11::object text(std::string_view s) {
  return s.empty() ? pybind11::object(pybind11::none()) : pybind11::str(s.data(), s.size());
}

// None for an empty optional, else the value.
template <class T>
pybind11::object opt(const std::optional<T>& v) {
  return v ? pybind11::cast(*v) : pybind11::none();
}

// The Python value at `address`, decoded, as a model.python_values.ObjectValue
// record; its `length` also for containers value() does not size (a deque).
// Defined in python/bind_pylocks.cpp, as is the one of a PyValue already
// made (none found: kind unreadable, and why).
pybind11::object object_value(cpython::PyObjects& objects, Addr address);
pybind11::object object_value(const cpython::PyValue& value);

// What a CPython reader could not read (a model.unread.ReadProblem), or None when all was read.  Defined in
// python/bind_cpython.cpp.
pybind11::object read_problem(const cpython::ReadProblem& problem);
// Python frames as [model.waits.CodeLine] (function, file, line of each).  Defined in python/bind_pylocks.cpp.
pybind11::object code_lines(const std::vector<cpython::PyFrame>& frames);

// An interpreter warning (cpython::StateWarning) as its record, a model.warning_facts.StateIssue.  Defined in
// python/bind_cpython.cpp.
pybind11::object state_warning(const cpython::StateWarning& w);

// Why pthread_t cannot be mapped to TIDs (a model.waits.DescriptorsIssue), or None.  Defined in
// python/bind_locks.cpp.
pybind11::object descriptors_issue(const nptl::DescriptorsIssue& issue);

// A Python identifier for a name of a name table: "py-lock" -> "PY_LOCK",
// "" -> "NONE".
inline std::string enum_identifier(std::string_view name) {
  if (name.empty()) return "NONE";
  std::string id;
  for (char c : name) id += c == '-' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return id;
}

// An enum as a Python enum (py::enum_) with one member per entry of its name
// table; `.text` is the string the dicts carry for that member.
template <class E, std::size_t N>
void bind_enum(pybind11::module_& m, const char* name, const std::array<Named<E>, N>& table, const char* doc) {
  pybind11::enum_<E> e(m, name, doc);
  for (const auto& n : table) e.value(enum_identifier(n.name).c_str(), n.value);
  e.def_property_readonly("text", [](E v) { return std::string(to_string(v)); });
}

}  // namespace pyhang::bindings
