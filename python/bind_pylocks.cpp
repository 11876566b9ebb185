// Which Python lock a blocked thread waits on (pyhang/cpython/locks.hpp), and what the analysis reads of
// Python objects around it.  What it finds crosses as the records of pyhang.model (python/records.hpp; the
// tables below):
//
//   locks = PythonLocks(target)      # reads the interpreter once (cpython::inspect, innermost frames)
//   locks = PythonLocks(interpreter) # uses an Interpreter already read: no inspect at all
//   locks.status                     # "ok", "not-python", ... (PythonState.status)
//   locks.wait(tid, futex_address=None) -> PythonLockWait (model.waits)   # cheap: no second inspect
//
//   python_lock_wait(target, state, tid, futex_address=None) -> PythonLockWait
//       state: a PythonLocks (cached: what `thread apply all lock-owner`
//       should pass), an Interpreter, or None (inspects the target now).
//
// A PythonLockWait names the lock, its owner and how it was found (kinds as model.kinds spells them; its
// frames CodeLine records; problem and scan_problem model.unread.ReadProblem records or None); every field
// None or empty when the thread waits on none.  Addresses are ints, 0 → None.
//
//   locks.frame_selves(tid) -> [FrameSelf (model.waits)]
//       the `self` (first local) of each innermost frame, with its type name
//   locks.attributes(address, [name, ...]) -> {name: ObjectValue (model.python_values) or None}
//   locks.members([address, ...], max) -> [[address, ...] or None]: a set's, frozenset's, list's or tuple's members
//   locks.object_names([address, ...]) -> {address: ObjectPath (model.references)}: the variable reaching
//       each (cpython/object_names.hpp)
//   locks.thread_references([address, ...]) -> ThreadReferences (model.references): by_object
//       [[address, [tid]]] by address, complete
//   locks.lock_objects([address, ...]) -> [LockObject (model.lock_objects)]: each address as this process
//       has it, for a fork child's copy of a lock at the same address (cpython/locks.hpp LockObject)
//   locks.threading() -> ThreadingState (model.threading_facts): threading's Thread objects
//       (pyhang/cpython/threading.hpp)
#include <pybind11/stl.h>

#include <algorithm>
#include <unordered_map>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/cpython/locks.hpp"
#include "pyhang/cpython/members.hpp"
#include "pyhang/cpython/object_names.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/cpython/threading.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

// A Python function at a line: the frame a lock was found in, a suspect's or the waiter's own frame that
// references it (model.waits.CodeLine).
struct CodeLine {
  const std::string& function;
  const std::string& file;
  int line;
};
// A thread whose innermost frames reference a lock object, and the innermost such frame
// (model.lock_objects.LockReference).
struct LockReference {
  int tid;
  const cpython::PyFrame& frame;
};
// The threads reaching each object asked about, by address (model.references.ThreadReferences: a list of
// [address, [tid]], where the native answer is a map).
struct ThreadReferencesByAddress {
  const cpython::ThreadReferences& r;
};

}  // namespace

PYHANG_RECORD(CodeLine, "pyhang.model.waits", "CodeLine",
              PYHANG_FIELD(function), PYHANG_FIELD(file), PYHANG_FIELD(line))

py::object code_lines(const std::vector<cpython::PyFrame>& frames) {
  py::list out(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i)
    out[i] = to_py(CodeLine{frames[i].function, frames[i].file, frames[i].line});
  return std::move(out);
}

namespace {

py::object by_address(const std::unordered_map<Addr, std::vector<int>>& by_object) {
  std::vector<std::pair<Addr, const std::vector<int>*>> sorted;
  sorted.reserve(by_object.size());
  for (const auto& [a, tids] : by_object) sorted.emplace_back(a, &tids);
  std::sort(sorted.begin(), sorted.end());
  py::list out(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    py::list item(2);
    item[0] = py::int_(sorted[i].first);
    item[1] = to_py(*sorted[i].second);
    out[i] = std::move(item);
  }
  return std::move(out);
}

}  // namespace

