// _pyhang_native: the native library as gdb's embedded Python sees it.
// Thin by design: each part of the library registers its own bindings.
#include "bindings.hpp"

PYBIND11_MODULE(_pyhang_native, m) {
  m.doc() = "pyhang's decoders for target memory (native library)";
  pyhang::bindings::register_target(m);
  pyhang::bindings::register_cpython(m);
  pyhang::bindings::register_locks(m);
  pyhang::bindings::register_pylocks(m);
  pyhang::bindings::register_fork(m);
  pyhang::bindings::register_unwind(m);
  pyhang::bindings::register_syscall_args(m);
  pyhang::bindings::register_values(m);
  pyhang::bindings::register_asyncio(m);
  pyhang::bindings::register_parked(m);
  pyhang::bindings::register_stop(m);
  pyhang::bindings::register_records(m);
}
