// The record tables' registry and their calls (python/records.hpp).
#include "records.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include <pybind11/stl.h>

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

std::vector<const RecordTableBase*>& registry() {
  static std::vector<const RecordTableBase*> tables;
  return tables;
}

}  // namespace

const std::vector<const RecordTableBase*>& record_tables() { return registry(); }

RecordTableBase::RecordTableBase(const char* module, const char* name, std::vector<const char*> names)
    : module_(module), name_(name), names_(std::move(names)) {
  if (names_.size() > kMaxRecordFields) throw std::length_error(std::string("record table ") + name + ": too many fields");
  registry().push_back(this);
}

PyObject* RecordTableBase::cls() const {
  if (cls_ != nullptr) return cls_;
  py::object cls = py::module_::import(module_).attr(name_);
  if (!py::hasattr(cls, "__record_fields__"))
    throw py::type_error(std::string("native record table ") + name_ + ": " + module_ + "." + name_ +
                         " is not a record");
  auto fields = cls.attr("__record_fields__").cast<std::vector<std::string>>();
  std::string stray;
  for (const char* n : names_)
    if (std::find(fields.begin(), fields.end(), n) == fields.end()) stray += std::string(stray.empty() ? "" : ", ") + n;
  if (!stray.empty())
    throw py::type_error(std::string("native record table ") + name_ + " fills " + stray + ", which " + module_ +
                         "." + name_ + " has no field of");
  cls_ = cls.release().ptr();
  return cls_;
}

PyObject* RecordTableBase::kwnames() const {
  if (kwnames_ != nullptr) return kwnames_;
  py::tuple t(names_.size());
  for (std::size_t i = 0; i < names_.size(); ++i) {
    PyObject* s = PyUnicode_InternFromString(names_[i]);
    if (s == nullptr) throw py::error_already_set();
    t[i] = py::reinterpret_steal<py::object>(s);
  }
  kwnames_ = t.release().ptr();
  return kwnames_;
}

py::object RecordTableBase::call(PyObject* const* values) const {
  PyObject* result = nullptr;
  try {
    result = PyObject_Vectorcall(cls(), values, 0, kwnames());
  } catch (...) {
    for (std::size_t i = 0; i < names_.size(); ++i) Py_DECREF(values[i]);
    throw;
  }
  for (std::size_t i = 0; i < names_.size(); ++i) Py_DECREF(values[i]);
  if (result == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

py::object shared_str(std::string_view s) {
  // At most kShared strs of at most kSharedLength bytes are kept (never freed: under a MiB); past the bound a str
  // is made as it would be without the table.
  constexpr std::size_t kShared = 8192, kSharedLength = 96;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  static std::unordered_map<std::string, PyObject*, Hash, std::equal_to<>> made;
  auto fresh = [&] {
    PyObject* o = PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
    if (o == nullptr) throw py::error_already_set();
    return o;
  };
  if (s.size() > kSharedLength) return py::reinterpret_steal<py::object>(fresh());
  if (auto it = made.find(s); it != made.end()) return py::reinterpret_borrow<py::object>(it->second);
  PyObject* o = fresh();
  if (made.size() < kShared) {
    made.emplace(std::string(s), o);
    return py::reinterpret_borrow<py::object>(o);   // (the table keeps its own reference)
  }
  return py::reinterpret_steal<py::object>(o);
}

void register_records(py::module_& m) {
  m.def(
      "record_tables",
      [] {
        py::list out;
        for (const RecordTableBase* t : record_tables()) {
          py::list names;
          for (const char* n : t->names()) names.append(n);
          out.append(py::make_tuple(t->module(), t->name(), names));
        }
        return out;
      },
      "Every native record table: (module, record class, [the fields it fills]).");
  m.def(
      "check_records",
      [] {
        for (const RecordTableBase* t : record_tables()) t->cls();
      },
      "Imports every native record table's class and checks that each field it fills is one of the record's "
      "(raises TypeError naming the table and the field otherwise).");
}

}  // namespace pyhang::bindings
