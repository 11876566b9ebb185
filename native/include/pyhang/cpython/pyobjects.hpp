// Reading Python objects of the target: what a value is (None, bool, int,
// float, str, bytes, list, tuple, dict, set, module, other), container
// sizes, dict entries, instance and module attributes, and sys.modules of
// the main interpreter — for any decoder that needs to look at program
// state (Python locks' Conditions, fork hazards: multiprocessing's start
// method, torch.cuda's flags, large containers).
//
// Layouts: the generated tables (cpython_layouts*.{hpp,cpp}) and the hand
// table of native/src/cpython/layouts/objects.hpp (dict keys before 3.11, managed
// dicts).  Nothing dereferences a target pointer without a bound: every
// object is checked (plausible address, its type read through ob_type,
// sizes capped by ObjectLimits), and garbage gives nullopt / 0 with a
// problem (a ReadProblem: what could not be read, and why), never a crash
// or an exception.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/unread.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

struct ObjectLimits {
  std::size_t max_string = 4096;        // characters of one str read
  std::size_t max_entries = 1 << 16;    // dict entries / sequence items read at most
  std::int64_t max_length = 1LL << 40;  // a len() beyond this is garbage
};

// What a Python value is, by its type (subclasses of the built-in types
// count as those).
enum class ValueKind : std::uint8_t {
  Unreadable, None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Set, Frozenset, Module,
  Object,  // anything else
};

inline constexpr std::array<Named<ValueKind>, 14> kValueKindNames{{
    {ValueKind::Unreadable, "unreadable"},
    {ValueKind::None, "none"},
    {ValueKind::Bool, "bool"},
    {ValueKind::Int, "int"},
    {ValueKind::Float, "float"},
    {ValueKind::Str, "str"},
    {ValueKind::Bytes, "bytes"},
    {ValueKind::List, "list"},
    {ValueKind::Tuple, "tuple"},
    {ValueKind::Dict, "dict"},
    {ValueKind::Set, "set"},
    {ValueKind::Frozenset, "frozenset"},
    {ValueKind::Module, "module"},
    {ValueKind::Object, "object"},
}};
constexpr std::string_view to_string(ValueKind k) { return name_in(kValueKindNames, k); }
constexpr std::optional<ValueKind> parse_value_kind(std::string_view s) { return parse_in(kValueKindNames, s); }

struct PyValue {
  Addr address = 0;
  std::string type;  // tp_name; empty when unreadable
  ValueKind kind = ValueKind::Unreadable;
  std::optional<bool> boolean;
  std::optional<std::int64_t> integer;   // int (when it fits 64 bits) and bool
  std::optional<double> real;            // float
  std::optional<std::string> text;       // str (at most ObjectLimits::max_string characters)
  std::optional<std::int64_t> length;    // len() of str, bytes, list, tuple, dict, set, frozenset
  ReadProblem problem;                   // why a part could not be read; empty when all is well
};

class PyObjects {
 public:
  // For the interpreter `state` describes (cpython::inspect or
  // inspect_memory): its version picks the layouts, its threads give the
  // main interpreter (for sys.modules).  ok() is false when pyhang has no
  // layout for that version.
  PyObjects(MemoryReader& memory, const PythonState& state, const ObjectLimits& limits = {});
  ~PyObjects();
  PyObjects(const PyObjects&) = delete;
  PyObjects& operator=(const PyObjects&) = delete;

  bool ok() const;
  const ReadProblem& problem() const;  // why !ok()

  std::optional<std::string> type_name(Addr obj);
  // tp_flags of obj's type.
  std::optional<std::uint64_t> type_flags(Addr obj);
  // tp_basicsize of obj's type.
  std::optional<std::int64_t> basic_size(Addr obj);
  PyValue value(Addr obj);

  std::optional<std::string> str(Addr obj, ReadProblem* problem = nullptr);
  // The first max_chars characters of a str of any length; *length is its len().
  std::optional<std::string> str_prefix(Addr obj, std::size_t max_chars, std::int64_t* length,
                                        ReadProblem* problem = nullptr);
  // The first max bytes of a bytes object; *length is its len().
  std::optional<std::vector<std::uint8_t>> bytes_prefix(Addr obj, std::size_t max, std::int64_t* length,
                                                        ReadProblem* problem = nullptr);
  std::optional<std::int64_t> integer(Addr obj, ReadProblem* problem = nullptr);  // int and bool
  // An int (or bool) of any size in decimal, when it has at most max_digits
  // internal digits (PyLong_SHIFT bits each); nullopt beyond, with *problem saying how many.
  std::optional<std::string> int_decimal(Addr obj, std::size_t max_digits, ReadProblem* problem = nullptr);
  std::optional<double> real(Addr obj, ReadProblem* problem = nullptr);
  // len() of str, bytes, list, tuple, dict, set, frozenset (and subclasses), collections.deque.
  std::optional<std::int64_t> length(Addr obj, ReadProblem* problem = nullptr);

  // A dict's (key, value) pairs, combined or split table, at most `max`.
  std::vector<std::pair<Addr, Addr>> dict_items(Addr dict, std::size_t max, ReadProblem* problem = nullptr);
  // The value under the str key `key`, or 0.
  Addr dict_get(Addr dict, std::string_view key, ReadProblem* problem = nullptr);
  // The items of a list or tuple, at most `max`.
  std::vector<Addr> sequence_items(Addr obj, std::size_t max, ReadProblem* problem = nullptr);
  // The members of a set or frozenset (its hash table's live keys), at most `max`.
  std::vector<Addr> set_items(Addr obj, std::size_t max, ReadProblem* problem = nullptr);

  // obj.__dict__[name]: instance dict at tp_dictoffset (modules too), or a
  // managed dict / inline values (3.11+); 0 when absent or unreadable.
  Addr attribute(Addr obj, std::string_view name, ReadProblem* problem = nullptr);
  // Every (name, value) of obj's attributes, as attribute() finds them, at most `max`.
  std::vector<std::pair<Addr, Addr>> attributes(Addr obj, std::size_t max, ReadProblem* problem = nullptr);
  // The same for showing an instance: nullopt when its class gives it no
  // __dict__ (no tp_dictoffset, no managed dict: a class with __slots__ or
  // a built-in type); empty when it has no attributes yet, or with *problem
  // when they cannot be read.
  std::optional<std::vector<std::pair<Addr, Addr>>> instance_attributes(Addr obj, std::size_t max,
                                                                        ReadProblem* problem = nullptr);
  // The __slots__ that are set on obj, as (name, value): the object members
  // (T_OBJECT_EX) its class and their heap-type bases declare, bases first,
  // at most `max`.
  std::vector<std::pair<std::string, Addr>> slots(Addr obj, std::size_t max, ReadProblem* problem = nullptr);

  // The dict object holding obj's attributes when there is one (a module's
  // globals, an instance dict at tp_dictoffset, a materialised managed
  // dict); 0 when the attributes live in inline values or nowhere.
  Addr instance_dict(Addr obj, ReadProblem* problem = nullptr);

  // sys.modules of the main interpreter (interp->modules), 0 when unknown.
  Addr sys_modules(ReadProblem* problem = nullptr);
  // sys.modules[name], 0 when not imported (problem says so).
  Addr module(std::string_view name, ReadProblem* problem = nullptr);
  // sys.modules[module].name, 0 when absent.
  Addr module_attribute(std::string_view module, std::string_view name, ReadProblem* problem = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pyhang::cpython
