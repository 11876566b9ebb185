// Shared pieces of the CPython decoders (cpython_*.cpp): typed access to a
// copied remote struct, the object reader with its caches, code objects.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cpython/bytecode.hpp"
#include "cpython/layouts/layout.hpp"
#include "cpython/layouts/locks.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/unread.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython::detail {

// One remote struct copied once into a local buffer; fields are then read
// through layout offsets.  A field outside the copy, or absent from the
// layout (offset -1), reads as nullopt.
class RemoteStruct {
 public:
  // Copies [addr, addr+size); false (and empty) when any byte is unreadable.
  bool load(MemoryReader& mem, Addr addr, std::size_t size) {
    addr_ = addr;
    bytes_.resize(size);
    if (addr == 0 || size == 0 || !mem.read(addr, bytes_.data(), size)) {
      bytes_.clear();
      return false;
    }
    return true;
  }
  Addr address() const { return addr_; }
  bool loaded() const { return !bytes_.empty(); }

  template <class T>
  std::optional<T> get(std::int64_t offset) const {
    if (offset < 0 || static_cast<std::uint64_t>(offset) + sizeof(T) > bytes_.size()) return std::nullopt;
    T v;
    std::memcpy(&v, bytes_.data() + offset, sizeof(T));
    return v;
  }
  // A pointer field; 0 when absent or outside the copy.
  Addr ptr(std::int64_t offset) const { return get<Addr>(offset).value_or(0); }
  // The address of a field inside the remote struct (for embedded structs).
  Addr field_address(std::int64_t offset) const { return offset < 0 ? 0 : addr_ + offset; }

 private:
  Addr addr_ = 0;
  std::vector<std::uint8_t> bytes_;
};

// Bytes to copy so that every listed field (8 bytes wide at most) is inside.
std::size_t span_of(std::initializer_list<std::int64_t> offsets);

// Pointer values that cannot be user-space objects.
inline bool plausible_pointer(Addr p) { return p >= 0x1000 && p < (Addr{1} << 47) && p % 8 == 0; }

// Reads Python objects: type checks, str, bytes.  Caches type facts.
class ObjectReader {
 public:
  ObjectReader(MemoryReader& mem, const Layout& layout, const Options& opts) : mem_(mem), l_(layout), opts_(opts) {}

  MemoryReader& memory() { return mem_; }
  const Layout& layout() const { return l_; }
  const Options& options() const { return opts_; }

  // tp_name of obj's type; nullopt when unreadable.
  std::optional<std::string> type_name(Addr obj);
  // tp_flags of obj's type.
  std::optional<std::uint64_t> type_flags(Addr obj);

  // A str as UTF-8; nullopt with *problem set when it cannot be read.
  std::optional<std::string> read_str(Addr obj, ReadProblem* problem);
  // The first max_chars characters of a str of any length (at most
  // Options::max_string), as UTF-8; *length is its len().
  std::optional<std::string> read_str_prefix(Addr obj, std::size_t max_chars, std::int64_t* length,
                                             ReadProblem* problem);
  // A bytes object's contents (at most max bytes).
  std::optional<std::vector<std::uint8_t>> read_bytes(Addr obj, std::size_t max, ReadProblem* problem);
  // The first max bytes of a bytes object of any plausible length; *length is its len().
  std::optional<std::vector<std::uint8_t>> read_bytes_prefix(Addr obj, std::size_t max, std::int64_t* length,
                                                             ReadProblem* problem);

 private:
  struct TypeFacts {
    std::optional<std::string> name;
    std::optional<std::uint64_t> flags;
  };
  const TypeFacts* type_of(Addr obj);
  MemoryReader& mem_;
  TypeFacts unread_;  // facts of a type that could not be read this time (not remembered)
  const Layout& l_;
  const Options opts_;  // a copy: callers pass temporaries (the asyncio reader's frame options)
  std::unordered_map<Addr, TypeFacts> types_;
  // Short strs read (dict keys, names: a lookup in a dict of a thousand
  // entries reads every key), while the memory's generation is the same.
  std::unordered_map<Addr, std::string> strs_;
  std::uint64_t strs_generation_ = 0;
};

// What the walkers need from one code object.
struct CodeInfo {
  bool ok = false;
  ReadProblem problem;        // why !ok, or what was partly unreadable
  ErrorReason reason = ErrorReason::Other;  // NotCodeObject: the object is readable but no code object
  SharedText name;            // co_qualname when present, else co_name (every frame of the code shares it)
  SharedText filename;
  int firstlineno = -1;
  std::vector<std::uint8_t> linetable;  // co_lnotab or co_linetable bytes
  bool has_linetable = false;
  Addr code_start = 0;        // first instruction (3.11+ co_code_adaptive); 0 before
  int firsttraceable = 0;     // _co_firsttraceable in code units (3.11+)
  // byte offset → line, as CodeCache::line found it: the frames of a
  // recursion or a thread pool stand at the same few offsets.
  mutable std::unordered_map<std::int64_t, int> lines;
  // ... and byte offset → its span (CodeCache::position), for the same reason.
  mutable std::unordered_map<std::int64_t, Position> positions;
  // Its instructions and their stack depths (3.6 - 3.13), read when a frame's
  // call is first looked at (ccalls.cpp); null until then.
  struct Flow {
    std::vector<std::uint8_t> code;
    StackDepths depths;
  };
  mutable std::shared_ptr<const Flow> flow;
};

