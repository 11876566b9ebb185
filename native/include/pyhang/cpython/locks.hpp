// Which Python lock a blocked thread waits on, and who owns it: the
// Python-level half of `lock-owner`.
//
// threading.Lock is `_thread.lock`, threading.RLock is `_thread.RLock` (the
// C implementation), threading.Condition.wait() blocks in waiter.acquire()
// on a fresh `_thread.lock`.  On Linux, CPython 3.6 - 3.13 (checked on
// 3.13.0), each of these objects points at a malloc'ed glibc sem_t, and a
// blocked acquire sleeps in PyThread_acquire_lock_timed → sem_clockwait /
// sem_timedwait / sem_wait on it: the futex address of the sleeping thread
// (rdi of futex(2)) is inside that sem_t.
//
// How the lock object is found: the thread's innermost few Python frames
// (PythonState from cpython::inspect with frames) are scanned, each over its
// locals and value stack (co_nlocals.. + co_stacksize slots, at most
// kMaxSlots), for pointers to objects whose type name is `_thread.lock` or
// `_thread.RLock`, directly or as the __self__ of a bound method (`with
// lock:` keeps lock.__exit__ on the stack, 3.6's `lock.acquire()` the bound
// acquire).  The one whose sem_t holds the futex address is the answer:
// confidence "certain".  Every pointer is checked (plausible address, type
// name read through the object's type, bounded reads); garbage gives
// nothing, never a crash.
//
// What can be said about the owner:
//  - RLock: rlock_owner is the owner's pthread_t (0 when free) and
//    rlock_count the recursion depth; the pthread_t is mapped to a TID
//    through the Python thread states (thread_id → native TID), else
//    through nptl::pthread_tid.
//  - Lock: CPython does not record who acquired a Lock (any thread may
//    release it).  `suspects` lists the other threads whose innermost frames
//    hold a reference to the same lock object (e.g. inside `with lock:`):
//    a heuristic, said so in `owner_source`.  `self_frames` lists the
//    waiter's own outer frames that reference it: a Lock is not re-entrant,
//    so one of them holding it is a thread waiting for itself.
//  - Condition.wait: the thread waits to be notified on its waiter lock
//    (which nobody "owns"); `condition` is the Condition (the `self` of the
//    threading.py frame) and `condition_lock` its `_lock` (read from the
//    instance's attributes: instance dict, or 3.11+ managed dict / inline
//    values), which the waiter must reacquire after being notified; its
//    type and, for an RLock, its owner are given too.
//  - The internal lock of an io.BufferedWriter / BufferedReader /
//    BufferedRandom (every write, read and flush of a file opened in
//    binary or text mode, print() included): the buffered object records
//    its holder's pthread_t in `owner` (cpython/layouts/locks.hpp,
//    BufferedLayout), read like an RLock's.  The buffered object is found
//    on the innermost frames (directly, as the `buffer` of a TextIOWrapper,
//    or as the __self__ of a bound method of either), else among sys.stdout,
//    sys.stderr, sys.stdin and their __std*__ originals (print() with no
//    file= keeps no reference to the stream on a Python frame).
//
// Not covered: locks of pure-Python implementations (threading._PyRLock),
// asyncio locks, multiprocessing locks (a sem_t in shared memory: a
// glibc-level "semaphore" wait), 3.14's PyMutex-based lock objects.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pyhang/base/confidence.hpp"
#include "pyhang/base/names.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {
class Target;
}

