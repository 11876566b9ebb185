// What a fork child inherited, as far as memory and /proc can tell: the
// native half of `fork-hazards` (the rules that turn these facts into
// hazards are in python/pyhang/forks.py).
//
//  - Thread descriptors of threads that did not survive fork
//    (scan_thread_descriptors): fork copies the whole address space, so the
//    stacks of the parent's other threads stay mapped in the child, each
//    with its glibc `struct pthread` at the top (x86_64: TLS above the
//    stack, the TCB header starting the struct: tcbhead_t.tcb at +0 and
//    .self at +16 both point to the struct itself).  The fields are read
//    through the descriptors libc exports for libthread_db
//    (`_thread_db_pthread_tid`, `_cancelhandling`, `_start_routine`): after
//    fork glibc sets the tid of every other descriptor to 0 and keeps the
//    block as a cached stack; a thread that ended by itself set the EXITING
//    bit in cancelhandling first (glibc nptl/descr.h EXITING_BIT 4, the
//    bit libthread_db reports as TD_THR_ZOMBIE).  So: a descriptor that is
//    not one of this process's threads and whose EXITING bit is clear was a
//    thread running in the parent at the moment of fork; its start_routine
//    says what it was (gomp_thread_start in libgomp: OpenMP's pool; the
//    interpreter's thread bootstrap: a Python thread).
//  - glibc-internal locks that fork does not reset (glibc_internal_locks):
//    __exit_funcs_lock is a hidden symbol; its address is decoded from the
//    code of the exported __cxa_finalize (`lea X(%rip),%reg` followed by
//    `lock cmpxchg %r32,(%reg)`: the inlined __libc_lock_lock).
//  - /proc facts of a live child and its parent (process_facts): parent
//    executable, whether the address space is the parent's
//    (same executable, libc and heap at the same addresses: the child did
//    not exec), the parent's threads, and smaps_rollup of the child.
//  - Python-side facts (python_fork_facts): multiprocessing's start method
//    and the current process object, torch.cuda's "initialised" flags,
//    threading._active, and large list/dict/set/tuple globals, read through
//    pyhang/cpython/pyobjects.hpp.
// Nothing here throws on bad memory; each part says in `problem` what it
// could not read.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/target/core_file.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {
class Target;
class AddressSpace;
}  // namespace pyhang

