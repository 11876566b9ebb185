// A synthetic interpreter for the walker tests: one interpreter in an
// Image (through _PyRuntime, or 3.6's static interp_head), read back with
// inspect_memory.
#pragma once

#include "support/cpython_image.hpp"

namespace pyhang::cpython::testing {

// A frame at byte offset 0 of its code, however the layout links frames.
inline Addr make_frame(Image& img, Addr code, Addr older) {
  const Layout& l = img.layout();
  if (l.frame_model == FrameModel::FrameObject) return img.frame_object(code, 0, older);
  return img.interpreter_frame(code, 0, older);
}

struct InterpreterWorld {
  Image img;
  Addr interp = 0, runtime = 0, interp_head_var = 0;
  explicit InterpreterWorld(const Layout& l) : img(l) {
    interp = img.interpreter(0);
    if (l.has(l.runtime_interpreters_head)) {
      runtime = img.runtime(interp);
    } else {  // 3.6: the static interp_head
      interp_head_var = img.alloc(8);
      img.put<Addr>(interp_head_var, 0, interp);
    }
  }
  Roots roots() const {
    Roots r;
    r.runtime = runtime;
    r.interp_head_var = interp_head_var;
    return r;
  }
  PythonState inspect(Options opts = {}) {
    auto mem = img.reader();
    return inspect_memory(mem, img.layout(), roots(), opts);
  }
};


}  // namespace pyhang::cpython::testing
