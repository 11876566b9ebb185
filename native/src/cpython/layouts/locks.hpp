// Layouts CPython keeps out of its installed headers, written by hand, one
// row per minor version: the lock objects of Modules/_threadmodule.c, and
// the internal lock of the buffered I/O objects (Modules/_io/bufferedio.c).
// (Dict keys and managed dicts: cpython/layouts/objects.hpp.)
//
// Every row was checked against real memory (x86_64, pyenv 3.6.15 ...
// 3.13.0 and Debian's 3.11.2): testdata/scenarios/py_locks.py holds a Lock
// and an RLock (acquired twice); reading id(obj) showed ob_type at +8, the
// sem_t* at +16 equal to the futex address a blocked acquirer sleeps on
// (/proc/TID/syscall rdi), lockobject.locked (char) = 1 at +32,
// rlockobject.rlock_owner = the holder's pthread_t at +24 and
// rlock_count = 2 at +32.  A field a version does not have is -1.
//
// From Debian's 3.13.5 on (a 3.13 patch release changed it; pyenv's 3.13.0
// has the sem_t form) `_thread.lock` is { PyObject_HEAD; PyMutex lock; }
// (tp_basicsize 24), and from 3.14 `_thread.RLock` is { PyObject_HEAD;
// _PyRecursiveMutex lock { PyMutex mutex; PyThread_ident_t thread; size_t
// level; }; } (tp_basicsize 40).  Read off Debian's 3.13.5, 3.14.10 and
// 3.15.2 in their own root file systems: the PyMutex byte at +16 is 1 while
// held (3 with a parked waiter), the RLock's owner pthread_t at +24 and its
// level at +32 is 1 after two acquires.  A thread blocked on a PyMutex
// sleeps on the semaphore of its own struct wait_entry (Python/parking_lot.c:
// { void *park_arg; uintptr_t addr; _PySemaphore sema; ... }, the sem_t's
// value word first): the futex address it sleeps on is on its own stack and
// the 8 bytes before it hold the address of the PyMutex it waits for, which
// was id(lock) + 16 for both lock types on all three.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace pyhang::cpython {

struct LockLayout {
  int major = 3;
  int minor = 0;
  const char* source = "";  // the structs this row was written from

  // PyObject.ob_refcnt (Include/object.h, PyObject_HEAD of a default build):
  // a live lock object's count is small; pymalloc overwrites a freed block's
  // first word with its free list's link (Objects/obmalloc.c, pymalloc_free).
  std::int64_t object_refcnt = -1;

  // _thread.lock (threading.Lock, Condition waiters' locks): lockobject
  const char* lock_type = "_thread.lock";
  std::int64_t lock_lock = -1;    // PyThread_type_lock lock_lock: malloc'ed sem_t* (USE_SEMAPHORES)
  std::int64_t lock_locked = -1;  // char locked
  std::int64_t lock_mutex = -1;   // PyMutex lock (3.13.5+): bit 0 locked, bit 1 a waiter is parked
  std::int64_t lock_size = -1;    // bytes of lockobject: the type's tp_basicsize tells the rows of a minor apart

  // _thread.RLock (threading.RLock): rlockobject
  const char* rlock_type = "_thread.RLock";
  std::int64_t rlock_lock = -1;   // PyThread_type_lock rlock_lock: sem_t*
  std::int64_t rlock_mutex = -1;  // _PyRecursiveMutex.mutex (3.14+)
  std::int64_t rlock_owner = -1;  // unsigned long / PyThread_ident_t rlock_owner (_PyRecursiveMutex.thread):
                                  // the owner's pthread_t, 0 when free
  std::int64_t rlock_count = -1;  // unsigned long rlock_count: recursion depth (3.14+: level, one less)
  bool rlock_count_is_level = false;  // rlock_count holds _PyRecursiveMutex.level: acquisitions beyond the first
  std::int64_t rlock_size = -1;

