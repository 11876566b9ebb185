// The CPython walkers (interpreters, thread states, frames, code objects,
// the GIL, _Py_DebugOffsets), threading's bookkeeping and the object reader
// over a fuzzed memory image of one version's layout.  Input: [u8 version]
// [u64 _PyRuntime][u64 interp_head][u64 _PyThreadState_Current]
// [u64 _Py_Finalizing][u64 gil_locked][u64 an interpreter whose
// sys.modules the object reader starts from][u64 x4 objects][memory
// (fuzz_input.hpp)].  The first byte picks 3.6 .. 3.15, or 3.16 read
// through a stand-in table and the image's _Py_DebugOffsets alone.
#include <cstdint>
#include <vector>

#include "cpython_input.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/cpython/threading.hpp"

using namespace pyhang;
using namespace pyhang::cpython;

namespace {

void read_object(PyObjects& objs, Addr obj) {
  ReadProblem why;
  (void)objs.type_name(obj);
  (void)objs.basic_size(obj);
  (void)objs.value(obj);
  (void)objs.str(obj, &why);
  (void)objs.integer(obj, &why);
  (void)objs.real(obj, &why);
  (void)objs.length(obj, &why);
  (void)objs.dict_items(obj, 64, &why);
  (void)objs.dict_get(obj, "name", &why);
  (void)objs.sequence_items(obj, 64, &why);
  (void)objs.attribute(obj, "name", &why);
  (void)objs.instance_dict(obj, &why);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const Layout* layout = &fuzz::cpython_layout(in);
  Roots roots = fuzz::cpython_roots(in);
  roots.finalizing_var = in.u64();
  roots.gil_locked_var = in.u64();
  const Addr modules_interp = in.u64();
  Addr objects[4];
  for (Addr& o : objects) o = in.u64();
  ImageReader memory;
  fuzz::add_memory(in, memory);

  Options opts;
  opts.max_threads = 64;
  opts.max_frames = 256;
  opts.max_interpreters = 8;
  PythonState state = inspect_memory(memory, *layout, roots, opts);
  (void)gil_holder(state);
  for (const GilInfo& gil : state.gils) gil_for_wait_address(state, gil.address);

  // The object reader needs an interpreter for sys.modules: the one given.
  state.status = Status::Ok;
  state.major = 3;
  state.minor = layout->minor;
  PyThreadInfo main;
  main.interp = modules_interp;
  state.threads.insert(state.threads.begin(), main);
  {
    PyObjects objs(memory, state);
    ReadProblem why;
    (void)objs.sys_modules(&why);
    (void)objs.module("sys", &why);
    (void)objs.module_attribute("threading", "_active", &why);
    for (Addr o : objects) read_object(objs, o);
  }
  ThreadingOptions topts;
  topts.max_threads = 64;
  (void)threading_state(memory, state, topts);
  return 0;
}
