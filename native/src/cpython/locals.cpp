// Locals of one Python frame (pyhang/cpython/locals.hpp): names from the
// code object, values from the frame's slots, cells dereferenced, then the
// f_locals dict's entries not already found.
#include "pyhang/cpython/locals.hpp"

#include <algorithm>
#include <unordered_set>

#include "cpython/internal.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::cpython {

namespace {

using detail::plausible_pointer;
using detail::RemoteStruct;
using detail::span_of;

struct Slot {
  std::string name;
  LocalKind kind;
  std::size_t index;  // into the frame's localsplus
};

void note(FrameLocals& out, ReadProblem why) { cpython::note(out.problem, std::move(why)); }

// The names of a tuple of str (co_varnames, co_localsplusnames, ...) of the code object at `code`.
std::vector<std::string> names_of(PyObjects& objects, Addr code, Addr tuple, std::size_t max, FrameLocals& out,
                                  const char* what) {
  std::vector<std::string> names;
  if (!tuple) return names;
  ReadProblem why;
  auto in_code = [&] { return std::move(why.within(ReadPart::Field, 0, what).within(ReadPart::Code, code)); };
  for (Addr a : objects.sequence_items(tuple, max, &why)) {
    auto s = objects.str(a, &why);
    if (!s) {
      note(out, in_code());
      break;
    }
    names.push_back(std::move(*s));
  }
  if (!why.empty() && names.empty()) note(out, in_code());
  return names;
}

}  // namespace