namespace pyhang::cpython {

// How the lock a thread waits on was found.
enum class PyLockFound : std::uint8_t {
  None,
  InSemaphore,   // the futex it sleeps on is in the lock's sem_t (`wait_address`)
  ParkedWaiter,  // the futex is a parking-lot waiter's, for the lock's PyMutex (`wait_address`; 3.13+)
  NoFutex,       // no futex known: the innermost lock object on its stack
};
inline constexpr std::array<Named<PyLockFound>, 4> kPyLockFoundNames{{
    {PyLockFound::None, "none"},
    {PyLockFound::InSemaphore, "in-semaphore"},
    {PyLockFound::ParkedWaiter, "parked-waiter"},
    {PyLockFound::NoFutex, "no-futex"},
}};
constexpr std::string_view to_string(PyLockFound f) { return name_in(kPyLockFoundNames, f); }

// Which Python lock a thread waits on.
enum class PyLockKind : std::uint8_t {
  None,       // not found waiting on a Python lock (see PyLockWait::problem)
  Lock,       // a threading.Lock
  RLock,      // a threading.RLock
  Condition,  // Condition.wait: blocked on its waiter lock
  Buffered,   // the internal lock of an io.BufferedWriter / BufferedReader / BufferedRandom
  SimpleQueueGet,  // a get on an empty queue.SimpleQueue (_queue.SimpleQueue, C): no Python frame of its own
};

inline constexpr std::array<Named<PyLockKind>, 6> kPyLockKindNames{{
    {PyLockKind::None, ""},
    {PyLockKind::Lock, "py-lock"},
    {PyLockKind::RLock, "py-rlock"},
    {PyLockKind::Condition, "py-condition"},
    {PyLockKind::Buffered, "py-buffered-io"},
    {PyLockKind::SimpleQueueGet, "py-queue-get"},
}};
constexpr std::string_view to_string(PyLockKind k) { return name_in(kPyLockKindNames, k); }
constexpr std::optional<PyLockKind> parse_py_lock_kind(std::string_view s) { return parse_in(kPyLockKindNames, s); }

struct PyLockWait {
  PyLockKind kind = PyLockKind::None;
  // Certain: the futex is inside the lock's sem_t; Guess: no futex given.
  Confidence confidence = Confidence::None;
  Addr object = 0;                 // the _thread.lock / _thread.RLock / buffered object waited on (its id())
  std::string type_name;           // "_thread.lock" | "_thread.RLock" | "_io.BufferedWriter" | ...
  Addr wait_address = 0;           // the sem_t the object points to
  std::optional<bool> locked;      // Lock: lockobject.locked; RLock, buffered: owner != 0
  std::optional<std::uint64_t> owner_thread_id;  // RLock: rlock_owner, buffered: owner (pthread_t); Lock: never
  std::optional<int> owner_tid;                  // RLock / buffered owner → LWP
  std::optional<std::uint64_t> count;            // RLock: recursion count
  OwnerSource owner_source = OwnerSource::Unknown;  // LockWord (RLock rlock_owner), Heuristic (suspects) or Unknown
  std::vector<int> suspects;       // Lock: other threads whose innermost frames reference the object
  std::vector<PyFrame> suspect_frames;  // for each suspect, the innermost of its frames that references it
  // Lock: the waiter's own frames outside the one it waits in (outer ones, innermost first) that reference
  // the object: inside `with lock:` there, or holding it after acquire(), the waiter may be its holder.
  std::vector<PyFrame> self_frames;
  // Buffered: repr() of its raw stream's name ("'<stdout>'", "'/tmp/log'", "5"); empty when unreadable.
  std::string stream_name;
  // Where the object was found when no frame references it ("sys.stdout"); empty otherwise.
  std::string found_in;
  std::string frame_function;      // the Python frame whose locals/stack held the object
  std::string frame_file;
  int frame_line = -1;

  // py-condition
  Addr condition = 0;              // the threading.Condition
  Addr condition_lock = 0;         // its _lock: what the waiter must reacquire
  std::string condition_lock_type; // "_thread.RLock" | "_thread.lock" | other type name
  std::optional<bool> condition_lock_locked;
  std::optional<std::uint64_t> condition_lock_owner_thread_id;
  std::optional<int> condition_lock_owner_tid;
  std::optional<std::uint64_t> condition_lock_count;

  // Thread.join (threading.py's `join` or `_wait_for_tstate_lock` among
  // the innermost frames): the Thread object joined (the frame's `self`),
  // 0 when the thread is not joining.  Set whether or not a lock matched
  // (3.13 joins wait on a _ThreadHandle, not on a Python lock).
  Addr join_self = 0;
  std::string join_frame_function;
  // The word 8 bytes before the futex the thread sleeps on: when that futex
  // is the semaphore of a parking-lot wait_entry (3.13+: PyMutex, PyEvent),
  // the address it waits for.  Only ever compared with known addresses
  // (a lock's PyMutex, a ThreadHandle's PyEvent), never trusted alone; 0
  // when not readable.
  Addr parking_address = 0;

