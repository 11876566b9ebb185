// The Python lock a blocked thread waits on (see pyhang/cpython/locks.hpp):
// lock objects on the innermost frames' locals and value stack, matched to
// the futex the thread sleeps on; RLock owners; a Condition's own lock read
// from the Condition's attributes; the internal lock of buffered I/O objects
// and its recorded owner.
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/locks.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "cpython/internal.hpp"
#include "cpython/layouts/locks.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::cpython {

namespace {

using detail::plausible_pointer;
using detail::RemoteStruct;
using detail::span_of;

std::string basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A lock object referenced from a frame.
struct Ref {
  Addr object = 0;
  std::string type;          // its type name
  std::size_t frame = 0;     // index into the thread's frames (0 = innermost)
  std::size_t slot = 0;      // index into the frame's locals + stack
  bool via_method = false;   // found as the __self__ of a bound method
  std::string method;        // ... that method's name, for a C method (`__exit__`: a `with` block in progress)
  bool in_stack = false;     // in the frame's value stack (else a local, cell or free variable)
  std::string found_in;      // "sys.stdout": found through a module, not on a frame
};

class LockFinder {
 public:
  LockFinder(MemoryReader& mem, const Layout& layout, const LockLayout& locks, const LockWaitOptions& opts,
             const BufferedLayout* buffered = nullptr)
      : mem_(mem), l_(layout), ll_(locks), bl_(buffered), opts_(opts), objects_(mem, layout, copts_) {}

  // Locals + value stack of one frame, as raw words (bounded; the first
  // `limit` only: 1 for a method's `self`).
  // `locals` (when given): how many of them are locals, cells and frees (the value stack follows).
  std::vector<Addr> frame_slots(const PyFrame& f, ReadProblem& problem,
                                std::uint64_t limit = std::numeric_limits<std::uint64_t>::max(),
                                std::uint64_t* locals = nullptr) {
    std::vector<Addr> slots;
    if (!plausible_pointer(f.frame) || !plausible_pointer(f.code)) {
      problem = unread(ReadPart::Code, f.code).within(ReadPart::Frame, f.frame);
      return slots;
    }
    auto stacksize = mem_.read_value<std::int32_t>(f.code + l_.code_stacksize);
    if (!l_.has(l_.code_stacksize) || !stacksize || *stacksize < 0) {
      problem = unread_field(ReadPart::Code, f.code, "co_stacksize");
      return slots;
    }
    Addr start = 0;
    std::uint64_t count = 0;
    switch (l_.frame_model) {
      case FrameModel::FrameObject: {
        // f_localsplus[] holds locals, cells, frees, then the value stack,
        // which starts at f_valuestack and is co_stacksize deep.
        auto valuestack = mem_.read_pointer(f.frame + l_.frame_valuestack);
        start = f.frame + l_.frame_localsplus;
        if (!l_.has(l_.frame_valuestack) || !l_.has(l_.frame_localsplus) || !valuestack || *valuestack < start ||
            (*valuestack - start) % 8 != 0) {
          problem = unread_field(ReadPart::Frame, f.frame, "f_valuestack", ReadWhy::Implausible);
          return slots;
        }
        count = (*valuestack - start) / 8 + static_cast<std::uint64_t>(*stacksize);
        if (locals) *locals = (*valuestack - start) / 8;
        break;
      }
      case FrameModel::InterpreterFrame: {
        auto nlocalsplus = mem_.read_value<std::int32_t>(f.code + l_.code_nlocalsplus);
        if (!l_.has(l_.iframe_localsplus) || !l_.has(l_.code_nlocalsplus) || !nlocalsplus || *nlocalsplus < 0) {
          problem = unread_field(ReadPart::Code, f.code, "co_nlocalsplus");
          return slots;
        }
        start = f.frame + l_.iframe_localsplus;
        if (locals) *locals = static_cast<std::uint64_t>(*nlocalsplus);
        count = static_cast<std::uint64_t>(*nlocalsplus) + live_stack(f, start + 8 * static_cast<Addr>(*nlocalsplus),
                                                                       static_cast<std::uint64_t>(*stacksize));
        break;
      }
    }
    count = std::min<std::uint64_t>({count, opts_.max_slots, limit});
    slots.resize(count);
    std::size_t got = count ? mem_.read_partial(start, slots.data(), count * 8) : 0;
    slots.resize(got / 8);
    for (auto& s : slots) s = l_.untag(s);
    if (slots.size() < count && problem.empty()) problem = unread(ReadPart::Frame, f.frame, ReadWhy::PartlyUnreadable);
    return slots;
  }

