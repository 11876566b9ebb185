// 3.13+: the target's own _Py_DebugOffsets, the first member of _PyRuntime.
// It starts with the cookie "xdebugpy", PY_VERSION_HEX and (3.14+, also in
// 3.13's struct) whether the build is free-threaded, then holds the offsets
// of the fields out-of-process tools read, grouped by struct, each group
// starting with the struct's size.  The generated table says where each
// value sits in _Py_DebugOffsets (dbg_* fields) and what it should be; the
// target's value is the first source: it wins, with a warning naming each
// difference.  Where the table is an older minor's standing in for a newer
// release (Layout::stand_in), the target's values are the only source for
// what they cover and nothing falls back to the table.
#include <cstring>

#include "cpython/internal.hpp"

namespace pyhang::cpython::detail {

namespace {

constexpr DebugOffsetField kMap[] = {
    {&Layout::dbg_runtime_size, &Layout::runtime_size, nullptr},
    {&Layout::dbg_runtime_finalizing, &Layout::runtime_finalizing, &Layout::dbg_runtime_size},
    {&Layout::dbg_runtime_interpreters_head, &Layout::runtime_interpreters_head, &Layout::dbg_runtime_size},
    {&Layout::dbg_interp_size, &Layout::interp_size, nullptr},
    {&Layout::dbg_interp_id, &Layout::interp_id, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_next, &Layout::interp_next, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_threads_head, &Layout::interp_threads_head, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_ceval_gil, &Layout::interp_ceval_gil, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_gil_runtime_state, &Layout::interp_own_gil, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_imports_modules, &Layout::interp_modules, &Layout::dbg_interp_size},
    {&Layout::dbg_tstate_size, &Layout::tstate_size, nullptr},
    {&Layout::dbg_tstate_prev, &Layout::tstate_prev, &Layout::dbg_tstate_size},
    {&Layout::dbg_tstate_next, &Layout::tstate_next, &Layout::dbg_tstate_size},
    {&Layout::dbg_tstate_interp, &Layout::tstate_interp, &Layout::dbg_tstate_size},
    {&Layout::dbg_tstate_current_frame, &Layout::tstate_current_frame, &Layout::dbg_tstate_size},
    {&Layout::dbg_tstate_thread_id, &Layout::tstate_thread_id, &Layout::dbg_tstate_size},
    {&Layout::dbg_tstate_native_thread_id, &Layout::tstate_native_thread_id, &Layout::dbg_tstate_size},
    {&Layout::dbg_iframe_size, &Layout::iframe_size, nullptr},
    {&Layout::dbg_iframe_previous, &Layout::iframe_previous, &Layout::dbg_iframe_size},
    {&Layout::dbg_iframe_executable, &Layout::iframe_code, &Layout::dbg_iframe_size},
    {&Layout::dbg_iframe_instr_ptr, &Layout::iframe_instr, &Layout::dbg_iframe_size},
    {&Layout::dbg_iframe_owner, &Layout::iframe_owner, &Layout::dbg_iframe_size},
    {&Layout::dbg_iframe_localsplus, &Layout::iframe_localsplus, nullptr},  // the frame's variable part starts at its size
    {&Layout::dbg_iframe_stackpointer, &Layout::iframe_stackpointer, &Layout::dbg_iframe_size},
    {&Layout::dbg_code_size, &Layout::code_size, nullptr},
    {&Layout::dbg_code_filename, &Layout::code_filename, &Layout::dbg_code_size},
    {&Layout::dbg_code_name, &Layout::code_name, &Layout::dbg_code_size},
    {&Layout::dbg_code_qualname, &Layout::code_qualname, &Layout::dbg_code_size},
    {&Layout::dbg_code_linetable, &Layout::code_linetable, &Layout::dbg_code_size},
    {&Layout::dbg_code_firstlineno, &Layout::code_firstlineno, &Layout::dbg_code_size},
    {&Layout::dbg_code_argcount, &Layout::code_argcount, &Layout::dbg_code_size},
    {&Layout::dbg_code_localsplusnames, &Layout::code_localsplusnames, &Layout::dbg_code_size},
    {&Layout::dbg_code_localspluskinds, &Layout::code_localspluskinds, &Layout::dbg_code_size},
    {&Layout::dbg_code_code_adaptive, &Layout::code_code_adaptive, nullptr},  // the bytecode follows the struct
    {&Layout::dbg_object_ob_type, &Layout::object_ob_type, nullptr},
    {&Layout::dbg_type_tp_name, &Layout::type_tp_name, nullptr},
    {&Layout::dbg_type_tp_flags, &Layout::type_tp_flags, nullptr},
    {&Layout::dbg_type_tp_basicsize, &Layout::type_basicsize, nullptr},
    {&Layout::dbg_type_tp_dictoffset, &Layout::type_dictoffset, nullptr},
    {&Layout::dbg_heaptype_cached_keys, &Layout::heaptype_cached_keys, &Layout::dbg_heaptype_size},
    {&Layout::dbg_tuple_ob_item, &Layout::tuple_ob_item, nullptr},  // items follow the header
    {&Layout::dbg_list_ob_item, &Layout::list_ob_item, nullptr},
    {&Layout::dbg_set_used, &Layout::set_used, &Layout::dbg_set_size},
    {&Layout::dbg_set_table, &Layout::set_table, &Layout::dbg_set_size},
    {&Layout::dbg_set_mask, &Layout::set_mask, &Layout::dbg_set_size},
    {&Layout::dbg_dict_ma_keys, &Layout::dict_ma_keys, &Layout::dbg_dict_size},
    {&Layout::dbg_dict_ma_values, &Layout::dict_ma_values, &Layout::dbg_dict_size},
    {&Layout::dbg_float_ob_fval, &Layout::float_ob_fval, &Layout::dbg_float_size},
    {&Layout::dbg_long_lv_tag, &Layout::long_lv_tag, &Layout::dbg_long_size},
    {&Layout::dbg_long_ob_digit, &Layout::long_digits, nullptr},  // digits follow the header
    {&Layout::dbg_bytes_ob_size, &Layout::var_ob_size, nullptr},
    {&Layout::dbg_bytes_ob_sval, &Layout::bytes_ob_sval, nullptr},
    {&Layout::dbg_unicode_state, &Layout::unicode_state, nullptr},
    {&Layout::dbg_unicode_length, &Layout::unicode_length, nullptr},
    {&Layout::dbg_unicode_asciiobject_size, &Layout::unicode_ascii_data, nullptr},
    {&Layout::dbg_unicode_compact_size, &Layout::unicode_compact_data, nullptr},
};

constexpr std::uint64_t kMaxStruct = 1 << 22;  // no CPython struct is near 4 MiB

using Field = std::int64_t Layout::*;

// The entries that are a struct's size (what other entries are bounded by).
bool is_size(const DebugOffsetField& f) {
  for (const auto& other : kMap)
    if (other.bound == f.where) return true;
  return false;
}

std::string minor_text(const Layout& l) { return std::to_string(l.major) + "." + std::to_string(l.minor); }

// A value the target's struct gives relative to a member it also gives
// (interp.gc + gc.collecting, interp._gil + gil.locked): the offset inside
// the outer struct, or nullopt when either is missing or out of bounds.
std::optional<std::int64_t> nested(const RemoteStruct& d, std::int64_t outer, std::int64_t inner,
                                   std::int64_t inner_bound, std::uint64_t outer_bound) {
  auto o = d.get<std::uint64_t>(outer), i = d.get<std::uint64_t>(inner);
  auto b = inner_bound >= 0 ? d.get<std::uint64_t>(inner_bound) : std::optional<std::uint64_t>(kMaxStruct);
  if (!o || !i || !b || *i >= *b || *o >= outer_bound || *o + *i >= outer_bound) return std::nullopt;
  return static_cast<std::int64_t>(*o + *i);
}

}  // namespace

std::span<const DebugOffsetField> debug_offset_fields() { return kMap; }

DebugOffsetsReading apply_debug_offsets(MemoryReader& mem, Addr runtime, Layout& l,
                                        std::vector<StateWarning>& warnings) {
  DebugOffsetsReading out;
  if (!l.has_debug_offsets || l.dbg_size <= 0) return out;
  // What happens when the target's own offsets cannot be used: the table
  // stands for this release, or (a stand-in) nothing does.
  auto fail = [&](StateWarning why) {
    why.text3 = l.generated_from;
    if (l.stand_in) {
      why.count = 1;
      why.text2 = minor_text(l);
      out.refused = why;
    } else {
      warnings.push_back(why);
    }
    return out;
  };
  auto problem = [](StateProblem kind) { return StateWarning{kind, 0, 0, 0, 0, 0, {}, {}, {}}; };
  RemoteStruct d;
  if (!d.load(mem, runtime, static_cast<std::size_t>(l.dbg_size))) return fail(problem(StateProblem::DebugOffsetsUnreadable));
  char cookie[8];
  for (int i = 0; i < 8; ++i) cookie[i] = static_cast<char>(d.get<std::uint8_t>(i).value_or(0));
  if (std::memcmp(cookie, "xdebugpy", 8) != 0) return fail(problem(StateProblem::DebugOffsetsNoCookie));
  auto version = d.get<std::uint64_t>(l.dbg_version).value_or(0);
  if ((version >> 24) != static_cast<std::uint64_t>(l.major) ||
      ((version >> 16) & 0xff) != static_cast<std::uint64_t>(l.minor)) {
    auto why = problem(StateProblem::DebugOffsetsVersion);
    why.text = version_from_hex(static_cast<std::uint32_t>(version));
    why.text2 = minor_text(l);
    return fail(why);
  }
  // A free-threaded build (Py_GIL_DISABLED) lays out objects, frames and
  // locks differently (per-object locks, biased reference counts, no GIL):
  // no table here describes them, so nothing is decoded with the default
  // build's.
  if (auto ft = d.get<std::uint64_t>(l.dbg_free_threaded); ft && *ft != 0) {
    out.free_threaded = true;
    out.refused = StateWarning{StateProblem::FreeThreaded, 0, 0, 0, 0, 1, {}, minor_text(l), {}};
    return out;
  }
  // Validate everything before changing anything.
  Layout updated = l;
  std::vector<std::string> diffs;
  for (const auto& m : kMap) {
    if (!l.has(l.*m.where)) continue;  // this release's struct has no such entry
    auto value = d.get<std::uint64_t>(l.*m.where);
    if (!value) continue;
    std::uint64_t bound = kMaxStruct;
    if (m.bound && l.has(l.*m.bound)) bound = std::min<std::uint64_t>(bound, d.get<std::uint64_t>(l.*m.bound).value_or(kMaxStruct));
    if (*value >= bound) {
      auto why = problem(StateProblem::DebugOffsetsImplausible);
      why.number = static_cast<std::int64_t>(*value);
      return fail(why);
    }
    if (static_cast<std::int64_t>(*value) != l.*m.field) {
      // A struct's size alone may differ with the build's configuration
      // (Debian's 3.14 and 3.15 have 8 more bytes at the end of
      // PyInterpreterState than their headers give gcc here): it bounds
      // the other offsets but locates nothing, so it is taken silently.
      if (!is_size(m)) diffs.push_back(std::to_string(l.*m.field) + "->" + std::to_string(*value));
      updated.*m.field = static_cast<std::int64_t>(*value);
    }
  }
  // The GIL's locked / last_holder are given relative to the interpreter.
  auto gil = d.get<std::uint64_t>(l.dbg_interp_gil_runtime_state);
  auto locked = d.get<std::uint64_t>(l.dbg_interp_gil_locked);
  auto holder = d.get<std::uint64_t>(l.dbg_interp_gil_holder);
  if (gil && locked && holder && *locked >= *gil && *holder >= *gil) {
    std::int64_t lo = static_cast<std::int64_t>(*locked - *gil), ho = static_cast<std::int64_t>(*holder - *gil);
    if (lo < l.gil_size && ho < l.gil_size) {
      if (lo != l.gil_locked) diffs.push_back("gil.locked " + std::to_string(l.gil_locked) + "->" + std::to_string(lo));
      if (ho != l.gil_last_holder)
        diffs.push_back("gil.last_holder " + std::to_string(l.gil_last_holder) + "->" + std::to_string(ho));
      updated.gil_locked = lo;
      updated.gil_last_holder = ho;
    }
  }
  // gc.collecting, relative to the interpreter's gc state (3.14+).
  if (l.has(l.dbg_interp_gc) && l.has(l.dbg_gc_collecting)) {
    auto interp_size = d.get<std::uint64_t>(l.dbg_interp_size).value_or(kMaxStruct);
    if (auto at = nested(d, l.dbg_interp_gc, l.dbg_gc_collecting, l.dbg_gc_size, interp_size)) {
      if (*at != l.interp_gc_collecting)
        diffs.push_back("gc.collecting " + std::to_string(l.interp_gc_collecting) + "->" + std::to_string(*at));
      updated.interp_gc_collecting = *at;
    }
  }
  if (!diffs.empty()) {
    std::string first;  // the first six, "old->new" each
    for (std::size_t i = 0; i < diffs.size() && i < 6; ++i) first += (i ? ", " : "") + diffs[i];
    warnings.push_back({StateProblem::DebugOffsetsDiffer, 0, 0, 0, static_cast<std::int64_t>(diffs.size()), 0, first,
                        {}, l.generated_from});
  }
  l = updated;
  out.applied = true;
  return out;
}

}  // namespace pyhang::cpython::detail
