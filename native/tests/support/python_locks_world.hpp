// A synthetic CPython process for the Python-lock tests (test_locks.cpp,
// test_lock_references.cpp): lock objects, bound methods, dicts, Conditions,
// frames with given locals, thread states and buffered I/O objects, laid out
// with the generated tables and the hand-written lock and object tables, for
// every version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpython/layouts/locks.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/cpython/locks.hpp"
#include "support/cpython_image.hpp"

namespace pyhang::cpython::testing {

constexpr int kSlots = 6;  // 3 locals + stack of 3

struct World {
  const Layout& l;
  const LockLayout& ll;
  const ObjectLayout& ol;
  Image img;
  Addr interp = 0, runtime = 0, interp_head_var = 0;
  Addr lock_type = 0, rlock_type = 0, cfunc_type = 0, cond_type = 0, dict_type = 0;
  std::vector<Addr> tstates;

  explicit World(int minor) : l(layout(minor)), ll(*lock_layout_for(3, minor)), ol(*object_layout_for(3, minor)), img(l) {
    interp = img.interpreter(0);
    if (l.has(l.runtime_interpreters_head)) {
      runtime = img.runtime(interp);
    } else {
      interp_head_var = img.alloc(8);
      img.put<Addr>(interp_head_var, 0, interp);
    }
    lock_type = img.type("_thread.lock", 0);
    rlock_type = img.type("_thread.RLock", 0);
    cfunc_type = img.type("builtin_function_or_method", 0);
    dict_type = img.type("dict", static_cast<std::uint64_t>(l.tpflags_dict_subclass));
    cond_type = img.type("Condition", 0);
  }

  Addr sem() { return img.alloc(32); }
  // A _thread.lock: its sem_t and `locked` byte, or (3.13.5+) the PyMutex whose low bit is set while held.
  Addr lock(Addr sem, bool locked) {
    Addr o = img.alloc(static_cast<std::size_t>(ll.lock_size));
    img.put<Addr>(o, l.object_ob_type, lock_type);
    if (ll.lock_mutex >= 0) {
      img.put<std::uint8_t>(o, ll.lock_mutex, locked ? 1 : 0);
      return o;
    }
    img.put<Addr>(o, ll.lock_lock, sem);
    img.put<std::uint8_t>(o, ll.lock_locked, locked);
    return o;
  }
  Addr rlock(Addr sem, std::uint64_t owner, std::uint64_t count) {
    Addr o = img.alloc(static_cast<std::size_t>(ll.rlock_size));
    img.put<Addr>(o, l.object_ob_type, rlock_type);
    img.put<Addr>(o, ll.rlock_lock, sem);
    img.put<std::uint64_t>(o, ll.rlock_owner, owner);
    img.put<std::uint64_t>(o, ll.rlock_count, count);
    return o;
  }
  Addr bound_method(Addr self) {
    Addr m = img.alloc(64);
    img.put<Addr>(m, l.object_ob_type, cfunc_type);
    img.put<Addr>(m, l.cfunction_self, self);
    return m;
  }
  // A combined dict {name: value} (tp_dictoffset style instance dict).
  Addr dict(const std::string& name, Addr value) {
    Addr keys = img.alloc(256);
    Addr entries;
    if (l.has(l.dictkeys_nentries)) {  // 3.11+: from the generated table
      img.put<std::uint8_t>(keys, l.dictkeys_log2_size, 3);
      img.put<std::uint8_t>(keys, l.dictkeys_log2_index_bytes, 3);
      img.put<std::uint8_t>(keys, l.dictkeys_kind, static_cast<std::uint8_t>(l.dictkeys_kind_general));
      img.put<std::int64_t>(keys, l.dictkeys_nentries, 2);
      entries = keys + l.dictkeys_indices + 8;
    } else {
      img.put<std::int64_t>(keys, ol.dk_size, 8);
      img.put<std::int64_t>(keys, ol.dk_nentries, 2);
      entries = keys + ol.dk_indices + 8;
    }
    std::int64_t esize = l.has(l.dictentry_size) ? l.dictentry_size : ol.entry_size;
    std::int64_t ekey = l.has(l.dictentry_key) ? l.dictentry_key : ol.entry_key;
    std::int64_t evalue = l.has(l.dictentry_value) ? l.dictentry_value : ol.entry_value;
    img.put<Addr>(entries, ekey, img.str("_waiters"));
    img.put<Addr>(entries, evalue, img.str("not a lock"));
    img.put<Addr>(entries + esize, ekey, img.str(name));
    img.put<Addr>(entries + esize, evalue, value);
    Addr d = img.alloc(64);
    img.put<Addr>(d, l.object_ob_type, dict_type);
    img.put<Addr>(d, l.dict_ma_keys, keys);
    img.put<Addr>(d, l.dict_ma_values, 0);
    return d;
  }
  // A threading.Condition whose instance dict (at tp_dictoffset) holds _lock.
  Addr condition(Addr lock) {
    img.put<std::int64_t>(cond_type, l.type_dictoffset, 16);
    Addr c = img.alloc(32);
    img.put<Addr>(c, l.object_ob_type, cond_type);
    img.put<Addr>(c, 16, dict("_lock", lock));
    return c;
  }

