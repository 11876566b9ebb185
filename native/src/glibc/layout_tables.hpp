// The glibc lock layouts for x86_64, one named object per struct layout,
// combined into version rows by all_layouts() (declared in
// pyhang/glibc/layouts.hpp).  Offsets follow glibc's own struct definitions:
// bits/struct_mutex.h, bits/struct_rwlock.h, bits/thread-shared-types.h and
// nptl/semaphoreP.h / internal sem layout (struct new_sem), per release.
#pragma once

#include "pyhang/glibc/layouts.hpp"

namespace pyhang::glibc::layouts {

extern const MutexLayout kMutex;          // all supported versions (x86_64 layout unchanged)
extern const RwlockLayout kRwlockPre225;  // __lock, __nr_readers, ... __writer
extern const RwlockLayout kRwlock225;     // __readers, __writers, ... __cur_writer
extern const SemLayout kSemPre221;        // value, private, nwaiters (8 bytes)
extern const SemLayout kSem64;            // 64-bit data: value low, nwaiters high
extern const CondLayout kCondPre225;      // __lock, __futex, ..., __mutex
extern const CondLayout kCond225;         // __wseq, __g1_start, __g_refs, ..., __g_signals (2.25-2.40)
extern const CondLayout kCond241;         // __wseq, __g1_start, __g_size, ..., __g_signals, 2 unused (2.41+)

}  // namespace pyhang::glibc::layouts
