// CPython 3.6 - 3.13 as seen from outside: the interpreter's version, its
// thread states with their Python frames, and the GIL, read from target
// memory with no debug symbols (only .dynsym) and no debug build.
//
// Layouts come from tables generated from each version's headers
// (native/src/cpython/layouts/); on 3.13+ the target's own
// _Py_DebugOffsets are read and checked against the table.
//
// Nothing here throws on bad target memory: every object that cannot be
// read or does not look like what it should be ends up as a one-line
// `problem` on the thread it belongs to, or in `PythonState::warnings`,
// and the rest of the state is still returned.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"
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
  std::string function;     // co_qualname (3.11+), else co_name; "<unknown>" if unreadable
  std::string file;         // co_filename
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
  std::optional<CCall> c_call;
};

struct PyThreadInfo {
  Addr tstate = 0;
  Addr interp = 0;
  std::int64_t interp_id = 0;             // 0 for the main interpreter (and on 3.6)
  std::uint64_t thread_id = 0;            // PyThreadState.thread_id: the pthread_t
  std::optional<int> native_tid;          // the LWP, when known
  std::vector<PyFrame> frames;            // innermost first
  std::string problem;                    // why frames may be incomplete; empty when all is well
  std::optional<bool> attached;           // 3.13+: tstate->state == _Py_THREAD_ATTACHED
  bool holds_gil = false;
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
  std::string source;        // how locked/holder were found: "gil-state", "tstate-current", ...
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

struct PythonState {
  Status status = Status::NotPython;
  std::string version;                // "3.11.7"; empty when unknown
  int major = 0, minor = 0, patch = -1;
  std::string library;                // the object holding the interpreter (libpython3.X.so or the executable)
  std::string layout;                 // "3.11.7" the table used, "+ _Py_DebugOffsets" when read
  bool free_threaded = false;         // its _Py_DebugOffsets say it is a free-threaded build (not decoded)
  Addr runtime = 0;                   // _PyRuntime, 0 before 3.7 or when not found
  std::vector<GilInfo> gils;
  std::vector<PyThreadInfo> threads;
  // A garbage collection is running (gc.collecting of the runtime, 3.7 -
  // 3.8, or of the main interpreter, 3.9+); nullopt when not known (3.6 keeps
  // it in a static no symbol names; a word that reads neither 0 nor 1).
  std::optional<bool> gc_collecting;
  std::vector<std::string> warnings;  // one line each
  // The layout the state was read with (generated table, corrected by the
  // target's _Py_DebugOffsets): what every later decoder of this
  // interpreter reads with.  Null when there is none (not Python,
  // unsupported).
  std::shared_ptr<const Layout> effective_layout;
};

struct Options {
  std::size_t max_interpreters = 1024;
  std::size_t max_threads = 100000;  // per interpreter
  std::size_t max_frames = 10000;    // per thread
  std::size_t max_string = 1 << 16;  // characters of one str
  std::size_t max_table = 1 << 22;   // bytes of one line table
  bool frames = true;                // false: threads and GIL only
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
  std::vector<std::string> warnings;
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