class CodeCache {
 public:
  explicit CodeCache(ObjectReader& objects) : objects_(objects) {}
  // Reads (once) and returns the code object at addr.
  const CodeInfo& get(Addr code);
  // Line of a byte offset into this code's instructions.
  int line(const CodeInfo& code, std::int64_t byte_offset) const;
  // Its whole position (3.11+ columns and end line).
  Position position(const CodeInfo& code, std::int64_t byte_offset) const;

 private:
  ObjectReader& objects_;
  std::unordered_map<Addr, CodeInfo> cache_;
};

// A set of addresses, open-addressed in one array: a chain walk checks
// every link against it (one allocation per walk, not one per link).
class AddrSet {
 public:
  // false when `a` was already in the set.
  bool insert(Addr a) {
    if (a == 0) return !std::exchange(zero_, true);
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = slot(a);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == a) return false;
      if (slots_[i] == 0) {
        slots_[i] = a;
        ++size_;
        return true;
      }
    }
  }

 private:
  std::size_t slot(Addr a) const {
    std::uint64_t h = a * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h ^ (h >> 31)) & (slots_.size() - 1);
  }
  void grow() {
    std::vector<Addr> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, old.size() * 2), 0);
    size_ = 0;
    for (Addr a : old)
      if (a != 0) insert(a);
  }
  std::vector<Addr> slots_;
  std::size_t size_ = 0;
  bool zero_ = false;
};

// A walk along a chain of remote objects (frames, thread states): bounded
// and cycle-checked.  next() says why the walk must stop, or "".
// How a walk along a chain ended early: it was longer than allowed, or it
// came back to a link it had seen.
enum class ChainEnd : std::uint8_t { None, TooLong, Loops };

class ChainGuard {
 public:
  // `link` is what one link is (a frame, a thread state, a coroutine).
  ChainGuard(std::size_t max, ReadPart link) : max_(max), link_(link) {}
  // Whether the walk must stop before link `a`, and why.
  ChainEnd end(Addr a) {
    if (++visited_ > max_) return ChainEnd::TooLong;
    if (!seen_.insert(a)) return ChainEnd::Loops;
    return ChainEnd::None;
  }
  // end() as a problem (empty: go on): stopped after max links, or loops at `a`.
  ReadProblem next(Addr a) {
    ReadProblem p;
    switch (end(a)) {
      case ChainEnd::TooLong:
        p = unread(link_, 0, ReadWhy::StoppedAfter);
        p.limit = static_cast<std::int64_t>(max_);
        break;
      case ChainEnd::Loops:
        p = unread(link_, 0, ReadWhy::Loops);
        p.at = a;
        break;
      case ChainEnd::None: break;
    }
    return p;
  }

 private:
  std::size_t max_;
  ReadPart link_;
  std::size_t visited_ = 0;
  AddrSet seen_;
};

// Frames of one thread, innermost first, from its top frame.
// With `both_ends`, a stack deeper than options().max_frames keeps its
// innermost max_frames and its outermost options().outermost_frames (where
// the program entered it), the frames between counted (`omitted`, which
// would stand before frames[max_frames]); the walk then goes on for up to
// options().max_walk links.  Without it, the innermost max_frames only.
struct FrameWalk {
  std::vector<PyFrame> frames;
  ReadProblem problem;
  std::size_t omitted = 0;      // frames between the innermost and the outermost kept
  std::size_t omitted_at = 0;   // their place: the number of innermost frames kept
};
FrameWalk walk_frames(ObjectReader& objects, CodeCache& codes, Addr top_frame, bool both_ends = false);

// The C callable a frame calls (cpython/ccalls.cpp).  callable_depth: how
// many value-stack slots below the stack pointer a call instruction's
// callable is (nullopt: not a call, or the version does not say).
std::optional<std::int64_t> callable_depth(const Layout& l, int opcode, int oparg);
std::optional<CCall> frame_c_call(ObjectReader& objects, CodeCache& codes, const PyFrame& frame);
// Sets c_call of a thread's frames (innermost first) that call C.
void add_c_calls(ObjectReader& objects, CodeCache& codes, std::vector<PyFrame>& frames);

// Thread states and GILs from roots (cpython/threads.cpp, cpython/gil.cpp).
struct InterpInfo {
  Addr address = 0;
  std::int64_t id = 0;
  Addr gil_pointer = 0;  // interp->ceval.gil (3.12+)
};
std::vector<GilInfo> read_gils(ObjectReader& objects, const Roots& roots, const std::vector<InterpInfo>& interps,
                               std::vector<StateWarning>& warnings);