PYHANG_RECORD(cpython::PyLockWait, "pyhang.model.waits", "PythonLockWait",
              PYHANG_FIELD_AS("kind", name_or_none(v.kind, cpython::PyLockKind::None)),
              PYHANG_FIELD_AS("confidence", name_or_none(v.confidence, Confidence::None)),
              PYHANG_FIELD_AS("object", addr(v.object)), PYHANG_FIELD_AS("type_name", text(v.type_name)),
              PYHANG_FIELD_AS("wait_address", addr(v.wait_address)), PYHANG_FIELD(locked),
              PYHANG_FIELD(owner_thread_id), PYHANG_FIELD(owner_tid), PYHANG_FIELD(count), PYHANG_FIELD(owner_source),
              PYHANG_FIELD(suspects),
              PYHANG_FIELD_AS("frame", v.frame_function.empty()
                                           ? py::none()
                                           : to_py(CodeLine{v.frame_function, v.frame_file, v.frame_line})),
              PYHANG_FIELD_AS("condition", addr(v.condition)),
              PYHANG_FIELD_AS("condition_lock", addr(v.condition_lock)),
              PYHANG_FIELD_AS("condition_lock_type", text(v.condition_lock_type)), PYHANG_FIELD(condition_lock_locked),
              PYHANG_FIELD(condition_lock_owner_thread_id), PYHANG_FIELD(condition_lock_owner_tid),
              PYHANG_FIELD(condition_lock_count), PYHANG_FIELD_AS("suspect_frames", code_lines(v.suspect_frames)),
              PYHANG_FIELD_AS("self_frames", code_lines(v.self_frames)),
              PYHANG_FIELD_AS("join_self", addr(v.join_self)),
              PYHANG_FIELD_AS("parking_address", addr(v.parking_address)),
              PYHANG_FIELD_AS("join_frame_function", text(v.join_frame_function)),
              PYHANG_FIELD_AS("stream_name", text(v.stream_name)), PYHANG_FIELD_AS("found_in", text(v.found_in)),
              PYHANG_FIELD_AS("found", name_or_none(v.found, cpython::PyLockFound::None)),
              PYHANG_FIELD_AS("futex", addr(v.futex)),
              PYHANG_FIELD_AS("slot", v.slot >= 0 ? py::object(py::int_(v.slot)) : py::none()),
              PYHANG_FIELD(via_method),
              PYHANG_FIELD_AS("problem", read_problem(v.problem)),
              PYHANG_FIELD_AS("scan_problem", read_problem(v.scan_problem)))
PYHANG_RECORD(cpython::FrameSelf, "pyhang.model.waits", "FrameSelf",
              PYHANG_FIELD(index), PYHANG_FIELD_AS("object", addr(v.self)), PYHANG_FIELD_AS("type", text(v.type)),
              PYHANG_FIELD(function), PYHANG_FIELD(file), PYHANG_FIELD(line))
// `length` also for containers value() does not size (a deque): object_value() fills it in.
PYHANG_RECORD(cpython::PyValue, "pyhang.model.python_values", "ObjectValue",
              PYHANG_FIELD(address), PYHANG_FIELD(type), PYHANG_FIELD(kind), PYHANG_FIELD(boolean),
              PYHANG_FIELD(integer), PYHANG_FIELD(real), PYHANG_FIELD(text), PYHANG_FIELD(length),
              PYHANG_FIELD_AS("problem", read_problem(v.problem)))
PYHANG_RECORD(cpython::ObjectPath, "pyhang.model.references", "ObjectPath",
              PYHANG_FIELD_AS("module", text(v.module)), PYHANG_FIELD(variable),
              PYHANG_FIELD_AS("attribute", text(v.attribute)), PYHANG_FIELD_AS("owner_type", text(v.owner_type)),
              PYHANG_FIELD_AS("owner", addr(v.owner)),
              PYHANG_FIELD_AS("tid", v.tid ? py::object(py::int_(v.tid)) : py::none()),
              PYHANG_FIELD_AS("function", text(v.function)))
PYHANG_RECORD(ThreadReferencesByAddress, "pyhang.model.references", "ThreadReferences",
              PYHANG_FIELD_AS("by_object", by_address(v.r.by_object)), PYHANG_FIELD_AS("complete", v.r.complete))
PYHANG_RECORD(LockReference, "pyhang.model.lock_objects", "LockReference",
              PYHANG_FIELD(tid), PYHANG_FIELD_AS("function", v.frame.function), PYHANG_FIELD_AS("file", v.frame.file),
              PYHANG_FIELD_AS("line", v.frame.line))

namespace {

py::object lock_references(const std::vector<std::pair<int, cpython::PyFrame>>& references) {
  py::list out(references.size());
  for (std::size_t i = 0; i < references.size(); ++i)
    out[i] = to_py(LockReference{references[i].first, references[i].second});
  return std::move(out);
}

}  // namespace

PYHANG_RECORD(cpython::LockObject, "pyhang.model.lock_objects", "LockObject",
              PYHANG_FIELD(object), PYHANG_FIELD_AS("type_name", text(v.type_name)), PYHANG_FIELD(refcount),
              PYHANG_FIELD(alive), PYHANG_FIELD(locked), PYHANG_FIELD(owner_thread_id), PYHANG_FIELD(owner_tid),
              PYHANG_FIELD_AS("references", lock_references(v.references)))