namespace pyhang::fork {

// ---- thread descriptors ---------------------------------------------------

inline constexpr std::uint32_t kExitingBit = 1u << 4;  // glibc nptl/descr.h EXITING_BITMASK

struct ThreadDescriptor {
  Addr address = 0;             // the struct pthread (its pthread_t)
  Addr stack_start = 0;         // the mapping that holds it
  Addr stack_end = 0;
  std::int32_t tid = 0;         // its tid field: 0 after fork (or after the thread ended)
  std::optional<std::uint32_t> cancelhandling;
  bool exited = false;          // EXITING bit set: the thread ended by itself
  Addr start_routine = 0;
};

// What a fork fact could not be read for: a kind, and the number, the other
// number and the text (a path, or another decoder's own words) it names.
enum class ForkProblem : std::uint8_t {
  None,
  UnexpectedTidDescriptor,   // _thread_db_pthread_tid is not one 32-bit field (text: where it came from)
  TooManyMappings,           // more candidate mappings than `number`: the rest not scanned
  MappingsUnknown,           // the target's memory mappings are unknown
  NoLibc,                    // libc is not mapped or cannot be opened
  NoCxaFinalize,             // __exit_funcs_lock has no symbol, libc (text) no __cxa_finalize
  CxaFinalizeUndecoded,      // ... and __cxa_finalize's code no lea / lock cmpxchg pair (text: libc)
  DecodedNotData,            // the address decoded from __cxa_finalize is not in libc's data
  NoExecutables,             // /proc/PID/exe of `number` or of its parent `other` unreadable
  MapsUnreadable,            // /proc/PID/maps unreadable (text: the error)
  NoStat,                    // /proc/PID/stat of `number` unreadable (pyhang.procfs reads it)
  ReaderError,               // the target could not be read at all (text: the path, number: the errno or PID)
};
inline constexpr std::array<Named<ForkProblem>, 12> kForkProblemNames{{
    {ForkProblem::None, "none"},
    {ForkProblem::UnexpectedTidDescriptor, "unexpected-tid-descriptor"},
    {ForkProblem::TooManyMappings, "too-many-mappings"},
    {ForkProblem::MappingsUnknown, "mappings-unknown"},
    {ForkProblem::NoLibc, "no-libc"},
    {ForkProblem::NoCxaFinalize, "no-cxa-finalize"},
    {ForkProblem::CxaFinalizeUndecoded, "cxa-finalize-undecoded"},
    {ForkProblem::DecodedNotData, "decoded-not-data"},
    {ForkProblem::NoExecutables, "no-executables"},
    {ForkProblem::MapsUnreadable, "maps-unreadable"},
    {ForkProblem::NoStat, "no-stat"},
    {ForkProblem::ReaderError, "reader-error"},
}};
constexpr std::string_view to_string(ForkProblem p) { return name_in(kForkProblemNames, p); }

struct ForkIssue {
  ForkProblem kind = ForkProblem::None;
  std::int64_t number = 0, other = 0;
  std::string text;
  explicit operator bool() const { return kind != ForkProblem::None; }
};

struct DescriptorScan {
  std::vector<ThreadDescriptor> descriptors;  // not one of `own`, sorted by address
  std::size_t mappings_scanned = 0;
  ForkIssue problem;
  nptl::DescriptorsIssue descriptors_problem;  // why struct pthread's fields are not known (nptl's descriptors)
};

struct ScanOptions {
  std::uint64_t top_bytes = 1 << 17;   // bytes below a mapping's end searched for the descriptor
  std::size_t max_mappings = 4096;
  std::uint64_t min_mapping = 1 << 16; // smaller anonymous mappings are no thread stacks
};

// Every struct pthread at the top of an anonymous rw mapping, except
// `own` (the struct pthreads of this process's threads: their fs_base).
DescriptorScan scan_thread_descriptors(MemoryReader& memory, const std::vector<Mapping>& mappings,
                                       const nptl::DescriptorResult& fields, const std::vector<Addr>& own,
                                       const ScanOptions& opts = {});
DescriptorScan scan_thread_descriptors(Target& target, const std::vector<Addr>& own, const ScanOptions& opts = {});

// ---- glibc-internal locks -------------------------------------------------

// How a glibc-internal lock's address was found.
enum class LockFound : std::uint8_t {
  Symbol,           // libc's symbol table names it
  CxaFinalizeCode,  // decoded from __cxa_finalize's code (the lock its inlined __libc_lock_lock takes)
};
inline constexpr std::array<Named<LockFound>, 2> kLockFoundNames{{
    {LockFound::Symbol, "symbol"},
    {LockFound::CxaFinalizeCode, "cxa-finalize-code"},
}};
constexpr std::string_view to_string(LockFound f) { return name_in(kLockFoundNames, f); }

struct NamedLock {
  std::string name;    // "__exit_funcs_lock"
  Addr address = 0;    // runtime address
  LockFound found = LockFound::Symbol;
  std::string library;  // the libc it is in (its path)
};
struct InternalLocks {
  std::vector<NamedLock> locks;
  ForkIssue problem;  // what could not be found, and why
};
InternalLocks glibc_internal_locks(const AddressSpace& space);

// The address `lea disp(%rip),%reg ... lock cmpxchg %r32,(%reg)` locks in
// the machine code `code` placed at link address `link` (the first such
// pair, the cmpxchg within `window` bytes of the lea); nullopt when none.
std::optional<Addr> decode_locked_cmpxchg(const std::uint8_t* code, std::size_t size, Addr link,
                                          std::size_t window = 32);

// ---- /proc of a live process ----------------------------------------------

struct ProcessFacts {
  int pid = 0;
  int ppid = 0;
  std::string exe, parent_exe;
  std::string cmdline, parent_cmdline;      // NULs as spaces
  // Same executable and the same addresses of the executable, libc and the
  // heap as the parent: the child's address space is the parent's copy.
  bool same_address_space = false;
  // Where the executable, libc and the heap start in the process and in its
  // parent (0: not mapped): what same_address_space was decided from.
  struct Landmarks {
    Addr exe = 0, libc = 0, heap = 0;
  };
  Landmarks mapped, parent_mapped;
  std::vector<int> parent_threads;          // /proc/PPID/task
  std::vector<std::string> parent_thread_names;
  std::map<std::string, std::uint64_t> smaps_rollup;        // kB, of the child
  std::map<std::string, std::uint64_t> parent_smaps_rollup; // kB
  ForkIssue problem;
};
// `ppid` is the caller's, from /proc/PID/stat: python/pyhang/procfs.py is
// the one reader of that file (its start times too); 0 when not known.
ProcessFacts process_facts(int pid, int ppid);

// Pure parser, exposed for tests.
std::map<std::string, std::uint64_t> parse_smaps_rollup(const std::string& text);

// ---- Python-side facts ----------------------------------------------------

struct BigContainer {
  std::string where;        // "module.name"
  std::string type;         // tp_name
  std::int64_t length = 0;
  Addr address = 0;
  std::int64_t estimated_bytes = 0;  // the container and its first-level items (sampled)
};

struct PythonForkFacts {
  bool multiprocessing = false;        // multiprocessing.context imported
  std::string default_context;         // type of context._default_context._default_context ("ForkContext")
  std::string actual_context;          // ._actual_context type; "" when not fixed yet (None)
  std::string current_process_type;    // multiprocessing.process._current_process
  std::string current_process_name;    // its _name
  std::optional<std::int64_t> parent_pid;  // its _parent_pid
  bool torch = false;                  // torch.cuda imported
  std::optional<bool> cuda_initialized, cuda_in_bad_fork;
  std::optional<std::int64_t> threading_active;  // len(threading._active)
  std::vector<BigContainer> containers;
  std::vector<cpython::ReadProblem> problems;   // what could not be read
};

struct PythonScanOptions {
  std::int64_t min_length = 10000;     // containers at least this long are listed
  std::size_t max_modules = 4000;
  std::size_t max_globals = 20000;     // per module
  std::size_t sample = 64;             // items sampled for the size estimate
  // Scan every module's globals for large containers: it reads an object
  // header per global of every module, so a caller that knows the process
  // is no fork child (where they only matter) can leave it out.
  bool containers = true;
};

PythonForkFacts python_fork_facts(MemoryReader& memory, const cpython::PythonState& state,
                                  const PythonScanOptions& opts = {});

// The large builtin containers among the globals of every module (what
// python_fork_facts() lists in `containers`); problems are added to `problems`.
std::vector<BigContainer> large_containers(MemoryReader& memory, const cpython::PythonState& state,
                                           std::vector<cpython::ReadProblem>& problems,
                                           const PythonScanOptions& opts = {});

}  // namespace pyhang::fork