  // How many of a frame's `stacksize` value-stack slots from `base` are live:
  // below the stack pointer 3.14+ saves before every call out of the
  // evaluation loop (a slot above it holds what an earlier instruction left,
  // a reference the frame no longer has); all of them where none is saved
  // (3.11 - 3.13) or the saved one is not inside the stack.
  std::uint64_t live_stack(const PyFrame& f, Addr base, std::uint64_t stacksize) {
    if (!l_.has(l_.iframe_stackpointer)) return stacksize;
    auto sp = mem_.read_pointer(f.frame + static_cast<Addr>(l_.iframe_stackpointer));
    if (!sp || *sp < base || *sp > base + 8 * stacksize || (*sp - base) % 8 != 0) return stacksize;
    return (*sp - base) / 8;
  }

  std::optional<std::string> type_name(Addr p) {
    return plausible_pointer(p) ? objects_.type_name(p) : std::nullopt;
  }

  bool is_buffered_type(const std::string& t) const {
    return bl_ && std::find(bl_->types.begin(), bl_->types.end(), t) != bl_->types.end();
  }
  bool is_threading_lock_type(const std::string& t) const { return t == ll_.lock_type || t == ll_.rlock_type; }
  bool is_simplequeue_type(const std::string& t) const {
    return (ll_.simplequeue_lock >= 0 || ll_.simplequeue_parked >= 0) && t == ll_.simplequeue_type;
  }
  bool is_lock_type(const std::string& t) const {
    return is_threading_lock_type(t) || is_buffered_type(t) || is_simplequeue_type(t);
  }

  // The buffered object of a TextIOWrapper (its `buffer`), 0 when none.
  Addr text_buffer(Addr text, std::string& type) {
    if (!bl_ || bl_->textio_buffer < 0) return 0;
    auto b = mem_.read_pointer(text + static_cast<Addr>(bl_->textio_buffer));
    if (!b || !plausible_pointer(*b)) return 0;
    auto bt = objects_.type_name(*b);
    if (!bt || !is_buffered_type(*bt)) return 0;
    type = *bt;
    return *b;
  }

  // Whether a frame's value-stack slots above what it uses now are left out (3.14+ saves the stack
  // pointer before every call out of the evaluation loop): else a slot may hold what an earlier
  // instruction left there.
  bool stack_is_live() const { return l_.has(l_.iframe_stackpointer); }

  // The name of a C method object (a builtin_function_or_method's PyMethodDef.ml_name), "" when unread.
  std::string c_method_name(Addr method) {
    if (!l_.has(l_.cfunction_ml) || !l_.has(l_.methoddef_name)) return "";
    auto ml = mem_.read_pointer(method + static_cast<Addr>(l_.cfunction_ml));
    auto name = ml && plausible_pointer(*ml) ? mem_.read_pointer(*ml + static_cast<Addr>(l_.methoddef_name))
                                             : std::nullopt;
    // a C string need not be aligned as an object is
    return name && *name >= 0x1000 && *name < (Addr{1} << 47) ? mem_.read_cstring(*name, 64).value_or("") : "";
  }

  // The lock object a value is (a TextIOWrapper stands for its buffered
  // object), or is a bound method of (`method`: its name, for a C method); 0 when none.
  Addr lock_in(Addr p, std::string& type, bool& via_method, std::string* method = nullptr) {
    via_method = false;
    if (!plausible_pointer(p)) return 0;
    auto tn = objects_.type_name(p);
    if (!tn) return 0;
    if (is_lock_type(*tn)) {
      type = *tn;
      return p;
    }
    if (bl_ && *tn == bl_->textio_type) return text_buffer(p, type);
    std::int64_t self_off = *tn == "builtin_function_or_method" ? l_.cfunction_self
                            : *tn == "method"                   ? l_.method_self
                                                                : -1;
    if (self_off < 0) return 0;
    auto self = mem_.read_pointer(p + self_off);
    if (!self || !plausible_pointer(*self)) return 0;
    auto st = objects_.type_name(*self);
    if (!st) return 0;
    via_method = true;
    if (bl_ && *st == bl_->textio_type) return text_buffer(*self, type);
    if (!is_lock_type(*st)) return 0;
    type = *st;
    if (method && *tn == "builtin_function_or_method") *method = c_method_name(p);
    return *self;
  }

