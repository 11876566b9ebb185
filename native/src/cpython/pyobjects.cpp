// Python values of the target (see pyhang/cpython/pyobjects.hpp): kinds from the
// type's tp_flags subclass bits and tp_name, numbers, strings and bytes, and
// the value of any object; containers and names are in pyobjects_containers.cpp.

#include "cpython/pyobjects_impl.hpp"

namespace pyhang::cpython {

PyObjects::PyObjects(MemoryReader& memory, const PythonState& state, const ObjectLimits& limits)
    : impl_(std::make_unique<Impl>(memory, state, limits)) {}
PyObjects::~PyObjects() = default;

bool PyObjects::ok() const { return impl_->objects.has_value(); }
const ReadProblem& PyObjects::problem() const { return impl_->problem; }

std::optional<std::string> PyObjects::type_name(Addr obj) {
  if (!ok()) return std::nullopt;
  return impl_->objects->type_name(obj);
}

std::optional<std::uint64_t> PyObjects::type_flags(Addr obj) {
  if (!ok()) return std::nullopt;
  return impl_->objects->type_flags(obj);
}

std::optional<std::int64_t> PyObjects::basic_size(Addr obj) {
  if (!ok() || !plausible_pointer(obj)) return std::nullopt;
  auto type = impl_->mem.read_pointer(obj + impl_->layout.object_ob_type);
  if (!type || !plausible_pointer(*type)) return std::nullopt;
  auto n = impl_->mem.read_value<std::int64_t>(*type + impl_->layout.type_basicsize);
  if (!n || *n <= 0 || *n > (1 << 20)) return std::nullopt;
  return n;
}

std::optional<std::string> PyObjects::str(Addr obj, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return std::nullopt;
  }
  return impl_->objects->read_str(obj, problem);
}

std::optional<std::string> PyObjects::str_prefix(Addr obj, std::size_t max_chars, std::int64_t* length,
                                                 ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return std::nullopt;
  }
  return impl_->objects->read_str_prefix(obj, max_chars, length, problem);
}

std::optional<std::vector<std::uint8_t>> PyObjects::bytes_prefix(Addr obj, std::size_t max, std::int64_t* length,
                                                                 ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return std::nullopt;
  }
  return impl_->objects->read_bytes_prefix(obj, max, length, problem);
}

std::optional<std::string> PyObjects::int_decimal(Addr obj, std::size_t max_digits, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return std::nullopt;
  }
  return impl_->int_decimal(obj, max_digits, problem);
}

std::optional<std::int64_t> PyObjects::integer(Addr obj, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return std::nullopt;
  }
  return impl_->integer(obj, problem);
}

std::optional<double> PyObjects::real(Addr obj, ReadProblem* problem) {
  if (!ok() || !plausible_pointer(obj)) {
    set(problem, ok() ? unread(ReadPart::Float, obj, ReadWhy::Implausible) : impl_->problem);
    return std::nullopt;
  }
  auto name = impl_->objects->type_name(obj);
  if (!name || *name != "float") {
    set(problem, unread(ReadPart::Float, obj, ReadWhy::NotA));
    return std::nullopt;
  }
  auto v = impl_->mem.read_value<double>(obj + impl_->layout.float_ob_fval);
  if (!v) set(problem, unread(ReadPart::Float, obj));
  return v;
}

std::optional<std::int64_t> PyObjects::length(Addr obj, ReadProblem* problem) {
  if (!ok() || !plausible_pointer(obj)) {
    set(problem, ok() ? unread(ReadPart::Object, obj, ReadWhy::Implausible) : impl_->problem);
    return std::nullopt;
  }
  return impl_->length(obj, problem);
}

PyValue PyObjects::value(Addr obj) {
  PyValue v;
  v.address = obj;
  if (!ok()) {
    v.problem = impl_->problem;
    return v;
  }
  if (!plausible_pointer(obj)) {
    v.problem = unread(ReadPart::Object, obj, ReadWhy::Implausible);
    return v;
  }
  const Layout& l = impl_->layout;
  auto name = impl_->objects->type_name(obj);
  auto flags = impl_->objects->type_flags(obj);
  if (!name || !flags) {
    v.problem = unread(ReadPart::Type, obj);
    return v;
  }
  v.type = *name;
  ReadProblem why;
  if (*name == "NoneType") {
    v.kind = ValueKind::None;
  } else if (*name == "bool") {
    v.kind = ValueKind::Bool;
    v.integer = impl_->integer(obj, &why);
    if (v.integer) v.boolean = *v.integer != 0;
  } else if (flag(flags, l.tpflags_long_subclass)) {
    v.kind = ValueKind::Int;
    v.integer = impl_->integer(obj, &why);
  } else if (*name == "float") {
    v.kind = ValueKind::Float;
    v.real = real(obj, &why);
  } else if (flag(flags, l.tpflags_unicode_subclass)) {
    v.kind = ValueKind::Str;
    v.text = impl_->objects->read_str(obj, &why);
    v.length = impl_->length(obj, nullptr);
  } else if (flag(flags, l.tpflags_bytes_subclass)) {
    v.kind = ValueKind::Bytes;
    v.length = impl_->length(obj, &why);
  } else if (flag(flags, l.tpflags_list_subclass)) {
    v.kind = ValueKind::List;
    v.length = impl_->length(obj, &why);
  } else if (flag(flags, l.tpflags_tuple_subclass)) {
    v.kind = ValueKind::Tuple;
    v.length = impl_->length(obj, &why);
  } else if (flag(flags, l.tpflags_dict_subclass)) {
    v.kind = ValueKind::Dict;
    v.length = impl_->length(obj, &why);
  } else if (*name == "set" || *name == "frozenset") {
    v.kind = *name == "set" ? ValueKind::Set : ValueKind::Frozenset;
    v.length = impl_->length(obj, &why);
  } else if (*name == "module") {
    v.kind = ValueKind::Module;
  } else {
    v.kind = ValueKind::Object;
  }
  v.problem = why;
  return v;
}

}  // namespace pyhang::cpython