FrameLocals frame_locals(MemoryReader& mem, const PythonState& state, const PyFrame& frame,
                         const LocalsLimits& limits) {
  FrameLocals out;
  PyObjects objects(mem, state);
  auto layout = detail::layout_of(mem, state);
  const ObjectLayout* ol = object_layout_for(state.major, state.minor);
  if (!objects.ok() || !layout || !ol) {
    if (objects.ok()) {
      out.problem.why = ReadWhy::NoLayout;
      out.problem.name = state.version;
    } else {
      out.problem = objects.problem();
    }
    return out;
  }
  const Layout& l = *layout;
  if (!plausible_pointer(frame.frame) || !plausible_pointer(frame.code)) {
    out.problem = unread(ReadPart::Code, frame.code).within(ReadPart::Frame, frame.frame);
    return out;
  }
  RemoteStruct code;
  if (!code.load(mem, frame.code,
                 span_of({l.code_argcount, l.code_posonlyargcount, l.code_kwonlyargcount, l.code_flags,
                          l.code_nlocals, l.code_varnames, l.code_cellvars, l.code_freevars,
                          l.code_localsplusnames, l.code_localspluskinds}))) {
    out.problem = unread(ReadPart::Code, frame.code);
    return out;
  }
  // co_argcount counts positional-only parameters too (3.8+).
  std::int64_t nargs = std::int64_t{code.get<std::int32_t>(l.code_argcount).value_or(0)} +
                       code.get<std::int32_t>(l.code_kwonlyargcount).value_or(0);
  auto flags = code.get<std::int32_t>(l.code_flags).value_or(0);
  if (l.co_varargs > 0 && (flags & l.co_varargs)) ++nargs;
  if (l.co_varkeywords > 0 && (flags & l.co_varkeywords)) ++nargs;
  if (nargs < 0 || nargs > 65535) {
    note(out, unread_named(ReadPart::Code, frame.code, ReadWhy::Implausible, "co_argcount", nargs));
    nargs = 0;
  }

  std::vector<Slot> slots;
  Addr base = 0, frame_dicts = 0;
  std::int64_t f_locals_off = -1, f_globals_off = -1, f_builtins_off = -1;
  switch (l.frame_model) {
    case FrameModel::FrameObject: {
      auto varnames = names_of(objects, frame.code, code.ptr(l.code_varnames), limits.names, out, "co_varnames");
      auto cellvars = names_of(objects, frame.code, code.ptr(l.code_cellvars), limits.names, out, "co_cellvars");
      auto freevars = names_of(objects, frame.code, code.ptr(l.code_freevars), limits.names, out, "co_freevars");
      auto nlocals = code.get<std::int32_t>(l.code_nlocals).value_or(-1);
      if (nlocals < 0 || static_cast<std::size_t>(nlocals) != varnames.size()) {
        note(out, unread_named(ReadPart::Code, frame.code, ReadWhy::Implausible, "co_nlocals", nlocals));
        nlocals = static_cast<std::int32_t>(varnames.size());
      }
      std::unordered_set<std::string> args;
      for (std::size_t i = 0; i < varnames.size(); ++i) {
        bool arg = static_cast<std::int64_t>(i) < nargs;
        if (arg) args.insert(varnames[i]);
        slots.push_back({varnames[i], arg ? LocalKind::Argument : LocalKind::Local, i});
      }
      // An argument that is also a cell lives in its cell: the cell keeps the argument's kind.
      for (std::size_t i = 0; i < cellvars.size(); ++i)
        slots.push_back({cellvars[i], args.count(cellvars[i]) ? LocalKind::Argument : LocalKind::Cell,
                         static_cast<std::size_t>(nlocals) + i});
      for (std::size_t i = 0; i < freevars.size(); ++i)
        slots.push_back({freevars[i], LocalKind::Free, static_cast<std::size_t>(nlocals) + cellvars.size() + i});
      base = frame.frame + static_cast<Addr>(l.frame_localsplus);
      frame_dicts = frame.frame;
      f_locals_off = l.frame_f_locals;
      f_globals_off = l.frame_f_globals;
      f_builtins_off = l.frame_f_builtins;
      break;
    }
    case FrameModel::InterpreterFrame: {
      auto names = names_of(objects, frame.code, code.ptr(l.code_localsplusnames), limits.names, out, "co_localsplusnames");
      std::int64_t nkinds = 0;
      ReadProblem why;
      auto kinds = objects.bytes_prefix(code.ptr(l.code_localspluskinds), names.size(), &nkinds, &why);
      if (!kinds || kinds->size() < names.size()) {
        note(out, why.empty() ? unread_field(ReadPart::Code, frame.code, "co_localspluskinds")
                              : why.within(ReadPart::Field, 0, "co_localspluskinds").within(ReadPart::Code, frame.code));
        names.resize(kinds ? kinds->size() : 0);
      }
      for (std::size_t i = 0; i < names.size(); ++i) {
        std::uint8_t k = (*kinds)[i];
        if (l.co_fast_hidden > 0 && (k & l.co_fast_hidden)) continue;  // not a variable of this scope
        LocalKind kind = (l.co_fast_free > 0 && (k & l.co_fast_free))   ? LocalKind::Free
                         : static_cast<std::int64_t>(i) < nargs          ? LocalKind::Argument
                         : (l.co_fast_cell > 0 && (k & l.co_fast_cell)) ? LocalKind::Cell
                                                                         : LocalKind::Local;
        slots.push_back({names[i], kind, i});
      }
      base = frame.frame + static_cast<Addr>(l.iframe_localsplus);
      frame_dicts = frame.frame;
      f_locals_off = l.iframe_f_locals;
      f_globals_off = l.iframe_f_globals;
      f_builtins_off = l.iframe_f_builtins;
      break;
    }
  }

  std::size_t count = 0;
  for (const auto& s : slots) count = std::max(count, s.index + 1);
  count = std::min(count, limits.names);
  std::vector<Addr> values(count);
  std::size_t got = count ? mem.read_partial(base, values.data(), count * 8) / 8 : 0;
  if (got < count) note(out, unread_field(ReadPart::Frame, frame.frame, "locals", ReadWhy::PartlyUnreadable));
  for (auto& v : values) v = l.untag(v);

  std::unordered_set<std::string> seen;
  for (const auto& s : slots) {
    if (s.index >= got) continue;
    Addr v = values[s.index];
    if (!plausible_pointer(v)) {
      if (v) note(out, ReadProblem{{{ReadPart::Frame, frame.frame, {}, 0}, {ReadPart::Variable, v, s.name, 0}},
                                   ReadWhy::Implausible});
      continue;  // unbound
    }
    // A cell holds the variable (3.11+ cell slots hold the raw value until MAKE_CELL runs).
    if (objects.type_name(v).value_or("") == "cell") {
      auto inner = mem.read_pointer(v + static_cast<Addr>(ol->cell_ob_ref));
      if (!inner) {
        note(out, ReadProblem{{{ReadPart::Cell, v, s.name, 0}}, ReadWhy::Unreadable});
        continue;
      }
      if (!*inner) continue;  // empty cell: unbound
      v = *inner;
    }
    seen.insert(s.name);
    out.locals.push_back({s.name, s.kind, v});
  }

  RemoteStruct f;
  if (f.load(mem, frame_dicts, span_of({f_locals_off, f_globals_off, f_builtins_off}))) {
    out.f_locals = f.ptr(f_locals_off);
    out.globals = f.ptr(f_globals_off);
    out.builtins = f.ptr(f_builtins_off);
  } else {
    note(out, unread_field(ReadPart::Frame, frame.frame, "f_locals/f_globals"));
  }
  if (out.f_locals && plausible_pointer(out.f_locals)) {
    ReadProblem why;
    auto items = objects.dict_items(out.f_locals, limits.names, &why);
    if (!why.empty()) note(out, why.within(ReadPart::Field, 0, "f_locals").within(ReadPart::Frame, frame.frame));
    for (auto [k, v] : items) {
      auto name = objects.str(k);
      if (!name || seen.count(*name)) continue;
      out.locals.push_back({*name, LocalKind::Dict, v});
    }
  } else {
    out.f_locals = 0;
  }
  return out;
}

}  // namespace pyhang::cpython