// 3.6 keeps the GIL in static variables of ceval.c (ceval_gil.h) that no
// exported symbol names.  Their pthread objects are found in the machine
// code of exported functions that use them (cpython/gil_statics.cpp): a RIP-relative
// `lea` whose target reaches the first (or second) argument register of a
// call to pthread_mutex_* / pthread_cond_* through the PLT.  Addresses here
// are link-time addresses of the object.
class CodeImage {
 public:
  virtual ~CodeImage() = default;
  // Copies up to n initialised bytes at a link-time address; fewer (or 0)
  // where the object's file ends.
  virtual std::size_t read(Addr link, std::uint8_t* buf, std::size_t n) const = 0;
  virtual bool executable(Addr link) const = 0;
  // [link, link+size) lies in one writable PT_LOAD segment.
  virtual bool writable(Addr link, std::uint64_t size) const = 0;
  // The imported (or interposable) function a GOT slot is bound to by a
  // JUMP_SLOT or GLOB_DAT relocation; empty when none.
  virtual std::string import_at(Addr got_slot) const = 0;
};

struct CodeEntry {
  std::string name;        // for notes only
  Addr link = 0;
  std::uint64_t size = 0;  // st_size; 0 when unknown
};

inline constexpr std::uint64_t kPthreadMutexSize = 40;  // sizeof(pthread_mutex_t), x86-64 glibc
inline constexpr std::uint64_t kPthreadCondSize = 48;   // sizeof(pthread_cond_t)

struct GilStatics {
  Addr gil_mutex = 0, gil_cond = 0, switch_mutex = 0, switch_cond = 0;
  std::vector<ReadProblem> notes;  // what looked wrong
  bool any() const { return gil_mutex || gil_cond || switch_mutex || switch_cond; }
};

// Decodes x86-64 code from each entry (following direct calls to
// non-imported functions, at most two levels deep, with the argument
// registers known at the call).  Bounded: at most 4 KiB per function and
// 48 functions in all; any byte it cannot decode ends that function.
GilStatics decode_gil_statics(const CodeImage& code, const std::vector<CodeEntry>& entries);

// What a _thread.lock or _thread.RLock object says about itself, read with
// the row of its minor that its type's tp_basicsize selects (3.13's
// _thread.lock changed form in a patch release): whether it is held, and an
// RLock's owner pthread_t and recursion count.  The one reader of lock
// state, for lock waits, lock objects and values alike.
struct LockObjectState {
  const LockLayout* row = nullptr;  // the row used (never null when `minor_row` was given)
  std::optional<bool> locked;
  std::optional<std::uint64_t> owner, count;
};
LockObjectState read_lock_object(MemoryReader& mem, const Layout& layout, const LockLayout& minor_row, Addr object,
                                 bool rlock);

// The layout an interpreter is read with, the one rule for every decoder:
// the generated table for its release (layout_for(major, minor, patch)),
// corrected by the target's own _Py_DebugOffsets at `runtime` where the
// version has them (3.13+).
struct EffectiveLayout {
  std::shared_ptr<const Layout> layout;  // null: no table for the version, or refused
  bool debug_offsets = false;            // corrected by the target's _Py_DebugOffsets
  bool free_threaded = false;            // the target says it is a free-threaded build
  std::optional<StateWarning> refused;   // why no layout can be used (layout is then null)
};
EffectiveLayout effective_layout(MemoryReader& mem, const Layout& generated, Addr runtime,
                                 std::vector<StateWarning>& warnings);
EffectiveLayout effective_layout(MemoryReader& mem, int major, int minor, int patch, Addr runtime,
                                 std::vector<StateWarning>& warnings);
// The layout `state` was read with (PythonState::effective_layout), or for a
// state put together elsewhere (a dict from Python, a test), the same rule
// from its version and runtime.  Null when there is no table.
std::shared_ptr<const Layout> layout_of(MemoryReader& mem, const PythonState& state);

// The layout corrected by the target's _Py_DebugOffsets (3.13+); warns on
// each disagreement with the generated table.  When the target's struct is
// absent or implausible the generated table is used as it is (a warning
// says why), except for a stand-in table (Layout::stand_in), which is then
// refused; a free-threaded build is always refused.
// One value _Py_DebugOffsets carries: where it sits in that struct (a dbg_*
// field of the table), which layout field it gives, and the entry holding
// the size of the struct it is an offset into (null where none bounds it).
struct DebugOffsetField {
  std::int64_t Layout::*where;
  std::int64_t Layout::*field;
  std::int64_t Layout::*bound;
};
std::span<const DebugOffsetField> debug_offset_fields();

struct DebugOffsetsReading {
  bool applied = false;        // the layout now holds the target's values
  bool free_threaded = false;  // the target is a free-threaded build
  std::optional<StateWarning> refused;  // the layout must not be used, and why
};
DebugOffsetsReading apply_debug_offsets(MemoryReader& mem, Addr runtime, Layout& layout,
                                        std::vector<StateWarning>& warnings);

}  // namespace pyhang::cpython::detail