  // _queue.SimpleQueue (queue.SimpleQueue, 3.7+: Modules/_queuemodule.c
  // simplequeueobject).  Up to 3.12 { PyObject_HEAD; PyThread_type_lock
  // lock; int locked; ... }: a get on an empty queue sleeps on that sem_t;
  // from 3.13 { PyObject_HEAD; bool has_threads_waiting; RingBuf buf; ... }:
  // a get parks (parking lot) on &has_threads_waiting.  Checked against real
  // memory (Debian's 3.11.2 and 3.13.5, pyenv 3.7 ... 3.13.0): a thread blocked
  // in q.get() sleeps on the futex at the word id(q) + 16 points to (3.7 -
  // 3.12), or its wait_entry names id(q) + 16 (3.13+).
  const char* simplequeue_type = "_queue.SimpleQueue";
  std::int64_t simplequeue_lock = -1;     // PyThread_type_lock lock: sem_t*
  std::int64_t simplequeue_parked = -1;   // bool has_threads_waiting: what a getter parks on

  // The PyThread_type_lock a lock object points to: on Linux (USE_SEMAPHORES
  // in Python/thread_pthread.h) a malloc'ed glibc sem_t, whose 32-bit value
  // word at +0 is the futex a blocked acquirer sleeps on.  A futex address
  // in [lock, lock + lock_wait_bytes) belongs to that lock.
  std::int64_t lock_wait_bytes = 32;  // sizeof(sem_t) on x86_64
  // A PyMutex waiter's futex word minus this is its wait_entry.addr.
  std::int64_t parked_addr_before_futex = 8;
};

// 3.6 - 3.13.0: _threadmodule.c's structs did not change in these releases
// (3.6's rlock_owner is `long`, 3.7+ `unsigned long`, 3.13 PyThread_ident_t:
// 8 bytes in all).  A minor with two rows: the first is the default, the
// other is chosen by the lock type's tp_basicsize (lock_layout_for below).
inline constexpr LockLayout kLockLayouts[] = {
#define PYHANG_LOCKOBJECTS .object_refcnt = 0, .lock_lock = 16, .lock_locked = 32, .lock_size = 40, \
    .rlock_lock = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_size = 48
    {.minor = 6, .source = "3.6 _threadmodule.c lockobject/rlockobject (long rlock_owner); no _queue",
     PYHANG_LOCKOBJECTS},
#undef PYHANG_LOCKOBJECTS
#define PYHANG_LOCKOBJECTS .object_refcnt = 0, .lock_lock = 16, .lock_locked = 32, .lock_size = 40, \
    .rlock_lock = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_size = 48, .simplequeue_lock = 16
    {.minor = 7, .source = "3.7 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 8, .source = "3.8 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 9, .source = "3.9 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 10, .source = "3.10 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 11, .source = "3.11 _threadmodule.c",
     PYHANG_LOCKOBJECTS},
    {.minor = 12, .source = "3.12 _threadmodule.c",
     PYHANG_LOCKOBJECTS},
    {.minor = 13, .source = "3.13.0 _threadmodule.c (PyThread_ident_t rlock_owner), _queuemodule.c (parking lot)",
     .object_refcnt = 0, .lock_lock = 16, .lock_locked = 32, .lock_size = 40,
     .rlock_lock = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_size = 48, .simplequeue_parked = 16},
    {.minor = 13, .source = "3.13.5 _threadmodule.c (lockobject holds a PyMutex; rlockobject as 3.13.0)",
     .object_refcnt = 0, .lock_mutex = 16, .lock_size = 24,
     .rlock_lock = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_size = 48, .simplequeue_parked = 16},
#undef PYHANG_LOCKOBJECTS
#define PYHANG_PYMUTEX_LOCKOBJECTS .object_refcnt = 0, .lock_mutex = 16, .lock_size = 24, \
    .rlock_mutex = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_count_is_level = true, .rlock_size = 40, \
    .simplequeue_parked = 16
    {.minor = 14, .source = "3.14 _threadmodule.c (PyMutex lock, _PyRecursiveMutex rlock)", PYHANG_PYMUTEX_LOCKOBJECTS},
    {.minor = 15, .source = "3.15 _threadmodule.c (PyMutex lock, _PyRecursiveMutex rlock)", PYHANG_PYMUTEX_LOCKOBJECTS},
#undef PYHANG_PYMUTEX_LOCKOBJECTS
};