  // A frame of `function` in `file` whose locals + stack are `slots`.
  Addr frame(const std::string& function, const std::string& file, const std::vector<Addr>& slots, Addr older) {
    Addr code = img.code(function, file, 1, {});
    img.put<std::int32_t>(code, l.code_stacksize, kSlots / 2);
    if (l.has(l.code_nlocalsplus)) img.put<std::int32_t>(code, l.code_nlocalsplus, kSlots / 2);
    img.put<std::int32_t>(code, l.code_nlocals, kSlots / 2);
    Addr f;
    std::int64_t localsplus;
    if (l.frame_model == FrameModel::FrameObject) {
      f = img.alloc(static_cast<std::size_t>(l.frame_size) + kSlots * 8);
      img.put<Addr>(f, l.frame_code, code);
      img.put<Addr>(f, l.frame_back, older);
      localsplus = l.frame_localsplus;
      img.put<Addr>(f, l.frame_valuestack, f + localsplus + (kSlots / 2) * 8);
    } else {
      f = img.alloc(static_cast<std::size_t>(l.iframe_size) + kSlots * 8);
      img.put<Addr>(f, l.iframe_code, code);
      img.put<Addr>(f, l.iframe_previous, older);
      img.put<Addr>(f, l.iframe_instr, code + l.code_code_adaptive);
      localsplus = l.iframe_localsplus;
    }
    for (std::size_t i = 0; i < slots.size() && i < kSlots; ++i) img.put<Addr>(f, localsplus + 8 * i, slots[i]);
    return f;
  }
  void thread(Addr top, std::uint64_t pthread, int tid) { tstates.push_back(img.thread_state(interp, top, pthread, tid)); }

  PythonState inspect() {
    img.link_threads(interp, tstates);
    Roots r;
    r.runtime = runtime;
    r.interp_head_var = interp_head_var;
    auto mem = img.reader();
    auto st = inspect_memory(mem, l, r);
    st.major = 3;
    st.minor = l.minor;
    // 3.6/3.7 keep no native TID in the thread state: inspect() maps
    // pthread_t → TID through libc; do it here by hand.
    for (std::size_t i = 0; i < st.threads.size(); ++i)
      if (!st.threads[i].native_tid) st.threads[i].native_tid = static_cast<int>(100 + i);
    return st;
  }
  PyLockWait wait(const PythonState& st, int tid, std::optional<Addr> futex, const LockWaitOptions& opts = {}) {
    auto mem = img.reader();
    return find_python_lock_wait_memory(mem, st, tid, futex, opts);
  }
  // An _io.BufferedWriter (or another buffered type) whose lock is `sem`, held by `owner` (0: free).
  Addr buffered(const std::string& type, Addr sem, std::uint64_t owner) {
    const BufferedLayout& bl = *buffered_layout_for(3, l.minor);
    Addr o = img.alloc(static_cast<std::size_t>(bl.size));
    img.put<Addr>(o, l.object_ob_type, img.type(type, 0));
    img.put<Addr>(o, bl.lock, sem);
    img.put<std::uint64_t>(o, bl.owner, owner);
    return o;
  }
  // An _io.TextIOWrapper over `buffer`.
  Addr text_io(Addr buffer) {
    const BufferedLayout& bl = *buffered_layout_for(3, l.minor);
    Addr o = img.alloc(64);
    img.put<Addr>(o, l.object_ob_type, img.type("_io.TextIOWrapper", 0));
    img.put<Addr>(o, bl.textio_buffer, buffer);
    return o;
  }
  // A threading.Thread (only its address matters here).
  Addr thread_object() {
    Addr t = img.alloc(64);
    img.put<Addr>(t, l.object_ob_type, img.type("Thread", 0));
    return t;
  }
  // A method's name as its frame shows it: co_qualname on 3.11+, else co_name.
  std::string method(const std::string& cls, const std::string& name) const {
    return l.has(l.code_qualname) ? cls + "." + name : name;
  }
};

// TIDs as the World gives them: native_tid where the layout has it, else 100 + index.
inline int tid_of(const World& w, int native, int index) {
  return w.l.has(w.l.tstate_native_thread_id) ? native : 100 + index;
}

}  // namespace pyhang::cpython::testing
