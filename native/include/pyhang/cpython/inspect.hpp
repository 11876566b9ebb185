// CPython 3.6 - 3.13 as seen from outside: the interpreter's version, its
// thread states with their Python frames, and the GIL, read from target
// memory with no debug symbols (only .dynsym) and no debug build.
//
// Layouts come from tables generated from each version's headers
// (native/src/cpython/layouts/); on 3.13+ the target's own
// _Py_DebugOffsets are read and checked against the table.
//
// Nothing here throws on bad target memory: every object that cannot be
// read or does not look like what it should be ends up as a `problem` (a
// ReadProblem) on the thread it belongs to, or in `PythonState::warnings`,
// and the rest of the state is still returned.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/base/shared_text.hpp"
#include "pyhang/cpython/unread.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {
class Target;
struct LoadedObject;
}  // namespace pyhang

namespace pyhang::cpython {

struct Layout;  // native/src/cpython/layouts/layout.hpp

// One Python frame.
// The C callable a Python frame is calling (cpython/ccalls.cpp): read from
// the frame's value stack at the slot its CALL instruction names, where the
// frame records its stack pointer during the call (3.14+).
struct CCall {
  Addr callable = 0;
  std::string type;      // its type: builtin_function_or_method, method_descriptor, ...
  std::string name;      // "sleep"
  std::string qualname;  // "time.sleep", "list.sort", "_thread.lock.acquire"
  std::string repr;      // repr(callable) as CPython writes it
  // Its name is one the frame's code uses (co_names): the slot is the
  // callable the instruction loaded, not a leftover; false: likely only.
  bool name_in_code = false;
  bool operator==(const CCall&) const = default;
};

struct PyFrame {
  // co_qualname (3.11+), else co_name; "<unknown>" if unreadable.  Shared by every frame of the code
  // object (pyhang/base/shared_text.hpp).
  SharedText function;
  SharedText file;          // co_filename
  int line = -1;            // -1 when unknown
  bool entry_frame = false; // C called into the eval loop here (3.11+; always false up to 3.10)
  Addr frame = 0;           // the PyFrameObject / _PyInterpreterFrame
  Addr code = 0;            // the code object
  // The instruction's span from the 3.11+ location table, as co_positions()
  // gives it (columns are UTF-8 byte offsets, end_col exclusive); -1 when
  // the table has none or the version records none (<= 3.10).
  int end_line = -1;
  int col = -1;
  int end_col = -1;
  // The C callable this frame calls: for the innermost frame, or a frame
  // whose newer neighbour C called into the evaluation loop; none when not
  // known (versions that record no stack pointer during a call: <= 3.13).
  // Held apart (most frames call none): a thread's frames stay small.
  std::shared_ptr<const CCall> c_call;
};

struct PyThreadInfo {
  Addr tstate = 0;
  Addr interp = 0;
  std::int64_t interp_id = 0;             // 0 for the main interpreter (and on 3.6)
  std::uint64_t thread_id = 0;            // PyThreadState.thread_id: the pthread_t
  std::optional<int> native_tid;          // the LWP, when known
  std::vector<PyFrame> frames;            // innermost first
  // A stack deeper than Options::max_frames: its innermost max_frames and
  // outermost Options::outermost_frames are in `frames`, this many between
  // them are not, and would stand before frames[frames_omitted_at].
  std::size_t frames_omitted = 0;
  std::size_t frames_omitted_at = 0;
  ReadProblem problem;                    // why frames may be incomplete; empty when all is well
  std::optional<bool> attached;           // 3.13+: tstate->state == _Py_THREAD_ATTACHED
  bool holds_gil = false;
  // Options::digest_frames: frames_digest() of the frames walked, which `frames` does not keep.
  std::optional<std::uint64_t> frames_digest;
};

struct AddrRange {
  Addr start = 0;
  std::uint64_t size = 0;
  bool contains(Addr a) const { return start != 0 && a >= start && a - start < size; }
};

struct GilInfo {
  // The GIL state: 3.7+ struct _gil_runtime_state.  3.6, where the GIL is a
  // set of static variables: the block of its pthread objects (gil_mutex,
  // gil_cond, switch_mutex, switch_cond) when they were decoded and lie
  // together, else the static int gil_locked.  0 when not located.
  Addr address = 0;
  std::uint64_t size = 0;    // bytes: futex/cond/mutex addresses in [address, address+size) belong to it
  // Each piece of the GIL exactly.  3.7+: [address, size) alone.  3.6:
  // gil_locked (4), gil_mutex (40), gil_cond (48), switch_mutex (40),
  // switch_cond (48), those that were decoded, in that order.
  // gil_for_wait_address() checks [address, size) and every range.
  std::vector<AddrRange> ranges;
  std::optional<bool> locked;
  Addr holder_tstate = 0;    // the holder when locked, else 0
  std::optional<std::uint64_t> switch_number;
  std::int64_t interp_id = -1;  // -1 when process-wide (< 3.12)
  std::string source;        // how locked/holder were found: "gil-state", "not-created" (its locked word -1: the
                             // GIL does not exist yet), "tstate-current", "unreadable"
};

// What was found of the interpreter.
enum class Status : std::uint8_t {
  Ok,           // running: threads and frames were walked
  NotPython,    // no CPython interpreter in the target
  Starting,     // not initialised yet
  Finalizing,   // shutting down
  Unsupported,  // a CPython version pyhang has no layout for
  Unreadable,   // the runtime state could not be read
};

inline constexpr std::array<Named<Status>, 6> kStatusNames{{
    {Status::Ok, "ok"},
    {Status::NotPython, "not-python"},
    {Status::Starting, "starting"},
    {Status::Finalizing, "finalizing"},
    {Status::Unsupported, "unsupported"},
    {Status::Unreadable, "unreadable"},
}};
constexpr std::string_view to_string(Status s) { return name_in(kStatusNames, s); }
constexpr std::optional<Status> parse_status(std::string_view s) { return parse_in(kStatusNames, s); }

// What about the interpreter's state could not be read or trusted: a kind,
// and the addresses, numbers and text (a version, a path) it names.
enum class StateProblem : std::uint8_t {
  NoLayoutTable,          // no layout table for CPython `text` (a version; empty: unknown)
  DebugOffsetsOnly,       // none for `text`: read with its own _Py_DebugOffsets, the rest as in `text2`
  RuntimeUnreadable,      // the runtime state at `address` unreadable
  TooManyInterpreters,    // more interpreters than `count`: the rest not read
  InterpretersLoop,       // the list of interpreters loops at `address`
  InterpreterUnreadable,  // interpreter state at `address` unreadable
  InterpreterIdOdd,       // interpreter `address` has id `number` (a layout mismatch?)
  MainNotListed,          // interpreters.main `address` is not in the list
  MainIdNotZero,          // the main interpreter has id `number`
  TooManyThreads,         // interpreter `number`: more thread states than `count`, the rest not read
  ThreadsLoop,            // interpreter `number`: its thread states loop at `address`
  ThreadStateUnreadable,  // interpreter `number`: thread state at `address` unreadable, later ones not listed
  ThreadOfOtherInterp,    // thread state `address` ->interp = `other`, expected `expected`: its threads not listed
  ThreadPrevMismatch,     // thread state `address` ->prev = `other`, expected `expected`
  CurrentNotListed,       // the current thread state `address` is in no thread list
  GilUnreadable,          // the GIL state at `address` unreadable
  GilLockedOdd,           // the GIL at `address` has locked = `number` (`count` 0: unreadable)
  GilHolderOdd,           // the GIL at `address` has last_holder `other`
  NoGilRelocations,       // `text` (a path) has no relocations to find the GIL's mutex and condvar
  GilStaticsUndecoded,    // the GIL's `text2` (ReadPart names: "mutex", "condition-variable", "mutex+condition-variable")
                          // not decoded in `text`; `notes`: what the decoder found wrong
  InterpHeadUndecoded,    // PyInterpreterState_Head not decoded in `text` (a path)
  VersionNotFound,        // no CPython version in `text` (a path)
  PatchNotFound,          // no patch level in `text` (a path): the 3.`number` layout assumed
  GilHolderDisagrees,     // the GIL's last_holder `address`, but the current thread state `other` (trusted)
  // The target's _Py_DebugOffsets (3.13+) cannot be used; `count` 1: nothing
  // else can (a release without a table of its own: refused), else the
  // generated table `text3` is used instead.
  DebugOffsetsUnreadable,
  DebugOffsetsNoCookie,   // _PyRuntime does not start with the cookie
  DebugOffsetsVersion,    // they say version `text`, not `text2`
  DebugOffsetsImplausible,  // an offset (`number`) beyond its struct
  NoRuntime,              // no _PyRuntime to read them from, and no table for 3.`number` (refused)
  FreeThreaded,           // a free-threaded build of CPython `text2` (refused: only GIL builds are read)
  DebugOffsetsDiffer,     // they differ from the generated `text3` table in `number` fields (`text`: the first,
                          // "old->new"): the target's are used
  // asyncio's reader (3.14+) corrected by the target's own `text3` (_AsyncioDebug, or the generator fields of
  // _Py_DebugOffsets), against the hand-written row for CPython `text`:
  AsyncioDebugUnreadable,   // `text3` at `address` unreadable: the row used
  AsyncioDebugImplausible,  // `text3`'s `text2` (`number`; -1: unreadable) beyond its struct of `count` bytes: the row
  AsyncioDebugDiffer,       // `text3` differs from the row in `changes`: the target's used
};

inline constexpr std::array<Named<StateProblem>, 34> kStateProblemNames{{
    {StateProblem::NoLayoutTable, "no-layout-table"},
    {StateProblem::DebugOffsetsOnly, "debug-offsets-only"},
    {StateProblem::RuntimeUnreadable, "runtime-unreadable"},
    {StateProblem::TooManyInterpreters, "too-many-interpreters"},
    {StateProblem::InterpretersLoop, "interpreters-loop"},
    {StateProblem::InterpreterUnreadable, "interpreter-unreadable"},
    {StateProblem::InterpreterIdOdd, "interpreter-id-odd"},
    {StateProblem::MainNotListed, "main-not-listed"},
    {StateProblem::MainIdNotZero, "main-id-not-zero"},
    {StateProblem::TooManyThreads, "too-many-threads"},
    {StateProblem::ThreadsLoop, "threads-loop"},
    {StateProblem::ThreadStateUnreadable, "thread-state-unreadable"},
    {StateProblem::ThreadOfOtherInterp, "thread-of-other-interpreter"},
    {StateProblem::ThreadPrevMismatch, "thread-prev-mismatch"},
    {StateProblem::CurrentNotListed, "current-not-listed"},
    {StateProblem::GilUnreadable, "gil-unreadable"},
    {StateProblem::GilLockedOdd, "gil-locked-odd"},
    {StateProblem::GilHolderOdd, "gil-holder-odd"},
    {StateProblem::NoGilRelocations, "no-gil-relocations"},
    {StateProblem::GilStaticsUndecoded, "gil-statics-undecoded"},
    {StateProblem::InterpHeadUndecoded, "interp-head-undecoded"},
    {StateProblem::VersionNotFound, "version-not-found"},
    {StateProblem::PatchNotFound, "patch-not-found"},
    {StateProblem::GilHolderDisagrees, "gil-holder-disagrees"},
    {StateProblem::DebugOffsetsUnreadable, "debug-offsets-unreadable"},
    {StateProblem::DebugOffsetsNoCookie, "debug-offsets-no-cookie"},
    {StateProblem::DebugOffsetsVersion, "debug-offsets-version"},
    {StateProblem::DebugOffsetsImplausible, "debug-offsets-implausible"},
    {StateProblem::NoRuntime, "no-runtime"},
    {StateProblem::FreeThreaded, "free-threaded"},
    {StateProblem::DebugOffsetsDiffer, "debug-offsets-differ"},
    {StateProblem::AsyncioDebugUnreadable, "asyncio-debug-unreadable"},
    {StateProblem::AsyncioDebugImplausible, "asyncio-debug-implausible"},
    {StateProblem::AsyncioDebugDiffer, "asyncio-debug-differ"},
}};
constexpr std::string_view to_string(StateProblem p) { return name_in(kStateProblemNames, p); }

// A field a target's own debug-offsets struct gives another value than the
// table pyhang has (`was`) for it (`now`, which is used).
struct FieldChange {
  std::string name;
  std::int64_t was = 0, now = 0;
  bool operator==(const FieldChange&) const = default;
};

struct StateWarning {
  StateProblem kind = StateProblem::NoLayoutTable;
  Addr address = 0, other = 0, expected = 0;
  std::int64_t number = 0, count = 0;
  std::string text, text2, text3;
  std::vector<ReadProblem> notes;    // GilStaticsUndecoded: what the decoder found wrong
  std::vector<FieldChange> changes;  // AsyncioDebugDiffer: each field that differs
};

// How the layout table used relates to the release read.
enum class LayoutBasis : std::uint8_t {
  Generated,        // the table was generated from this release's headers
  StandIn,          // a newer minor than every table: read through its _Py_DebugOffsets, the table standing in
  ProbedIdentical,  // another patch level, whose headers were probed identical
  NotProbed,        // another patch level, not probed: run-time checks only
};

inline constexpr std::array<Named<LayoutBasis>, 4> kLayoutBasisNames{{
    {LayoutBasis::Generated, "generated"},
    {LayoutBasis::StandIn, "stand-in"},
    {LayoutBasis::ProbedIdentical, "probed-identical"},
    {LayoutBasis::NotProbed, "not-probed"},
}};
constexpr std::string_view to_string(LayoutBasis b) { return name_in(kLayoutBasisNames, b); }

struct PythonState {
  Status status = Status::NotPython;
  std::string version;                // "3.11.7"; empty when unknown
  int major = 0, minor = 0, patch = -1;
  std::string library;                // the object holding the interpreter (libpython3.X.so or the executable)
  std::string layout;                 // "3.11.7": the table used (the release it was generated from)
  LayoutBasis layout_basis = LayoutBasis::Generated;  // how that table relates to `version`
  bool layout_debug_offsets = false;  // corrected by the target's own _Py_DebugOffsets
  bool free_threaded = false;         // its _Py_DebugOffsets say it is a free-threaded build (not decoded)
  Addr runtime = 0;                   // _PyRuntime, 0 before 3.7 or when not found
  std::vector<GilInfo> gils;
  std::vector<PyThreadInfo> threads;
  // A garbage collection is running (gc.collecting of the runtime, 3.7 -
  // 3.8, or of the main interpreter, 3.9+); nullopt when not known (3.6 keeps
  // it in a static no symbol names; a word that reads neither 0 nor 1).
  std::optional<bool> gc_collecting;
  std::vector<StateWarning> warnings;
  // The layout the state was read with (generated table, corrected by the
  // target's _Py_DebugOffsets): what every later decoder of this
  // interpreter reads with.  Null when there is none (not Python,
  // unsupported).
  std::shared_ptr<const Layout> effective_layout;
};

struct Options {
  std::size_t max_interpreters = 1024;
  std::size_t max_threads = 100000;  // per interpreter
  std::size_t max_frames = 10000;    // per thread: the innermost kept
  std::size_t outermost_frames = 1000;   // per thread deeper than max_frames: the outermost kept too
  std::size_t max_walk = 1000000;    // per thread: frames walked to reach the outermost
  std::size_t max_string = 1 << 16;  // characters of one str
  std::size_t max_table = 1 << 22;   // bytes of one line table
  bool frames = true;                // false: threads and GIL only
  // true: each thread's frames are kept only as their digest (PyThreadInfo::frames_digest), for a read
  // that is only compared with another (state_moves): a few bytes a thread, not its frames.
  bool digest_frames = false;
};

// Finds the interpreter in the target (only .dynsym is used), walks every
// interpreter, thread and frame.  Never throws on bad target memory.
PythonState inspect(Target& target, const Options& opts = {});

// Where the interpreter is, as found by locate(); also what tests build by
// hand around a synthetic memory image.
struct Roots {
  Addr runtime = 0;              // _PyRuntime (3.7+)
  Addr interp_head_var = 0;      // address of the static interp_head (3.6)
  Addr tstate_current_var = 0;   // address of _PyThreadState_Current (3.6)
  Addr finalizing_var = 0;       // address of _Py_Finalizing (3.6)
  Addr gil_locked_var = 0;       // address of the static gil_locked (3.6), when decoded
  Addr gil_mutex_var = 0;        // static pthread_mutex_t gil_mutex (3.6), when decoded
  Addr gil_cond_var = 0;         // static pthread_cond_t gil_cond (3.6)
  Addr switch_mutex_var = 0;     // static pthread_mutex_t switch_mutex (3.6)
  Addr switch_cond_var = 0;      // static pthread_cond_t switch_cond (3.6)
};

struct Located {
  std::string version;  // "3.11.7", "3.10.13"
  int major = 0, minor = 0, patch = -1;
  std::string library;
  Roots roots;
  std::vector<StateWarning> warnings;
};

// Finds the interpreter and its version in the objects the target maps.
std::optional<Located> locate(Target& target);

// inspect() with the interpreter already located (nullopt: not Python).
PythonState inspect(Target& target, const std::optional<Located>& located, const Options& opts = {});

// Walks from known roots with a given layout: inspect() after locate(), and
// the entry point of tests on synthetic memory images.
PythonState inspect_memory(MemoryReader& memory, const Layout& layout, const Roots& roots,
                           const Options& opts = {});

// What differs between two reads of the interpreter of a process that ran
// between them (pyhang report --no-stop).
struct StateMoves {
  // The native TIDs of `first`'s threads whose Python frames differ in
  // function, file, line or entry in `again` (or which `again` does not
  // have), in `first`'s order.
  std::vector<int> moved;
  // Whether who holds a GIL differs: each GIL's address, locked and holder,
  // or the threads that say they hold one.
  bool gil_moved = false;
};
StateMoves state_moves(const PythonState& first, const PythonState& again);

// Appends the addresses whose pages hold `thread`'s innermost `frames` frames (each one's header and
// first slots: its locals): what a question about those frames reads first (in_prefetched_runs).
void innermost_frame_pages(const PyThreadInfo& thread, std::size_t frames, std::vector<Addr>& into);

// What state_moves compares of a thread's frames (each one's function, file, line and entry flag, in
// order), hashed: equal for frames state_moves finds the same; for frames that differ, equal only by a
// 64-bit hash's collision.
std::uint64_t frames_digest(const std::vector<PyFrame>& frames);

// Is a futex/cond/mutex address a thread sleeps on part of a GIL?  Returns
// the GilInfo it belongs to, or null.
const GilInfo* gil_for_wait_address(const PythonState& state, Addr futex_addr);

// The thread holding the GIL of its interpreter, or null.
const PyThreadInfo* gil_holder(const PythonState& state);

// Where an instruction is in the source: co_positions() of one instruction.
struct Position {
  int line = -1, end_line = -1, col = -1, end_col = -1;
};

// "3.11.7 (Py_Version)", pure helpers exposed for tests.
std::string version_from_hex(std::uint32_t py_version_hex);  // 0x030B07F0 -> "3.11.7"
// Line of a byte offset into the code, by the line-table format of the
// layout; -1 when the table says "no line".
int line_for_offset(const Layout& layout, const std::vector<std::uint8_t>& table, int firstlineno,
                    std::int64_t byte_offset);
// The whole position of a byte offset: the line as line_for_offset gives it,
// and the end line and columns the 3.11+ location table records (-1 else).
Position position_for_offset(const Layout& layout, const std::vector<std::uint8_t>& table, int firstlineno,
                             std::int64_t byte_offset);

}  // namespace pyhang::cpython
