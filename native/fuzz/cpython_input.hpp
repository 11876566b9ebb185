// The CPython fields of the fuzz targets' inputs (fuzz_input.hpp's Input):
// the version byte and the roots of the interpreter walk.
#pragma once

#include <optional>

#include "cpython/layouts/layout.hpp"
#include "fuzz_input.hpp"
#include "pyhang/cpython/inspect.hpp"

namespace pyhang::fuzz {

// [u8 version]: the layout of 3.6 .. 3.15 it picks (0 .. 9), or (10) that of
// 3.16, a release newer than every table: the newest table standing in,
// which only the image's own _Py_DebugOffsets may make usable.
inline const cpython::Layout& cpython_layout(Input& in) {
  static std::optional<cpython::Layout> layout;  // one input at a time
  layout = cpython::layout_for_release(3, 6 + in.u8() % 11, 0);
  if (!layout) __builtin_trap();
  return *layout;
}

// [u64 _PyRuntime][u64 interp_head][u64 _PyThreadState_Current]
inline cpython::Roots cpython_roots(Input& in) {
  cpython::Roots roots;
  roots.runtime = in.u64();
  roots.interp_head_var = in.u64();
  roots.tstate_current_var = in.u64();
  return roots;
}

}  // namespace pyhang::fuzz
