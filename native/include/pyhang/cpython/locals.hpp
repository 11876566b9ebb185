// The local variables of one Python frame, read from target memory: the
// fast locals (arguments and locals), cell and free variables (through
// their cell), and the entries of the frame's f_locals dict where it has one
// (module and class bodies, exec), with the frame's globals and builtins.
//
// Where the names and values are, per frame model (layout.hpp FrameModel):
//  - <= 3.10, PyFrameObject: f_localsplus[] holds co_varnames' values
//    (co_nlocals of them), then one cell per co_cellvars name, then one per
//    co_freevars name.  An argument that is also a cell has its slot
//    cleared and lives in its cell (ceval.c, "Clear the local copy").
//  - 3.11+, _PyInterpreterFrame: localsplus[] holds one slot per
//    co_localsplusnames name, co_localspluskinds saying whether it is a
//    plain local (CO_FAST_LOCAL), a cell (CO_FAST_CELL) or a free variable
//    (CO_FAST_FREE).  A cell slot holds its cell once MAKE_CELL ran, the
//    raw value before: a slot's object is dereferenced only when its type
//    is `cell`.
// Arguments are the first co_argcount + co_kwonlyargcount names, then *args
// and **kwargs when CO_VARARGS / CO_VARKEYWORDS are set.  Unbound slots
// (NULL, an empty cell) are left out, as Python's locals() does.
//
// Bounded: at most LocalsLimits::names names and f_locals entries;
// garbage gives fewer locals and a problem (a ReadProblem), never an exception.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

enum class LocalKind : std::uint8_t {
  Argument,  // a parameter (positional, keyword-only, *args, **kwargs)
  Local,     // a local variable
  Cell,      // a local a nested function captures (read through its cell)
  Free,      // a variable of an enclosing function (read through its cell)
  Dict,      // an entry of the frame's f_locals dict (module level, class bodies)
};

inline constexpr std::array<Named<LocalKind>, 5> kLocalKindNames{{
    {LocalKind::Argument, "argument"},
    {LocalKind::Local, "local"},
    {LocalKind::Cell, "cell"},
    {LocalKind::Free, "free"},
    {LocalKind::Dict, "f_locals"},
}};
constexpr std::string_view to_string(LocalKind k) { return name_in(kLocalKindNames, k); }
constexpr std::optional<LocalKind> parse_local_kind(std::string_view s) { return parse_in(kLocalKindNames, s); }

struct FrameLocal {
  std::string name;
  LocalKind kind = LocalKind::Local;
  Addr value = 0;  // the object (for cells and free variables, the cell's contents)
};

struct FrameLocals {
  std::vector<FrameLocal> locals;  // fast locals in slot order, then f_locals entries
  Addr f_locals = 0;               // the frame's f_locals dict, 0 when it has none
  Addr globals = 0;                // f_globals
  Addr builtins = 0;               // f_builtins
  ReadProblem problem;             // what could not be read; empty when all is well
};

struct LocalsLimits {
  std::size_t names = 512;  // fast-local names and f_locals entries read at most
};

// `frame` is a frame of `state` (PyFrame::frame and ::code).
FrameLocals frame_locals(MemoryReader& memory, const PythonState& state, const PyFrame& frame,
                         const LocalsLimits& limits = {});

}  // namespace pyhang::cpython
