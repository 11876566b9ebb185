// 3.13+: the target's own _Py_DebugOffsets, the first member of _PyRuntime.
// It starts with the cookie "xdebugpy" and PY_VERSION_HEX, then holds the
// offsets of the fields out-of-process tools read.  The generated table says
// where each value sits in _Py_DebugOffsets (dbg_* fields) and what it should
// be; the target's value wins when it is plausible, with a warning.
#include <cstring>

#include "cpython/internal.hpp"

namespace pyhang::cpython::detail {

namespace {

using Field = std::int64_t Layout::*;

// (where in _Py_DebugOffsets, which layout field, the _Py_DebugOffsets
// entry of the enclosing struct's size that bounds it)
struct Mapping {
  Field where;
  Field field;
  Field bound;  // null: a size itself or a constant
};

constexpr Mapping kMap[] = {
    {&Layout::dbg_runtime_size, &Layout::runtime_size, nullptr},
    {&Layout::dbg_runtime_finalizing, &Layout::runtime_finalizing, &Layout::dbg_runtime_size},
    {&Layout::dbg_runtime_interpreters_head, &Layout::runtime_interpreters_head, &Layout::dbg_runtime_size},
    {&Layout::dbg_interp_size, &Layout::interp_size, nullptr},
    {&Layout::dbg_interp_id, &Layout::interp_id, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_next, &Layout::interp_next, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_threads_head, &Layout::interp_threads_head, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_ceval_gil, &Layout::interp_ceval_gil, &Layout::dbg_interp_size},
    {&Layout::dbg_interp_gil_runtime_state, &Layout::interp_own_gil, &Layout::dbg_interp_size},
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
    {&Layout::dbg_code_size, &Layout::code_size, nullptr},
    {&Layout::dbg_code_filename, &Layout::code_filename, &Layout::dbg_code_size},
    {&Layout::dbg_code_name, &Layout::code_name, &Layout::dbg_code_size},
    {&Layout::dbg_code_qualname, &Layout::code_qualname, &Layout::dbg_code_size},
    {&Layout::dbg_code_linetable, &Layout::code_linetable, &Layout::dbg_code_size},
    {&Layout::dbg_code_firstlineno, &Layout::code_firstlineno, &Layout::dbg_code_size},
    {&Layout::dbg_code_code_adaptive, &Layout::code_code_adaptive, &Layout::dbg_code_size},
    {&Layout::dbg_object_ob_type, &Layout::object_ob_type, nullptr},
    {&Layout::dbg_type_tp_name, &Layout::type_tp_name, nullptr},
    {&Layout::dbg_type_tp_flags, &Layout::type_tp_flags, nullptr},
    {&Layout::dbg_bytes_ob_size, &Layout::var_ob_size, nullptr},
    {&Layout::dbg_bytes_ob_sval, &Layout::bytes_ob_sval, nullptr},
    {&Layout::dbg_unicode_state, &Layout::unicode_state, nullptr},
    {&Layout::dbg_unicode_length, &Layout::unicode_length, nullptr},
    {&Layout::dbg_unicode_asciiobject_size, &Layout::unicode_ascii_data, nullptr},
};

constexpr std::uint64_t kMaxStruct = 1 << 22;  // no CPython struct is near 4 MiB

}  // namespace

bool apply_debug_offsets(MemoryReader& mem, Addr runtime, Layout& l, std::vector<std::string>& warnings) {
  if (!l.has_debug_offsets || l.dbg_size <= 0) return false;
  RemoteStruct d;
  if (!d.load(mem, runtime, static_cast<std::size_t>(l.dbg_size))) {
    warnings.push_back("_Py_DebugOffsets unreadable; using the generated " + std::string(l.generated_from) + " table");
    return false;
  }
  char cookie[8];
  for (int i = 0; i < 8; ++i) cookie[i] = static_cast<char>(d.get<std::uint8_t>(i).value_or(0));
  if (std::memcmp(cookie, "xdebugpy", 8) != 0) {
    warnings.push_back("_PyRuntime does not start with the _Py_DebugOffsets cookie; using the generated table");
    return false;
  }
  auto version = d.get<std::uint64_t>(l.dbg_version).value_or(0);
  if ((version >> 24) != static_cast<std::uint64_t>(l.major) ||
      ((version >> 16) & 0xff) != static_cast<std::uint64_t>(l.minor)) {
    warnings.push_back("_Py_DebugOffsets version " + version_from_hex(static_cast<std::uint32_t>(version)) +
                       " is not 3." + std::to_string(l.minor) + "; using the generated table");
    return false;
  }
  // Validate everything before changing anything.
  Layout updated = l;
  std::vector<std::string> diffs;
  for (const auto& m : kMap) {
    auto value = d.get<std::uint64_t>(l.*m.where);
    if (!value) continue;
    std::uint64_t bound = kMaxStruct;
    if (m.bound) bound = std::min<std::uint64_t>(bound, d.get<std::uint64_t>(l.*m.bound).value_or(kMaxStruct));
    if (*value >= bound) {
      warnings.push_back("_Py_DebugOffsets implausible (offset " + std::to_string(*value) + " beyond its struct); "
                         "using the generated table");
      return false;
    }
    if (static_cast<std::int64_t>(*value) != l.*m.field) {
      diffs.push_back(std::to_string(l.*m.field) + "->" + std::to_string(*value));
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
  if (!diffs.empty()) {
    std::string line = "layout: the target's _Py_DebugOffsets differ from the generated " +
                       std::string(l.generated_from) + " table in " + std::to_string(diffs.size()) + " fields (";
    for (std::size_t i = 0; i < diffs.size() && i < 6; ++i) line += (i ? ", " : "") + diffs[i];
    line += diffs.size() > 6 ? ", ...); using the target's" : "); using the target's";
    warnings.push_back(line);
  }
  l = updated;
  return true;
}

}  // namespace pyhang::cpython::detail
