// Layouts CPython keeps out of its installed headers, written by hand, one
// row per minor version: the lock objects of Modules/_threadmodule.c, the
// dict keys object of Objects/dict-common.h (<= 3.10; 3.11+ it is in
// internal/pycore_dict.h and comes from the generated table), and where an
// instance with a "managed dict" keeps its attributes (inline functions of
// internal/pycore_object.h, not offsets a probe can print).
//
// Every row was checked against real memory (x86_64, pyenv 3.6.15 ...
// 3.13.0 and Debian's 3.11.2): testdata/scenarios/py_locks.py holds a Lock
// and an RLock (acquired twice); reading id(obj) showed ob_type at +8, the
// sem_t* at +16 equal to the futex address a blocked acquirer sleeps on
// (/proc/TID/syscall rdi), lockobject.locked (char) = 1 at +32,
// rlockobject.rlock_owner = the holder's pthread_t at +24 and
// rlock_count = 2 at +32.  A field a version does not have is -1.
#pragma once

#include <cstdint>
#include <span>

namespace pyhang::cpython {

// Where an instance of a class with Py_TPFLAGS_MANAGED_DICT keeps its
// attributes (pycore_object.h).
enum class ManagedDict : std::int8_t {
  None,                // no managed dicts (<= 3.10): the dict is at tp_dictoffset
  ValuesAndDict,       // 3.11: PyDictValues* at obj-4 words, PyDictObject* at obj-3 words
  TaggedDictOrValues,  // 3.12: one word at obj-3 words: the dict, or (bit 0 set) the values pointer - 1
  InlineValues,        // 3.13: PyDictValues inline at obj + tp_basicsize (Py_TPFLAGS_INLINE_VALUES,
                       //       valid while .valid != 0), else the dict pointer at obj-3 words
};

struct LockLayout {
  int major = 3;
  int minor = 0;
  const char* source = "";  // the structs this row was written from

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

  // Objects/dict-common.h (<= 3.10): struct _dictkeysobject and
  // PyDictKeyEntry.  3.11+ read these from the generated table.
  std::int64_t dk_size = -1;        // Py_ssize_t dk_size (number of index slots)
  std::int64_t dk_nentries = -1;    // Py_ssize_t dk_nentries
  std::int64_t dk_indices = -1;     // dk_indices[] (3.6: a union, same place)
  std::int64_t entry_size = -1;     // sizeof(PyDictKeyEntry): me_hash, me_key, me_value
  std::int64_t entry_key = -1;
  std::int64_t entry_value = -1;

  ManagedDict managed_dict = ManagedDict::None;
  std::int64_t managed_dict_ptr = -1;    // offset from the object of the dict pointer (or tagged word)
  std::int64_t managed_values_ptr = -1;  // 3.11: offset of the PyDictValues pointer
};

// 3.6 - 3.13: _threadmodule.c's structs did not change in these releases
// (3.6's rlock_owner is `long`, 3.7+ `unsigned long`, 3.13 PyThread_ident_t:
// 8 bytes in all).  3.14 (not covered) makes lockobject hold a PyMutex.
inline constexpr LockLayout kLockLayouts[] = {
#define PYHANG_LOCKOBJECTS .lock_lock = 16, .lock_locked = 32, .lock_size = 40, \
    .rlock_lock = 16, .rlock_owner = 24, .rlock_count = 32, .rlock_size = 48
#define PYHANG_DICT_COMMON .dk_size = 8, .dk_nentries = 32, .dk_indices = 40, \
    .entry_size = 24, .entry_key = 8, .entry_value = 16
    {.minor = 6, .source = "3.6 _threadmodule.c lockobject/rlockobject (long rlock_owner); dict-common.h",
     PYHANG_LOCKOBJECTS, PYHANG_DICT_COMMON},
    {.minor = 7, .source = "3.7 _threadmodule.c; dict-common.h", PYHANG_LOCKOBJECTS, PYHANG_DICT_COMMON},
    {.minor = 8, .source = "3.8 _threadmodule.c; dict-common.h", PYHANG_LOCKOBJECTS, PYHANG_DICT_COMMON},
    {.minor = 9, .source = "3.9 _threadmodule.c; dict-common.h", PYHANG_LOCKOBJECTS, PYHANG_DICT_COMMON},
    {.minor = 10, .source = "3.10 _threadmodule.c; dict-common.h", PYHANG_LOCKOBJECTS, PYHANG_DICT_COMMON},
    {.minor = 11, .source = "3.11 _threadmodule.c; pycore_object.h _PyObject_ValuesPointer/_PyObject_ManagedDictPointer",
     PYHANG_LOCKOBJECTS, .managed_dict = ManagedDict::ValuesAndDict, .managed_dict_ptr = -24,
     .managed_values_ptr = -32},
    {.minor = 12, .source = "3.12 _threadmodule.c; pycore_object.h _PyObject_DictOrValuesPointer",
     PYHANG_LOCKOBJECTS, .managed_dict = ManagedDict::TaggedDictOrValues, .managed_dict_ptr = -24},
    {.minor = 13, .source = "3.13 _threadmodule.c (PyThread_ident_t rlock_owner); pycore_object.h MANAGED_DICT_OFFSET",
     PYHANG_LOCKOBJECTS, .managed_dict = ManagedDict::InlineValues, .managed_dict_ptr = -24},
#undef PYHANG_LOCKOBJECTS
#undef PYHANG_DICT_COMMON
};

inline const LockLayout* lock_layout_for(int major, int minor) {
  for (const auto& l : kLockLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

}  // namespace pyhang::cpython