PYHANG_RECORD(cpython::PyThreadObject, "pyhang.model.threading_facts", "ThreadObject",
              PYHANG_FIELD(object), PYHANG_FIELD_AS("type", text(v.type)), PYHANG_FIELD_AS("name", text(v.name)),
              PYHANG_FIELD(ident), PYHANG_FIELD(native_id), PYHANG_FIELD(daemon),
              PYHANG_FIELD_AS("tstate_lock", addr(v.tstate_lock)), PYHANG_FIELD_AS("handle", addr(v.handle)),
              PYHANG_FIELD_AS("handle_struct", addr(v.handle_struct)), PYHANG_FIELD(started))
PYHANG_RECORD(cpython::ThreadingState, "pyhang.model.threading_facts", "ThreadingState",
              PYHANG_FIELD(imported), PYHANG_FIELD_AS("problem", read_problem(v.problem)), PYHANG_FIELD(threads),
              PYHANG_FIELD(shutting_down))

namespace {

// Only the innermost frames: the lock search reads no deeper (a full walk of
// every stack here would repeat python_state()'s).
cpython::PythonState inspect_now(Target& target) {
  cpython::Options opts;
  opts.max_frames = cpython::LockWaitOptions{}.max_frames;
  py::gil_scoped_release nogil;  // a callback target takes it back to read
  return cpython::inspect(target, opts);
}

// The interpreter read once (here, or by an Interpreter); answers for any
// number of threads.
class PythonLocks {
 public:
  explicit PythonLocks(std::shared_ptr<Target> target) : target_(std::move(target)), own_(inspect_now(*target_)) {}
  explicit PythonLocks(std::shared_ptr<cpython::Interpreter> interp)
      : target_(interp->shared_target()), interp_(std::move(interp)) {}
  const cpython::PythonState& state() const { return interp_ ? interp_->state() : own_; }
  std::string status() const { return std::string(to_string(state().status)); }
  py::object wait(int tid, std::optional<Addr> futex) {
    cpython::PyLockWait w;
    {
      py::gil_scoped_release nogil;
      if (!references_) references_ = std::make_unique<cpython::LockReferences>(target_->memory(), state());
      cpython::LockWaitOptions opts;
      opts.references = references_.get();
      w = cpython::find_python_lock_wait(*target_, state(), tid, futex, opts);
    }
    return to_py(w);
  }
  // wait() of each (tid, futex address), in runs whose pages (the futex's, each thread's innermost frames')
  // are read in one batch first: a thousand waiters are a few system calls, not one for each page.
  py::list waits(const std::vector<std::pair<int, std::optional<Addr>>>& asked) {
    py::list out;
    py::gil_scoped_release nogil;
    if (!references_) references_ = std::make_unique<cpython::LockReferences>(target_->memory(), state());
    cpython::LockWaitOptions opts;
    opts.references = references_.get();
    const auto by_tid = threads_by_tid();
    in_prefetched_runs(
        target_->memory(), asked.size(),
        [&](std::size_t i, std::vector<Addr>& pages) {
          const auto& [tid, futex] = asked[i];
          if (futex) pages.push_back(*futex);
          if (auto it = by_tid.find(tid); it != by_tid.end())
            cpython::innermost_frame_pages(*it->second, opts.max_frames, pages);
        },
        [&](std::size_t i) {
          auto w = cpython::find_python_lock_wait(*target_, state(), asked[i].first, asked[i].second, opts);
          py::gil_scoped_acquire gil;  // each answer a record at once: none of them is held natively
          out.append(to_py(w));
        });
    return out;
  }
  // frame_selves() of each of `tids`, in runs whose innermost frames' pages are read in one batch first.
  py::list frame_selves_of(const std::vector<int>& tids) {
    py::list out;
    py::gil_scoped_release nogil;
    const cpython::LockWaitOptions opts;
    const auto by_tid = threads_by_tid();
    in_prefetched_runs(
        target_->memory(), tids.size(),
        [&](std::size_t i, std::vector<Addr>& pages) {
          if (auto it = by_tid.find(tids[i]); it != by_tid.end())
            cpython::innermost_frame_pages(*it->second, opts.max_frames, pages);
        },
        [&](std::size_t i) {
          auto selves = cpython::frame_selves(target_->memory(), state(), tids[i], opts);
          py::gil_scoped_acquire gil;
          out.append(py::list(to_py(selves)));
        });
    return out;
  }
  Target& target() { return *target_; }
  py::list frame_selves(int tid) {
    std::vector<cpython::FrameSelf> selves;
    {
      py::gil_scoped_release nogil;
      selves = cpython::frame_selves(target_->memory(), state(), tid);
    }
    return py::list(to_py(selves));   // (a list already: no copy)
  }
  static constexpr std::size_t kMaxSlots = 64;   // __slots__ members looked at for an attribute
  py::dict attributes(Addr object, const std::vector<std::string>& names) {
    if (!objects_) objects_ = std::make_unique<cpython::PyObjects>(target_->memory(), state());
    py::dict out;
    for (const auto& name : names) {
      Addr a = objects_->attribute(object, name);
      if (!a) {
        // not in its instance dict: a __slots__ member of its class (SQLAlchemy 2's _ConnectionFairy._pool)
        for (const auto& [slot, value] : objects_->slots(object, kMaxSlots))
          if (slot == name) {
            a = value;
            break;
          }
      }
      if (a) {
        out[py::str(name)] = object_value(*objects_, a);
      } else if (auto n = cpython::int_member(target_->memory(), state(), object, name)) {
        // a C type's integer member (PyMemberDef): an int with no object of its own, address 0
        cpython::PyValue member;
        member.type = "int";
        member.kind = cpython::ValueKind::Int;
        member.integer = *n;
        out[py::str(name)] = to_py(member);
      } else {
        out[py::str(name)] = py::none();
      }
    }
    return out;
  }
  // The members of each set, frozenset, list or tuple at `addresses` (at most `max` each, as far as they could
  // be read), None for any other object: the containers a frame's locals hold (as_completed's pending futures).
  py::list members(const std::vector<Addr>& addresses, std::size_t max) {
    if (!objects_) objects_ = std::make_unique<cpython::PyObjects>(target_->memory(), state());
    py::list out;
    for (Addr a : addresses) {
      auto type = objects_->type_name(a);
      cpython::ReadProblem problem;
      std::vector<Addr> items = type && (*type == "set" || *type == "frozenset") ? objects_->set_items(a, max, &problem)
                                                                               : objects_->sequence_items(a, max, &problem);
      if (problem.why == cpython::ReadWhy::NotA) {
        out.append(py::none());
      } else {
        py::list found;
        for (Addr item : items) found.append(py::int_(item));
        out.append(found);
      }
    }
    return out;
  }
  // {address: ObjectPath} for the addresses a variable of the program reaches (cpython/object_names.hpp).
  py::dict object_names(const std::vector<Addr>& addresses) {
    std::unordered_map<Addr, cpython::ObjectPath> found;
    {
      py::gil_scoped_release nogil;
      found = cpython::object_names(target_->memory(), state(), addresses);
    }
    py::dict out;
    for (const auto& [a, p] : found) out[py::int_(a)] = to_py(p);
    return out;
  }
  // The threads whose frames reach each address, as a ThreadReferences.
  py::object thread_references(const std::vector<Addr>& addresses) {
    cpython::ThreadReferences r;
    {
      py::gil_scoped_release nogil;
      r = cpython::thread_references(target_->memory(), state(), addresses);
    }
    return to_py(ThreadReferencesByAddress{r});
  }
  py::list lock_objects(const std::vector<Addr>& addresses) {
    std::vector<cpython::LockObject> found;
    {
      py::gil_scoped_release nogil;
      if (!references_) references_ = std::make_unique<cpython::LockReferences>(target_->memory(), state());
      found = cpython::lock_objects(target_->memory(), state(), addresses, references_.get());
    }
    return py::list(to_py(found));
  }
  py::object threading() {
    cpython::ThreadingState t;
    {
      py::gil_scoped_release nogil;
      t = cpython::threading_state(target_->memory(), state());
    }
    return to_py(t);
  }