inline const LockLayout* lock_layout_for(int major, int minor) {
  for (const auto& l : kLockLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

// The row for a lock object of `minor` whose type has this tp_basicsize:
// the row whose lock_size (for _thread.lock) or rlock_size (_thread.RLock)
// matches, else the minor's first row.
inline const LockLayout* lock_layout_for(int major, int minor, bool rlock, std::int64_t basicsize) {
  for (const auto& l : kLockLayouts)
    if (l.major == major && l.minor == minor && (rlock ? l.rlock_size : l.lock_size) == basicsize) return &l;
  return lock_layout_for(major, minor);
}

// io.BufferedWriter / BufferedReader / BufferedRandom are one C struct,
// `buffered` (Modules/_io/bufferedio.c), whose `lock` (a PyThread_type_lock:
// a malloc'ed sem_t, as above) serialises every operation; ENTER_BUFFERED
// stores the acquirer's PyThread_get_thread_ident() (its pthread_t) in
// `owner` and LEAVE_BUFFERED clears it before releasing.  A thread that
// finds it taken sleeps in _enter_buffered_busy → PyThread_acquire_lock on
// that sem_t.  A TextIOWrapper (Modules/_io/textio.c, struct `textio`)
// points to its buffered object in `buffer`.
//
// Checked against real memory on x86_64, pyenv 3.6.15 ... 3.13.0 and
// Debian's 3.11.2: for `f = open(pipe_fd, "w")`, the word at id(f) + 32 is
// id(f.buffer), at id(f.buffer) + 16 id(f.buffer.raw), at + 120 the
// buffer_size (4096), and while another thread blocks inside
// f.buffer.write() on a full pipe, the word at + 112 equals that thread's
// threading.get_ident(); type(f.buffer).__basicsize__ is 152 in all.
struct BufferedLayout {
  int major = 3;
  int minor = 0;
  const char* source = "";
  std::array<const char*, 3> types{"_io.BufferedWriter", "_io.BufferedReader", "_io.BufferedRandom"};
  std::int64_t raw = -1;         // PyObject *raw: the FileIO (its `name` attribute names the stream)
  std::int64_t lock = -1;        // PyThread_type_lock lock: sem_t*, or a malloc'ed PyMutex where
                                 // PyThread_type_lock is one (a waiter then parks: LockLayout)
  std::int64_t owner = -1;       // volatile unsigned long (3.13: PyThread_ident_t) owner: the holder's pthread_t
  std::int64_t size = -1;        // bytes of `buffered`
  const char* textio_type = "_io.TextIOWrapper";
  std::int64_t textio_buffer = -1;  // textio: PyObject *buffer, after PyObject_HEAD, int ok, int detached,
                                    // Py_ssize_t chunk_size
};

// `buffered` kept these fields, in this order, from 3.6 to 3.15 (the same
// words read off Debian's 3.13.5, 3.14.10 and 3.15.2, __basicsize__ 152): after
// PyObject_HEAD, raw, int ok/detached/readable/writable, char finalizing,
// int fast_closed_checks, Py_off_t abs_pos, char *buffer, Py_off_t
// pos/raw_pos/read_end/write_pos/write_end, then lock and owner.
inline constexpr BufferedLayout kBufferedLayouts[] = {
#define PYHANG_BUFFERED .raw = 16, .lock = 104, .owner = 112, .size = 152, .textio_buffer = 32
    {.minor = 6, .source = "3.6 Modules/_io/bufferedio.c buffered, textio.c textio", PYHANG_BUFFERED},
    {.minor = 7, .source = "3.7 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 8, .source = "3.8 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 9, .source = "3.9 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 10, .source = "3.10 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 11, .source = "3.11 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 12, .source = "3.12 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 13, .source = "3.13 Modules/_io/bufferedio.c (PyThread_ident_t owner), textio.c", PYHANG_BUFFERED},
    {.minor = 14, .source = "3.14 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
    {.minor = 15, .source = "3.15 Modules/_io/bufferedio.c, textio.c", PYHANG_BUFFERED},
#undef PYHANG_BUFFERED
};

inline const BufferedLayout* buffered_layout_for(int major, int minor) {
  for (const auto& l : kBufferedLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

}  // namespace pyhang::cpython