  // How it was found: the futex the thread sleeps on (`futex`), and the
  // frame slot the object was in (`slot`, -1 when `found_in` names where;
  // `via_method`: a bound method of it was).
  PyLockFound found = PyLockFound::None;
  Addr futex = 0;
  int slot = -1;
  bool via_method = false;
  ReadProblem problem;   // why nothing (or only part) was found; empty when all is well
  // A futex in none of the lock objects found: what could not be read of the frames scanned for them.
  ReadProblem scan_problem;
};

class LockReferences;

struct LockWaitOptions {
  std::size_t max_frames = 4;    // innermost Python frames scanned (the waiter's; suspects' too)
  std::size_t max_slots = 512;   // locals + stack slots read per frame
  bool suspects = true;          // scan other threads' frames for Lock suspects
  // Every thread's references, read once (LockReferences): suspects are then
  // looked up instead of every thread's frames being read again for each waiter.
  const LockReferences* references = nullptr;
};

// Which threads reference each Python lock object in their innermost frames
// (as the suspects of a Lock are found): read on the first question, then
// asked for any number of waiters, so that n waiters cost one pass over the
// threads' frames, not n.  `memory` and `state` must outlive it.
class LockReferences {
 public:
  LockReferences(MemoryReader& memory, const PythonState& state, const LockWaitOptions& opts = {})
      : memory_(memory), state_(state), opts_(opts) {}
  // (TID, the innermost of its frames that references it) of each thread, in the state's order.
  const std::vector<std::pair<int, PyFrame>>& of(Addr object) const;

 private:
  void read() const;
  MemoryReader& memory_;
  const PythonState& state_;
  LockWaitOptions opts_;
  mutable bool read_ = false;
  mutable std::unordered_map<Addr, std::vector<std::pair<int, PyFrame>>> by_object_;
};

// The `self` of each of a thread's innermost Python frames: the first local
// of the frame, which for a method is the object it was called on (a
// Queue in Queue.get, a Semaphore in Semaphore.acquire).  `self` is 0 and
// `type` empty when the frame has no readable first local.
struct FrameSelf {
  std::size_t index = 0;   // 0 = innermost
  std::string function;
  std::string file;
  int line = -1;
  Addr self = 0;
  std::string type;        // self's type name
};

std::vector<FrameSelf> frame_selves(MemoryReader& memory, const PythonState& state, int tid,
                                    const LockWaitOptions& opts = {});

// A threading lock object as this process has it, for a fork child that
// waits on its copy: fork keeps addresses, so the child's lock at address A
// was the parent's object at A — unless the parent freed it since, or reused
// the address.  The object here is that lock only if it has the child's
// type, is alive (a plausible refcount) and is still locked; `references`
// are the threads whose innermost frames reference it (as a Lock's
// suspects are found), with the innermost such frame.
struct LockObject {
  Addr object = 0;
  std::string type_name;           // "_thread.lock" | "_thread.RLock"; empty when no threading lock is there
  std::optional<std::uint64_t> refcount;
  bool alive = false;              // 1 <= refcount < 2^31: not a freed block
  std::optional<bool> locked;      // Lock: lockobject.locked; RLock: owner != 0
  std::optional<std::uint64_t> owner_thread_id;  // RLock: rlock_owner
  std::optional<int> owner_tid;                  // RLock: the Python thread whose pthread_t that is
  std::vector<std::pair<int, PyFrame>> references;
};

// One LockObject for each of `objects`, in order (at most kMaxLockObjects
// are read; the rest are left out).  `references`: every thread's
// references read once, made here when null.  Never throws on bad memory.
inline constexpr std::size_t kMaxLockObjects = 256;
std::vector<LockObject> lock_objects(MemoryReader& memory, const PythonState& state, const std::vector<Addr>& objects,
                                     const LockReferences* references = nullptr);

// `state` must come from cpython::inspect(target) with frames (Options::frames);
// `tid` is the LWP of the thread; `futex_address` the rdi of its futex(2)
// (from frame 0's registers or /proc/PID/task/TID/syscall).  Without it only
// a guess is possible: the innermost lock object on the stack (confidence
// "guess"); callers should then only ask about threads whose native stack
// shows PyThread_acquire_lock*.  Never throws on bad target memory.
PyLockWait find_python_lock_wait(Target& target, const PythonState& state, int tid,
                                 std::optional<Addr> futex_address, const LockWaitOptions& opts = {});

// The same over any memory (unit tests on synthetic images).  pthread_t →
// TID uses the state's threads, then `pthread_tid` when given.
PyLockWait find_python_lock_wait_memory(MemoryReader& memory, const PythonState& state, int tid,
                                        std::optional<Addr> futex_address, const LockWaitOptions& opts = {},
                                        const std::function<std::optional<int>(std::uint64_t)>& pthread_tid = {});

}  // namespace pyhang::cpython