  // Every lock object the innermost frames of a thread reference, innermost first.
  std::vector<Ref> refs_of(const PyThreadInfo& t, ReadProblem* problem) {
    std::vector<Ref> refs;
    for (std::size_t i = 0; i < t.frames.size() && i < opts_.max_frames; ++i) {
      ReadProblem p;
      std::uint64_t locals = 0;
      auto slots = frame_slots(t.frames[i], p, std::numeric_limits<std::uint64_t>::max(), &locals);
      if (!p.empty() && problem && problem->empty()) *problem = std::move(p);
      for (std::size_t s = 0; s < slots.size(); ++s) {
        Ref r;
        r.object = lock_in(slots[s], r.type, r.via_method, &r.method);
        if (!r.object) continue;
        r.frame = i;
        r.slot = s;
        r.in_stack = s >= locals;
        bool dup = false;
        for (const auto& o : refs) dup |= o.object == r.object && o.frame == r.frame;
        if (!dup) refs.push_back(std::move(r));
      }
    }
    return refs;
  }

  // The two ways a blocked acquirer's futex word names the lock it waits
  // for.  sem_t: a PyThread_type_lock that is a malloc'ed sem_t (the futex
  // word is inside it).  PyMutex: the lock (or the PyThread_type_lock it
  // points to) is a PyMutex, whose waiters park on a semaphore of their own
  // whose wait_entry names the PyMutex (cpython/layouts/locks.hpp).
  struct WaitWords {
    Addr sem = 0;    // the sem_t a waiter sleeps in, 0 when none
    Addr mutex = 0;  // the PyMutex a parked waiter names, 0 when none
  };
  WaitWords wait_words(const Ref& r) {
    WaitWords w;
    if (is_simplequeue_type(r.type)) {
      // A get on an empty SimpleQueue: its sem_t (3.7 - 3.12), or parked on its has_threads_waiting (3.13+).
      if (ll_.simplequeue_lock >= 0) {
        auto p = mem_.read_pointer(r.object + static_cast<Addr>(ll_.simplequeue_lock));
        if (p && plausible_pointer(*p)) w.sem = *p;
      }
      if (ll_.simplequeue_parked >= 0) w.mutex = r.object + static_cast<Addr>(ll_.simplequeue_parked);
      return w;
    }
    const bool rlock = r.type == ll_.rlock_type, io = is_buffered_type(r.type);
    const LockLayout& row = io ? ll_ : row_of(r.object, rlock);
    std::int64_t ptr_off = rlock ? row.rlock_lock : io ? bl_->lock : row.lock_lock;
    std::int64_t mutex_off = rlock ? row.rlock_mutex : io ? -1 : row.lock_mutex;
    if (ptr_off >= 0) {
      // A PyThread_type_lock: a sem_t, or (where CPython makes it a PyMutex) the PyMutex itself.
      auto p = mem_.read_pointer(r.object + static_cast<Addr>(ptr_off));
      if (p && plausible_pointer(*p)) w.sem = w.mutex = *p;
    }
    if (mutex_off >= 0) w.mutex = r.object + static_cast<Addr>(mutex_off);
    return w;
  }

  // The row of this minor that describes the lock object (lock_layout_for by
  // its type's tp_basicsize).
  const LockLayout& row_of(Addr object, bool rlock) {
    return *detail::read_lock_object(mem_, l_, ll_, object, rlock).row;
  }

  detail::LockObjectState facts(Addr object, const std::string& type) {
    if (is_buffered_type(type)) {
      // ENTER_BUFFERED stores the owner after acquiring, LEAVE_BUFFERED clears it before releasing.
      detail::LockObjectState f;
      f.owner = mem_.read_value<std::uint64_t>(object + static_cast<Addr>(bl_->owner));
      if (f.owner) f.locked = *f.owner != 0;
      return f;
    }
    if (!is_threading_lock_type(type)) return {};
    return detail::read_lock_object(mem_, l_, ll_, object, type == ll_.rlock_type);
  }

