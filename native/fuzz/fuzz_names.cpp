// Which variable names an object (object_names) and which threads reach it
// from their frames (thread_references, the stack references of Python
// locks and queues) over a fuzzed memory image of one version's layout.
// Input: [u8 version][u64 _PyRuntime][u64 interp_head]
// [u64 _PyThreadState_Current][u64 an interpreter whose sys.modules is
// searched][u64 x4 objects wanted][u8 frames of one more thread, at most 8]
// [(u64 frame, u64 code) per frame][memory (fuzz_input.hpp)].  The first
// byte picks 3.6 .. 3.15 (or 3.16, stand-in).  The threads are those the walkers find, plus the
// one given, each with a TID.
#include <cstdint>
#include <vector>

#include "cpython_input.hpp"
#include "pyhang/cpython/object_names.hpp"

using namespace pyhang;
using namespace pyhang::cpython;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const Layout& layout = fuzz::cpython_layout(in);
  const Roots roots = fuzz::cpython_roots(in);
  const Addr modules_interp = in.u64();
  std::vector<Addr> wanted(4);
  for (Addr& o : wanted) o = in.u64();
  PyThreadInfo given;
  given.interp = modules_interp;
  given.native_tid = 1;
  for (unsigned n = in.u8() % 9, i = 0; i < n; ++i) {
    PyFrame f;
    f.frame = in.u64();
    f.code = in.u64();
    given.frames.push_back(f);
  }
  ImageReader memory;
  fuzz::add_memory(in, memory);

  Options opts;
  opts.max_threads = 16;
  opts.max_frames = 64;
  opts.max_interpreters = 4;
  PythonState state = inspect_memory(memory, layout, roots, opts);
  // The object reader finds sys.modules through the first thread's interpreter.
  state.status = Status::Ok;
  state.major = 3;
  state.minor = layout.minor;
  state.threads.insert(state.threads.begin(), given);
  for (std::size_t i = 0; i < state.threads.size(); ++i)
    if (!state.threads[i].native_tid) state.threads[i].native_tid = static_cast<int>(100 + i);

  ObjectNameLimits names;
  names.modules = 32;
  names.globals = 1024;
  names.instances = 256;
  names.attributes = 64;
  (void)object_names(memory, state, wanted, names);
  ReferenceLimits refs;
  refs.frames = 64;
  refs.instances = 256;
  refs.attributes = 64;
  (void)thread_references(memory, state, wanted, refs);
  return 0;
}
