// The threading module's Thread objects (see pyhang/cpython/threading.hpp).
#include "pyhang/cpython/threading.hpp"

#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::cpython {

namespace {

// PyThreadHandleObject.handle: the C ThreadHandle (3.13+; see threading.hpp).
constexpr Addr kThreadHandlePointer = 16;

PyThreadObject read_thread(MemoryReader& memory, PyObjects& objs, Addr thread, bool started) {
  PyThreadObject t;
  t.object = thread;
  t.started = started;
  t.type = objs.type_name(thread).value_or("");
  if (Addr name = objs.attribute(thread, "_name")) t.name = objs.str(name).value_or("");
  if (Addr ident = objs.attribute(thread, "_ident")) {
    if (auto v = objs.integer(ident); v && *v > 0) t.ident = static_cast<std::uint64_t>(*v);
  }
  if (Addr native = objs.attribute(thread, "_native_id")) {
    if (auto v = objs.integer(native); v && *v > 0 && *v <= 0x3fffffff) t.native_id = static_cast<int>(*v);
  }
  if (Addr daemon = objs.attribute(thread, "_daemonic")) {
    if (auto v = objs.integer(daemon)) t.daemon = *v != 0;
  }
  // None (a thread that has not started, or has ended) is not a lock.
  auto object_or_zero = [&](Addr a) { return a && objs.type_name(a).value_or("NoneType") != "NoneType" ? a : 0; };
  t.tstate_lock = object_or_zero(objs.attribute(thread, "_tstate_lock"));
  // Thread._handle (3.13), renamed Thread._os_thread_handle in 3.14.
  t.handle = object_or_zero(objs.attribute(thread, "_handle"));
  if (!t.handle) t.handle = object_or_zero(objs.attribute(thread, "_os_thread_handle"));
  if (t.handle && objs.type_name(t.handle).value_or("") == "_thread._ThreadHandle")
    t.handle_struct = memory.read_pointer(t.handle + kThreadHandlePointer).value_or(0);
  return t;
}

}  // namespace

ThreadingState threading_state(MemoryReader& memory, const PythonState& state, const ThreadingOptions& opts) {
  ThreadingState out;
  if (state.status != Status::Ok && state.status != Status::Finalizing) {
    out.problem = no_python_state(to_string(state.status));
    return out;
  }
  PyObjects objs(memory, state);
  if (!objs.ok()) {
    out.problem = objs.problem();
    return out;
  }
  ReadProblem why;
  if (!objs.module("threading", &why)) {
    out.problem = why;  // not imported: a program with no threading.Thread
    return out;
  }
  out.imported = true;
  if (Addr flag = objs.module_attribute("threading", "_SHUTTING_DOWN")) {
    if (auto v = objs.integer(flag)) out.shutting_down = *v != 0;
  } else if (Addr main = objs.module_attribute("threading", "_main_thread")) {
    if (Addr stopped = objs.attribute(main, "_is_stopped"))
      if (auto v = objs.integer(stopped)) out.shutting_down = *v != 0;
  }
  // _active: {ident: Thread}; _limbo: {Thread: Thread}, started but not yet running.
  for (const char* table : {"_active", "_limbo"}) {
    ReadProblem p;
    Addr dict = objs.module_attribute("threading", table, &p);
    if (!dict) {
      note(out.problem, std::move(p));
      continue;
    }
    bool started = std::string(table) == "_active";
    std::size_t room = opts.max_threads > out.threads.size() ? opts.max_threads - out.threads.size() : 0;
    for (auto [key, value] : objs.dict_items(dict, room, &p)) {
      (void)key;
      if (value) out.threads.push_back(read_thread(memory, objs, value, started));
    }
    if (!p.empty()) note(out.problem, p.within(ReadPart::Attribute, dict, std::string("threading.") + table));
  }
  return out;
}

}  // namespace pyhang::cpython