 private:
  MemoryReader& mem_;
  const Layout& l_;
  const LockLayout& ll_;
  const BufferedLayout* bl_;
  const LockWaitOptions& opts_;
  Options copts_;
  detail::ObjectReader objects_;
};

bool is_thread_join(const PyFrame& f) {
  if (basename(f.file) != "threading.py") return false;
  return f.function == "join" || f.function == "Thread.join" || f.function == "_wait_for_tstate_lock" ||
         f.function == "Thread._wait_for_tstate_lock";
}

bool is_condition_wait(const PyFrame& f) {
  if (basename(f.file) != "threading.py") return false;
  return f.function == "wait" || f.function == "Condition.wait";
}

// The streams print() and input() use without a frame referencing them.
constexpr const char* kSysStreams[] = {"stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__"};

// The buffered object of a sys stream whose lock `holds` the futex, as a Ref of frame 0.
std::optional<Ref> sys_stream_holding(MemoryReader& mem, const PythonState& state, LockFinder& finder,
                                      const std::function<bool(const Ref&)>& holds) {
  PyObjects objects(mem, state);
  if (!objects.ok()) return std::nullopt;
  for (const char* name : kSysStreams) {
    Ref r;
    r.object = finder.lock_in(objects.module_attribute("sys", name), r.type, r.via_method);
    if (!r.object || !finder.is_buffered_type(r.type)) continue;
    r.via_method = false;
    r.found_in = std::string("sys.") + name;
    if (holds(r)) return r;
  }
  return std::nullopt;
}

// repr() of a buffered object's raw stream's name: 'path' for a str, the fd for an int.
std::string stream_name(MemoryReader& mem, const PythonState& state, const BufferedLayout& bl, Addr buffered) {
  auto raw = mem.read_pointer(buffered + static_cast<Addr>(bl.raw));
  if (!raw || !plausible_pointer(*raw)) return "";
  PyObjects objects(mem, state);
  Addr name = objects.ok() ? objects.attribute(*raw, "name") : 0;
  if (!name) return "";
  if (auto s = objects.str(name)) {
    std::string out = "'";
    for (char c : s->substr(0, 200)) out += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "'";
  }
  if (auto i = objects.integer(name)) return std::to_string(*i);
  return "";
}

}  // namespace


std::vector<FrameSelf> frame_selves(MemoryReader& mem, const PythonState& state, int tid,
                                    const LockWaitOptions& opts) {
  std::vector<FrameSelf> out;
  auto layout = detail::layout_of(mem, state);
  const LockLayout* locks = lock_layout_for(state.major, state.minor);
  if (!layout || !locks) return out;
  const PyThreadInfo* thread = nullptr;
  for (const auto& t : state.threads)
    if (t.native_tid && *t.native_tid == tid) thread = &t;
  if (!thread) return out;
  LockFinder finder(mem, *layout, *locks, opts);
  for (std::size_t i = 0; i < thread->frames.size() && i < opts.max_frames; ++i) {
    const PyFrame& f = thread->frames[i];
    FrameSelf fs{i, f.function, f.file, f.line, 0, ""};
    ReadProblem why;
    auto slots = finder.frame_slots(f, why, 1);
    Addr self = slots.empty() ? 0 : slots[0];
    auto type = plausible_pointer(self) ? finder.type_name(self) : std::nullopt;
    // A `self` that a closure captures lives in a cell (ObjectLayout::cell_ob_ref).
    if (type && *type == "cell") {
      const ObjectLayout* objects = object_layout_for(state.major, state.minor);
      self = objects ? mem.read_pointer(self + static_cast<Addr>(objects->cell_ob_ref)).value_or(0) : 0;
      type = plausible_pointer(self) ? finder.type_name(self) : std::nullopt;
    }
    if (type) {
      fs.self = self;
      fs.type = *type;
    }
    out.push_back(std::move(fs));
  }
  return out;
}

