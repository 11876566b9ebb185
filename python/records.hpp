// Native results bound as the Python records that model them.
//
// A fact the native library finds (a glibc lock, a Python thread's frame, a
// fork hazard) crosses into Python as an instance of its record class in
// pyhang.model, made here: no dict in between, and no second spelling of its
// keys.  Each result struct has one table, next to the binding that returns
// it, naming the record class and, for each field the native side fills, the
// member it comes from:
//
//   PYHANG_RECORD(glibc::LockIssue, "pyhang.model.waits", "LockIssue",
//                 PYHANG_FIELD(kind), PYHANG_FIELD(fatal), PYHANG_FIELD(value), PYHANG_FIELD(other));
//
// PYHANG_FIELD(member) is the field named as the C++ member is, its value
// converted by to_py (below); PYHANG_FIELD_AS("name", expression of `v`, the
// struct) is one the record names otherwise or that is computed.  A record
// field the table leaves out takes the record's default (one the Python side
// fills in later: a lock's ELF symbol).
//
// The record is made by calling its class with the table's fields as keyword
// arguments, so its own __init__ (and __post_init__) runs as for any record.
// The first time a table is used it imports its class and checks that every
// name it fills is one of the record's fields: a table and a record that
// disagree fail every run, at once, naming both (and `check_records()`, which
// python/tests/test_native_records.py calls, checks every table without
// making a record).
//
// to_py: bool, integers and floats as themselves; strings as str;
// std::optional as None or its value; vectors as lists; an enum with a name
// table as the table's name (the string the JSON contract and model.kinds
// spell; made once per value and interned); a struct with a table as its
// record; a py::object as it is.
#pragma once

#include <pybind11/pybind11.h>

#include "pyhang/base/shared_text.hpp"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pyhang::bindings {

template <class T>
struct Record;  // specialised by PYHANG_RECORD; a type without one is not a record

// Most fields a table may fill (a record is made from one array of them).
inline constexpr std::size_t kMaxRecordFields = 64;

// One field of a record table: its name in the record, and how its value is made from the struct.
template <class T>
struct FieldOf {
  const char* name;
  pybind11::object (*get)(const T&);
};

// What every table has, whatever its struct: the registry check_records() walks.
class RecordTableBase {
 public:
  RecordTableBase(const char* module, const char* name, std::vector<const char*> names);
  RecordTableBase(const RecordTableBase&) = delete;
  RecordTableBase& operator=(const RecordTableBase&) = delete;
  const char* module() const { return module_; }
  const char* name() const { return name_; }
  const std::vector<const char*>& names() const { return names_; }
  // The record class, imported and checked against the table the first time (throws a TypeError naming
  // the table and the record when a name the table fills is not one of the record's fields).
  PyObject* cls() const;
  // The field names as the tuple a keyword call takes (interned, made once).
  PyObject* kwnames() const;

 protected:
  // Calls the record class with `values` (one per name, owned references, released here).
  pybind11::object call(PyObject* const* values) const;

 private:
  const char* module_;
  const char* name_;
  std::vector<const char*> names_;
  mutable PyObject* cls_ = nullptr;
  mutable PyObject* kwnames_ = nullptr;
};

// Every table the module holds, in the order they were made (at load).
const std::vector<const RecordTableBase*>& record_tables();

template <class T>
class RecordTable : public RecordTableBase {
 public:
  RecordTable(const char* module, const char* name, std::initializer_list<FieldOf<T>> fields)
      : RecordTableBase(module, name, names_of(fields)), fields_(fields) {}
  pybind11::object make(const T& v) const;

 private:
  static std::vector<const char*> names_of(std::initializer_list<FieldOf<T>> fields) {
    std::vector<const char*> out;
    for (const auto& f : fields) out.push_back(f.name);
    return out;
  }
  std::vector<FieldOf<T>> fields_;
};

// ---- to_py: a native value as the Python value a record field holds ----

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  { to_string(e) } -> std::convertible_to<std::string_view>;
};
template <class T>
concept HasRecord = requires { Record<T>::table(); };

