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
  std::int64_t lock_size = -1;    // bytes of lockobject

  // _thread.RLock (threading.RLock): rlockobject
  const char* rlock_type = "_thread.RLock";
  std::int64_t rlock_lock = -1;   // PyThread_type_lock rlock_lock: sem_t*
  std::int64_t rlock_owner = -1;  // unsigned long / PyThread_ident_t rlock_owner: the owner's pthread_t, 0 when free
  std::int64_t rlock_count = -1;  // unsigned long rlock_count: recursion depth
  std::int64_t rlock_size = -1;

  // The PyThread_type_lock a lock object points to: on Linux (USE_SEMAPHORES
  // in Python/thread_pthread.h) a malloc'ed glibc sem_t, whose 32-bit value
  // word at +0 is the futex a blocked acquirer sleeps on.  A futex address
  // in [lock, lock + lock_wait_bytes) belongs to that lock.
  std::int64_t lock_wait_bytes = 32;  // sizeof(sem_t) on x86_64
};

// 3.6 - 3.13: _threadmodule.c's structs did not change in these releases
// (3.6's rlock_owner is `long`, 3.7+ `unsigned long`, 3.13 PyThread_ident_t:
// 8 bytes in all).  3.14 (not covered) makes lockobject hold a PyMutex.
inline constexpr LockLayout kLockLayouts[] = {
#define PYHANG_LOCKOBJECTS .object_refcnt = 0, .lock_lock = 16, .lock_locked = 32, .lock_size = 40, \
    .rlock_lock = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_size = 48
    {.minor = 6, .source = "3.6 _threadmodule.c lockobject/rlockobject (long rlock_owner)",
     PYHANG_LOCKOBJECTS},
    {.minor = 7, .source = "3.7 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 8, .source = "3.8 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 9, .source = "3.9 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 10, .source = "3.10 _threadmodule.c", PYHANG_LOCKOBJECTS},
    {.minor = 11, .source = "3.11 _threadmodule.c",
     PYHANG_LOCKOBJECTS},
    {.minor = 12, .source = "3.12 _threadmodule.c",
     PYHANG_LOCKOBJECTS},
    {.minor = 13, .source = "3.13 _threadmodule.c (PyThread_ident_t rlock_owner)",
     PYHANG_LOCKOBJECTS},
#undef PYHANG_LOCKOBJECTS
};

inline const LockLayout* lock_layout_for(int major, int minor) {
  for (const auto& l : kLockLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
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
  std::int64_t lock = -1;        // PyThread_type_lock lock: sem_t*
  std::int64_t owner = -1;       // volatile unsigned long (3.13: PyThread_ident_t) owner: the holder's pthread_t
  std::int64_t size = -1;        // bytes of `buffered`
  const char* textio_type = "_io.TextIOWrapper";
  std::int64_t textio_buffer = -1;  // textio: PyObject *buffer, after PyObject_HEAD, int ok, int detached,
                                    // Py_ssize_t chunk_size
};

// `buffered` kept these fields, in this order, from 3.6 to 3.13: after
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
#undef PYHANG_BUFFERED
};

inline const BufferedLayout* buffered_layout_for(int major, int minor) {
  for (const auto& l : kBufferedLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

}  // namespace pyhang::cpython