PyLockWait find_python_lock_wait_memory(MemoryReader& mem, const PythonState& state, int tid,
                                        std::optional<Addr> futex, const LockWaitOptions& opts,
                                        const std::function<std::optional<int>(std::uint64_t)>& pthread_tid) {
  PyLockWait out;
  auto layout = detail::layout_of(mem, state);
  const LockLayout* locks = lock_layout_for(state.major, state.minor);
  if (!layout || !locks) {
    out.problem = unread_named(ReadPart::Lock, 0, ReadWhy::NoLayout, state.version);
    return out;
  }
  const PyThreadInfo* thread = nullptr;
  for (const auto& t : state.threads)
    if (t.native_tid && *t.native_tid == tid) thread = &t;
  if (!thread) {
    out.problem = unread(ReadPart::ThreadState, 0, ReadWhy::NotFound).within(ReadPart::Thread, 0, {}, tid);
    return out;
  }
  if (thread->frames.empty()) {
    out.problem = unread(ReadPart::Frame, 0, ReadWhy::NotFound).within(ReadPart::Thread, 0, {}, tid);
    return out;
  }

  const BufferedLayout* buffered = buffered_layout_for(state.major, state.minor);
  LockFinder finder(mem, *layout, *locks, opts, buffered);
  // A join: the Thread it waits for is the `self` of the join frame.
  for (std::size_t i = 0; i < thread->frames.size() && i < opts.max_frames; ++i) {
    if (!is_thread_join(thread->frames[i])) continue;
    ReadProblem why;
    auto slots = finder.frame_slots(thread->frames[i], why, 1);
    if (!slots.empty() && plausible_pointer(slots[0])) {
      out.join_self = slots[0];
      out.join_frame_function = thread->frames[i].function;
    }
    break;
  }
  ReadProblem scan_problem;
  auto refs = finder.refs_of(*thread, &scan_problem);
  const Ref* match = nullptr;
  Addr word = 0;
  bool parked_match = false;  // matched through a parked waiter's wait_entry, not a sem_t
  std::optional<Ref> stream;  // a buffered object of sys, when no frame's object holds the futex
  // What a parked PyMutex waiter's wait_entry names (0 when the futex is no such wait).
  Addr parked = 0;
  if (futex && *futex > static_cast<Addr>(locks->parked_addr_before_futex))
    parked = mem.read_pointer(*futex - static_cast<Addr>(locks->parked_addr_before_futex)).value_or(0);
  // (a PyEvent is one byte anywhere: no alignment is asked of what a waiter parks on)
  const bool parked_plausible = parked >= 4096 && parked < (Addr{1} << 47);
  out.parking_address = parked_plausible ? parked : 0;
  auto holds_futex = [&](const Ref& r) {
    auto w = finder.wait_words(r);
    if (w.sem && *futex >= w.sem && *futex < w.sem + static_cast<Addr>(locks->lock_wait_bytes)) {
      word = w.sem;
      return true;
    }
    if (w.mutex && parked_plausible && parked == w.mutex) {
      word = w.mutex;
      parked_match = true;
      return true;
    }
    return false;
  };
  if (futex) {
    for (const auto& r : refs) {
      if (holds_futex(r)) {
        match = &r;
        break;
      }
    }
    if (!match && buffered) stream = sys_stream_holding(mem, state, finder, holds_futex);
    if (stream) match = &*stream;
    if (!match) {
      out.problem = unread_named(ReadPart::Lock, 0, ReadWhy::NotFound, {}, static_cast<std::int64_t>(refs.size()));
      out.problem.at = *futex;
      out.problem.limit = static_cast<std::int64_t>(std::min(opts.max_frames, thread->frames.size()));
      out.scan_problem = std::move(scan_problem);
      return out;
    }
    out.confidence = Confidence::Certain;
  } else {
    // Without a futex only a threading lock is guessed: a file on the stack is no sign of a wait.
    for (const auto& r : refs) {
      if (finder.is_threading_lock_type(r.type)) {
        match = &r;
        break;
      }
    }
    if (!match) {
      out.problem = unread(ReadPart::Lock, 0, ReadWhy::NotFound);
      return out;
    }
    auto w = finder.wait_words(*match);
    word = w.sem ? w.sem : w.mutex;
    out.confidence = Confidence::Guess;
  }

  auto to_tid = [&](std::uint64_t pthread) -> std::optional<int> {
    for (const auto& t : state.threads)
      if (t.thread_id == pthread && t.native_tid) return t.native_tid;
    if (pthread_tid) return pthread_tid(pthread);
    return std::nullopt;
  };

  const PyFrame& frame = thread->frames[match->frame];
  out.object = match->object;
  out.type_name = match->type;
  out.wait_address = word;
  out.frame_function = frame.function;
  out.frame_file = frame.file;
  out.frame_line = frame.line;
  auto f = finder.facts(match->object, match->type);
  out.locked = f.locked;
  bool rlock = match->type == locks->rlock_type;
  bool io = finder.is_buffered_type(match->type);
  bool simplequeue = finder.is_simplequeue_type(match->type);
  out.kind = rlock ? PyLockKind::RLock : io ? PyLockKind::Buffered : simplequeue ? PyLockKind::SimpleQueueGet
                                                                                 : PyLockKind::Lock;
  out.found_in = match->found_in;
  out.found = !futex ? PyLockFound::NoFutex : parked_match ? PyLockFound::ParkedWaiter : PyLockFound::InSemaphore;
  out.futex = futex.value_or(0);
  out.slot = match->found_in.empty() ? static_cast<int>(match->slot) : -1;
  out.via_method = match->via_method;
  if (rlock || io) {
    out.owner_thread_id = f.owner;
    out.count = f.count;
    if (f.owner && *f.owner) {
      out.owner_tid = to_tid(*f.owner);
      out.owner_source = OwnerSource::LockWord;
      if (!out.owner_tid) {
        out.problem = unread(io ? ReadPart::BufferedIO : ReadPart::RLock, match->object, ReadWhy::OwnerNoThread);
        out.problem.at = *f.owner;
      }
    }
  }
  if (io) out.stream_name = stream_name(mem, state, *buffered, match->object);

  if (is_condition_wait(frame) && out.kind == PyLockKind::Lock) {
    out.kind = PyLockKind::Condition;
    ReadProblem problem;
    ReadProblem why;
    auto slots = finder.frame_slots(frame, why);
    Addr self = slots.empty() ? 0 : slots[0];  // the first local: the method's `self`
    auto self_type = finder.type_name(self);
    if (!self_type || *self_type != "Condition") {
      out.problem = ReadProblem{{{ReadPart::Frame, frame.frame, frame.function, 0}, {ReadPart::Field, 0, "self", 0},
                                 {ReadPart::Condition, self, {}, 0}},
                                ReadWhy::NotA};
    } else {
      out.condition = self;
      PyObjects objects(mem, state);
      Addr lock = objects.attribute(self, "_lock", &problem);
      std::string lt;
      bool via = false;
      if (lock && finder.lock_in(lock, lt, via) == lock) {
        out.condition_lock = lock;
        out.condition_lock_type = lt;
        auto cf = finder.facts(lock, lt);
        out.condition_lock_locked = cf.locked;
        if (lt == locks->rlock_type) {
          out.condition_lock_owner_thread_id = cf.owner;
          out.condition_lock_count = cf.count;
          if (cf.owner && *cf.owner) out.condition_lock_owner_tid = to_tid(*cf.owner);
        }
      } else if (lock) {
        out.condition_lock = lock;
        out.condition_lock_type = finder.type_name(lock).value_or("?");
      } else {
        out.problem = std::move(problem.within(ReadPart::Field, 0, "_lock").within(ReadPart::Condition, self));
      }
    }
  }

  // A Lock records no owner: the waiter's own outer frames that hold it (a frame that acquired it and
  // called further in), then the other threads that reference it.  Where the value stack's unused slots
  // are read too (3.6 - 3.13), a reference there may be what an earlier expression left (`LOCK.acquire`'s
  // method and self): only its bound `__exit__`, which a `with` block keeps there while it runs, or a
  // variable of the frame is one the frame has.
  if (out.kind == PyLockKind::Lock) {
    for (const auto& r : refs) {
      bool kept = !r.in_stack || finder.stack_is_live() || (r.via_method && r.method == "__exit__");
      if (r.object == match->object && r.frame > match->frame && kept) out.self_frames.push_back(thread->frames[r.frame]);
    }
  }
  if (out.kind == PyLockKind::Lock && opts.suspects && opts.references) {
    for (const auto& [other, frame] : opts.references->of(match->object)) {
      if (other == tid) continue;
      out.suspects.push_back(other);
      out.suspect_frames.push_back(frame);
    }
    if (!out.suspects.empty()) out.owner_source = OwnerSource::Heuristic;
  } else if (out.kind == PyLockKind::Lock && opts.suspects) {
    for (const auto& t : state.threads) {
      if (&t == thread || !t.native_tid) continue;
      for (const auto& r : finder.refs_of(t, nullptr)) {
        if (r.object == match->object) {
          out.suspects.push_back(*t.native_tid);
          out.suspect_frames.push_back(t.frames[r.frame]);
          break;
        }
      }
    }
    if (!out.suspects.empty()) out.owner_source = OwnerSource::Heuristic;
  }
  return out;
}