inline pybind11::object to_py(const pybind11::object& o) { return o; }
inline pybind11::object to_py(bool b) { return pybind11::bool_(b); }
template <class I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
pybind11::object to_py(I i) {
  return pybind11::int_(i);
}
inline pybind11::object to_py(double d) { return pybind11::float_(d); }
// A str as a record field holds it: a short one made once and shared (a type's name, a lock's layout, a
// frame's file: a thousand threads' records repeat a few dozen), any other made each time.
pybind11::object shared_str(std::string_view s);
inline pybind11::object to_py(const std::string& s) { return shared_str(s); }
inline pybind11::object to_py(std::string_view s) { return shared_str(s); }
inline pybind11::object to_py(const char* s) { return shared_str(s); }
inline pybind11::object to_py(const SharedText& s) { return shared_str(s.str()); }
template <NamedEnum E>
pybind11::object to_py(E e);
template <HasRecord T>
pybind11::object to_py(const T& v);
template <class T>
pybind11::object to_py(const std::optional<T>& v);
template <class T>
pybind11::object to_py(const std::vector<T>& v);

// The enum's name, made once per value (and interned: the analysis's literals compare by identity first).
template <NamedEnum E>
pybind11::object to_py(E e) {
  static std::unordered_map<std::underlying_type_t<E>, PyObject*> made;
  PyObject*& s = made[static_cast<std::underlying_type_t<E>>(e)];
  if (s == nullptr) {
    std::string_view name = to_string(e);
    s = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
    if (s == nullptr) throw pybind11::error_already_set();
    PyUnicode_InternInPlace(&s);
  }
  return pybind11::reinterpret_borrow<pybind11::object>(s);
}

template <HasRecord T>
pybind11::object to_py(const T& v) {
  return Record<T>::table().make(v);
}

template <class T>
pybind11::object to_py(const std::optional<T>& v) {
  return v ? to_py(*v) : pybind11::none();
}

template <class T>
pybind11::object to_py(const std::vector<T>& v) {
  pybind11::list out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_py(v[i]);
  return std::move(out);
}

// An enum's name, or None for the value that means "none" (a wait that is not one: WaitKind::None).
template <NamedEnum E>
pybind11::object name_or_none(E e, E none) {
  return e == none ? pybind11::none() : to_py(e);
}

// [(name, value)] as {name: value} (a lock's raw fields).
template <class V>
pybind11::object as_dict(const std::vector<std::pair<std::string, V>>& pairs) {
  pybind11::dict out;
  for (const auto& [k, value] : pairs) out[pybind11::str(k)] = to_py(value);
  return std::move(out);
}

template <class T>
pybind11::object RecordTable<T>::make(const T& v) const {
  PyObject* values[kMaxRecordFields];   // (the table's constructor refused more)
  std::size_t n = 0;
  try {
    for (; n < fields_.size(); ++n) values[n] = fields_[n].get(v).release().ptr();
  } catch (...) {
    for (std::size_t i = 0; i < n; ++i) Py_DECREF(values[i]);
    throw;
  }
  return call(values);
}

#define PYHANG_RECORD_CAT2(a, b) a##b
#define PYHANG_RECORD_CAT(a, b) PYHANG_RECORD_CAT2(a, b)

// The table of `Type`: its record `name` in Python module `module`, then its fields (PYHANG_FIELD,
// PYHANG_FIELD_AS).  At namespace pyhang::bindings scope; made when the module loads.
#define PYHANG_RECORD(Type, module, name, ...)                                                  \
  template <>                                                                                   \
  struct Record<Type> {                                                                         \
    using Self = Type;                                                                          \
    static const RecordTable<Type>& table() {                                                   \
      static const RecordTable<Type> t(module, name, {__VA_ARGS__});                            \
      return t;                                                                                 \
    }                                                                                           \
  };                                                                                            \
  namespace {                                                                                   \
  [[maybe_unused]] const bool PYHANG_RECORD_CAT(kRecordTable, __COUNTER__) = (Record<Type>::table(), true); \
  }

// A field named as the struct's member, its value the member's (to_py).
#define PYHANG_FIELD(member) \
  FieldOf<Self> { #member, [](const Self& v) { return ::pyhang::bindings::to_py(v.member); } }
// A field named `name`, its value `expression` (of `v`, the struct).
#define PYHANG_FIELD_AS(name, expression) \
  FieldOf<Self> { name, [](const Self& v) { return ::pyhang::bindings::to_py(expression); } }

}  // namespace pyhang::bindings
