// The threading module of the target, read from its own objects: every
// threading.Thread the program started (threading._active and _limbo) with
// its name, its identifiers and what its joiners wait on.  This is how a
// Thread.join names the thread it waits for, and how every thread gets its
// Python name, live and from cores.
//
// A Thread object knows:
//  - _name, _daemonic;
//  - _ident: the pthread_t of the thread (threading.get_ident());
//  - _native_id (3.8+): its LWP;
//  - _tstate_lock (3.6–3.12): a Lock the thread acquires when it starts
//    and that is released when its thread state is deleted, as it exits.
//    Thread.join and interpreter exit (threading._shutdown) wait on it, so
//    whoever waits on a Thread's _tstate_lock waits for that thread to end;
//  - _handle (3.13; _os_thread_handle from 3.14): the _ThreadHandle that Thread.join waits on: a
//    PyThreadHandleObject { PyObject_HEAD; ThreadHandle *handle; }
//    (Modules/_threadmodule.c), whose C ThreadHandle holds the PyEvent
//    thread_is_exiting a join (and interpreter exit's _thread._shutdown)
//    parks on until the thread ends.  Read off pyenv's 3.13.0 and Debian's
//    3.13.5, 3.14 and 3.15: the pointer at +16, the struct a heap block.
// Nothing here throws on bad target memory; what cannot be read is left
// empty and said in `problem`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

struct PyThreadObject {
  Addr object = 0;                          // the threading.Thread (or subclass) instance
  std::string type;                         // its type's name
  std::string name;                         // Thread._name; empty when unreadable
  std::optional<std::uint64_t> ident;       // Thread._ident, the pthread_t; none before it started
  std::optional<int> native_id;             // Thread._native_id (3.8+), the LWP
  std::optional<bool> daemon;               // Thread._daemonic
  Addr tstate_lock = 0;                     // Thread._tstate_lock (3.6–3.12), 0 when none
  Addr handle = 0;                          // Thread._handle (3.13+), 0 when none
  Addr handle_struct = 0;                   // the C ThreadHandle it points to, whose thread_is_exiting
                                            // PyEvent a join parks on; 0 when none
  bool started = false;                     // in threading._active (else still in _limbo)
};

struct ThreadingState {
  bool imported = false;                    // threading is in sys.modules
  std::vector<PyThreadObject> threads;      // _active in its order, then _limbo
  // Whether threading._shutdown has begun (interpreter exit: it joins the non-daemon threads, then the
  // atexit callbacks run): threading._SHUTTING_DOWN (3.9+), else _main_thread._is_stopped (3.6–3.8);
  // none when neither could be read.
  std::optional<bool> shutting_down;
  ReadProblem problem;                      // what could not be read; empty when all was read
};

struct ThreadingOptions {
  std::size_t max_threads = 100000;
};

ThreadingState threading_state(MemoryReader& memory, const PythonState& state, const ThreadingOptions& opts = {});

}  // namespace pyhang::cpython