void LockReferences::read() const {
  read_ = true;
  MemoryReader& mem = memory_;
  const PythonState& state = state_;
  LockWaitOptions opts = opts_;
  opts.references = nullptr;
  auto layout = detail::layout_of(mem, state);
  const LockLayout* locks = lock_layout_for(state.major, state.minor);
  if (!layout || !locks) return;
  LockFinder finder(mem, *layout, *locks, opts);
  const auto& threads = state.threads;
  in_prefetched_runs(
      mem, threads.size(),
      [&](std::size_t i, std::vector<Addr>& pages) { innermost_frame_pages(threads[i], opts.max_frames, pages); },
      [&](std::size_t i) {
        const auto& t = threads[i];
        if (!t.native_tid) return;
        std::vector<Addr> seen;  // each object once per thread: its innermost referencing frame
        for (const auto& r : finder.refs_of(t, nullptr)) {
          if (std::find(seen.begin(), seen.end(), r.object) != seen.end()) continue;
          seen.push_back(r.object);
          by_object_[r.object].emplace_back(*t.native_tid, t.frames[r.frame]);
        }
      });
}

const std::vector<std::pair<int, PyFrame>>& LockReferences::of(Addr object) const {
  static const std::vector<std::pair<int, PyFrame>> none;
  if (!read_) read();
  auto it = by_object_.find(object);
  return it == by_object_.end() ? none : it->second;
}