 private:
  // The state's threads by native TID (the last of each, as the decoders look them up).
  std::unordered_map<int, const cpython::PyThreadInfo*> threads_by_tid() const {
    std::unordered_map<int, const cpython::PyThreadInfo*> out;
    for (const auto& t : state().threads)
      if (t.native_tid) out[*t.native_tid] = &t;
    return out;
  }

  std::shared_ptr<Target> target_;
  std::shared_ptr<cpython::Interpreter> interp_;  // null: own_ was read here
  cpython::PythonState own_;
  std::unique_ptr<cpython::PyObjects> objects_;  // made on the first attributes() call
  std::unique_ptr<cpython::LockReferences> references_;  // made on the first wait() call
};

}  // namespace

py::object object_value(cpython::PyObjects& objects, Addr a) {
  auto v = objects.value(a);
  if (!v.length) v.length = objects.length(a);
  return to_py(v);
}

py::object object_value(const cpython::PyValue& value) { return to_py(value); }

void register_pylocks(py::module_& m) {
  bind_enum(m, "PyLockKind", cpython::kPyLockKindNames,
            "Which Python lock a thread waits on (a PythonLockWait's kind).");
  bind_enum(m, "PyLockFound", cpython::kPyLockFoundNames,
            "How the Python lock a thread waits on was found (a PythonLockWait's found).");
  py::class_<PythonLocks>(m, "PythonLocks")
      .def(py::init<std::shared_ptr<Target>>(), py::arg("target"),
           "Reads the target's interpreter once (threads and innermost frames) for python-lock questions.")
      .def(py::init<std::shared_ptr<cpython::Interpreter>>(), py::arg("interpreter"),
           "Answers python-lock questions from an Interpreter already read (with frames).")
      .def_property_readonly("status", &PythonLocks::status)
      .def("wait", &PythonLocks::wait, py::arg("tid"), py::arg("futex_address") = py::none(),
           "The Python lock thread `tid` waits on, given the futex address it sleeps on (rdi of futex(2)): a "
           "model.waits.PythonLockWait.")
      .def("waits", &PythonLocks::waits, py::arg("waits"),
           "[wait(tid, futex_address) of each (tid, futex_address)]: the memory each reads first read in a few "
           "batches.")
      .def("frame_selves_of", &PythonLocks::frame_selves_of, py::arg("tids"),
           "[frame_selves(tid) of each of `tids`]: their innermost frames read in a few batches.")
      .def("frame_selves", &PythonLocks::frame_selves, py::arg("tid"),
           "[model.waits.FrameSelf]: the `self` (first local) of each of the thread's innermost Python frames, with "
           "its type name.")
      .def("attributes", &PythonLocks::attributes, py::arg("address"), py::arg("names"),
           "{name: model.python_values.ObjectValue or None}: the decoded values of the named attributes of a Python "
           "object (None for each one it does not have).")
      .def("members", &PythonLocks::members, py::arg("addresses"), py::arg("max"),
           "[[address] or None]: the members of each set, frozenset, list or tuple (at most `max` each), None for "
           "another object.")
      .def("object_names", &PythonLocks::object_names, py::arg("addresses"),
           "{address: model.references.ObjectPath} for those of `addresses` "
           "that a variable of the program reaches: a module global, or an attribute of an instance that one or "
           "a local of the innermost frames refers to.")
      .def("thread_references", &PythonLocks::thread_references, py::arg("addresses"),
           "A model.references.ThreadReferences: the threads whose Python frames reach each address (a local, or "
           "an attribute of an instance a local refers to), by_object [[address, [tid]]] by address; complete is false "
           "when some frames were not read.")
      .def("lock_objects", &PythonLocks::lock_objects, py::arg("addresses"),
           "[model.lock_objects.LockObject]: each address as this "
           "process has it (a threading lock or not, alive, locked) and the threads whose innermost frames reference "
           "it: for a fork child's copy of a lock at the same address.")
      .def("threading", &PythonLocks::threading,
           "A model.threading_facts.ThreadingState: threading's Thread objects (name, ident, native_id, daemon, the "
           "_tstate_lock or _handle joiners wait on).");

  m.def(
      "python_lock_wait",
      [](std::shared_ptr<Target> target, py::object state, int tid, std::optional<Addr> futex) -> py::object {
        if (py::isinstance<PythonLocks>(state)) return state.cast<PythonLocks&>().wait(tid, futex);
        if (py::isinstance<cpython::Interpreter>(state))
          return PythonLocks(state.cast<std::shared_ptr<cpython::Interpreter>>()).wait(tid, futex);
        if (!state.is_none()) throw py::type_error("state: a PythonLocks, an Interpreter or None");
        cpython::PythonState s = inspect_now(*target);
        cpython::LockWaitOptions opts;
        cpython::PyLockWait w;
        {
          py::gil_scoped_release nogil;
          w = cpython::find_python_lock_wait(*target, s, tid, futex, opts);
        }
        return to_py(w);
      },
      py::arg("target"), py::arg("state"), py::arg("tid"), py::arg("futex_address") = py::none(),
      "Which Python Lock/RLock/Condition thread `tid` waits on and who owns it (a model.waits.PythonLockWait).  "
      "state: a PythonLocks "
      "(cached), an Interpreter, or None (reads the interpreter now).  Never raises on bad target memory.");
}

}  // namespace pyhang::bindings