std::vector<LockObject> lock_objects(MemoryReader& memory, const PythonState& state, const std::vector<Addr>& objects,
                                     const LockReferences* references) {
  std::vector<LockObject> out;
  auto layout = detail::layout_of(memory, state);
  const LockLayout* locks = lock_layout_for(state.major, state.minor);
  if (!layout || !locks) return out;
  std::optional<LockReferences> own;
  if (!references) references = &own.emplace(memory, state);
  LockWaitOptions opts;
  LockFinder finder(memory, *layout, *locks, opts);
  for (Addr a : objects) {
    if (out.size() >= kMaxLockObjects) break;
    LockObject o;
    o.object = a;
    auto type = finder.type_name(a);
    if (type && finder.is_threading_lock_type(*type)) {
      o.type_name = *type;
      if (locks->object_refcnt >= 0) o.refcount = memory.read_value<std::uint64_t>(a + locks->object_refcnt);
      o.alive = o.refcount && *o.refcount >= 1 && *o.refcount < (std::uint64_t{1} << 31);
      auto f = finder.facts(a, *type);
      o.locked = f.locked;
      if (*type == locks->rlock_type && f.owner && *f.owner) {
        o.owner_thread_id = f.owner;
        for (const auto& t : state.threads)
          if (t.thread_id == *f.owner && t.native_tid) o.owner_tid = t.native_tid;
      }
      o.references = references->of(a);
    }
    out.push_back(std::move(o));
  }
  return out;
}

PyLockWait find_python_lock_wait(Target& target, const PythonState& state, int tid, std::optional<Addr> futex_address,
                                 const LockWaitOptions& opts) {
  std::optional<nptl::PthreadMapper> mapper;  // only when an owner is not a Python thread
  return find_python_lock_wait_memory(target.memory(), state, tid, futex_address, opts,
                                      [&](std::uint64_t p) {
                                        if (!mapper) mapper.emplace(target);
                                        return mapper->tid(p);
                                      });
}

}  // namespace pyhang::cpython
