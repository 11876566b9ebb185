// Which Python lock a blocked thread waits on (pyhang/cpython/locks.hpp).
//
//   locks = PythonLocks(target)      # reads the interpreter once (cpython::inspect, innermost frames)
//   locks = PythonLocks(interpreter) # uses an Interpreter already read: no inspect at all
//   locks.status                     # "ok", "not-python", ... (PythonState.status)
//   locks.wait(tid, futex_address=None) -> dict          # cheap: no second inspect
//
//   python_lock_wait(target, state, tid, futex_address=None) -> dict
//       state: a PythonLocks (cached: what `thread apply all lock-owner`
//       should pass), an Interpreter, the dict python_state() returned (its
//       threads and innermost frames are used), or None (inspects the
//       target now).
//
// The dict: kind ("py-lock" | "py-rlock" | "py-condition" | "py-buffered-io" | None), confidence,
// object, type_name, wait_address, locked, owner_thread_id, owner_tid, count,
// owner_source ("lock-word" | "heuristic" | "unknown"), suspects [tid],
// frame {function, file, line}, condition, condition_lock,
// condition_lock_type, condition_lock_locked, condition_lock_owner_thread_id,
// condition_lock_owner_tid, condition_lock_count, suspect_frames
// [{function, file, line}] (where each suspect references the lock), self_frames [{function, file, line}]
// (the waiter's own outer frames that reference a Lock),
// join_self (the Thread a join frame waits for), join_frame_function, parking_address,
// stream_name (a buffered object's raw name, as repr() gives it), found_in
// ("sys.stdout": where an object no frame references was found), how it was found: found (PyLockFound), futex,
// slot (None when found_in names where), via_method (a bound method of it was in the slot); problem, and
// scan_problem (a futex in none of the lock objects found: what of the frames could not be read): a
// ReadProblem's data (read_problem; model.unread), None when empty.  Addresses are ints, 0 → None.
//
//   locks.frame_selves(tid) -> [{index, function, file, line, self, type}]
//       the `self` (first local) of each innermost frame, with its type name
//   locks.attributes(address, [name, ...]) -> {name: value or None}
//       value: {address, type, kind, integer, text, length, boolean, problem}
//   locks.members([address, ...], max) -> [[address, ...] or None]: a set's, frozenset's, list's or tuple's members
//   locks.object_names([address, ...]) -> {address: {module, variable, attribute, owner_type, owner,
//       tid, function}}: the variable reaching each (cpython/object_names.hpp)
//   locks.thread_references([address, ...]) -> {"by_object": {address: [tid]}, "complete": bool}
//   locks.lock_objects([address, ...]) -> [{object, type_name, refcount, alive, locked, owner_thread_id,
//       owner_tid, references: [{tid, function, file, line}]}]: each address as this process has it, for a fork
//       child's copy of a lock at the same address (cpython/locks.hpp LockObject)
//   locks.threading() -> dict        # threading's Thread objects (pyhang/cpython/threading.hpp):
//       {"imported": bool, "problem": ReadProblem|None, "threads": [{object, type, name, ident,
//        native_id, daemon, tstate_lock, handle, handle_struct, started}]}
#include <pybind11/stl.h>

#include <algorithm>

#include "bindings.hpp"
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


// An integer member of a C type (cpython::int_member) as value_dict gives an int: no object, address 0.
py::dict int_member_dict(std::int64_t n) {
  py::dict d;
  d[key("address")] = 0;
  d[key("type")] = "int";
  d[key("kind")] = py::str(to_string(cpython::ValueKind::Int));
  d[key("boolean")] = py::none();
  d[key("integer")] = n;
  d[key("real")] = py::none();
  d[key("text")] = py::none();
  d[key("length")] = py::none();
  d[key("problem")] = py::none();
  return d;
}


py::dict frame_dict(const std::string& function, const std::string& file, int line) {
  py::dict f;
  f[key("function")] = function;
  f[key("file")] = file;
  f[key("line")] = line;
  return f;
}

py::dict wait_dict(const cpython::PyLockWait& w) {
  py::dict d;
  d[key("kind")] = text(to_string(w.kind));
  d[key("confidence")] = text(to_string(w.confidence));
  d[key("object")] = addr(w.object);
  d[key("type_name")] = text(w.type_name);
  d[key("wait_address")] = addr(w.wait_address);
  d[key("locked")] = opt(w.locked);
  d[key("owner_thread_id")] = opt(w.owner_thread_id);
  d[key("owner_tid")] = opt(w.owner_tid);
  d[key("count")] = opt(w.count);
  d[key("owner_source")] = py::str(to_string(w.owner_source));
  d[key("suspects")] = w.suspects;
  d[key("frame")] = w.frame_function.empty() ? py::object(py::none())
                                        : py::object(frame_dict(w.frame_function, w.frame_file, w.frame_line));
  d[key("condition")] = addr(w.condition);
  d[key("condition_lock")] = addr(w.condition_lock);
  d[key("condition_lock_type")] = text(w.condition_lock_type);
  d[key("condition_lock_locked")] = opt(w.condition_lock_locked);
  d[key("condition_lock_owner_thread_id")] = opt(w.condition_lock_owner_thread_id);
  d[key("condition_lock_owner_tid")] = opt(w.condition_lock_owner_tid);
  d[key("condition_lock_count")] = opt(w.condition_lock_count);
  py::list suspect_frames;
  for (const auto& f : w.suspect_frames) suspect_frames.append(frame_dict(f.function, f.file, f.line));
  d[key("suspect_frames")] = suspect_frames;
  py::list self_frames;
  for (const auto& f : w.self_frames) self_frames.append(frame_dict(f.function, f.file, f.line));
  d[key("self_frames")] = self_frames;
  d[key("join_self")] = addr(w.join_self);
  d[key("parking_address")] = addr(w.parking_address);
  d[key("join_frame_function")] = text(w.join_frame_function);
  d[key("stream_name")] = text(w.stream_name);
  d[key("found_in")] = text(w.found_in);
  d[key("found")] = w.found == cpython::PyLockFound::None ? py::object(py::none()) : py::object(py::str(std::string(to_string(w.found))));
  d[key("futex")] = addr(w.futex);
  d[key("slot")] = w.slot >= 0 ? py::object(py::int_(w.slot)) : py::object(py::none());
  d[key("via_method")] = w.via_method;
  d[key("problem")] = read_problem(w.problem);
  d[key("scan_problem")] = read_problem(w.scan_problem);
  return d;
}

// Only the innermost frames: the lock search reads no deeper (a full walk of
// every stack here would repeat python_state()'s).
cpython::PythonState inspect_now(Target& target) {
  cpython::Options opts;
  opts.max_frames = cpython::LockWaitOptions{}.max_frames;
  py::gil_scoped_release nogil;  // a callback target takes it back to read
  return cpython::inspect(target, opts);
}

// The part of python_state()'s dict the lock search reads: version, each
// thread's ids and its innermost frames.
cpython::PythonState state_from_dict(const py::dict& d, std::size_t max_frames) {
  cpython::PythonState s;
  auto get = [](const py::dict& m, const char* k) -> py::object {
    return m.contains(k) ? py::object(m[k]) : py::object(py::none());
  };
  if (auto v = get(d, "status"); !v.is_none())
    s.status = cpython::parse_status(v.cast<std::string>()).value_or(cpython::Status::NotPython);
  if (auto v = get(d, "version"); !v.is_none()) s.version = v.cast<std::string>();
  if (auto v = get(d, "major"); !v.is_none()) s.major = v.cast<int>();
  if (auto v = get(d, "minor"); !v.is_none()) s.minor = v.cast<int>();
  if (auto v = get(d, "patch"); !v.is_none()) s.patch = v.cast<int>();
  if (auto v = get(d, "runtime"); !v.is_none()) s.runtime = v.cast<Addr>();
  if (auto v = get(d, "threads"); !v.is_none()) {
    for (auto item : v) {
      auto t = item.cast<py::dict>();
      cpython::PyThreadInfo info;
      if (auto x = get(t, "tstate"); !x.is_none()) info.tstate = x.cast<Addr>();
      if (auto x = get(t, "thread_id"); !x.is_none()) info.thread_id = x.cast<std::uint64_t>();
      if (auto x = get(t, "native_tid"); !x.is_none()) info.native_tid = x.cast<int>();
      if (auto frames = get(t, "frames"); !frames.is_none()) {
        for (auto fi : frames) {
          if (info.frames.size() >= max_frames) break;
          auto f = fi.cast<py::dict>();
          cpython::PyFrame pf;
          if (auto x = get(f, "function"); !x.is_none()) pf.function = x.cast<std::string>();
          if (auto x = get(f, "file"); !x.is_none()) pf.file = x.cast<std::string>();
          if (auto x = get(f, "line"); !x.is_none()) pf.line = x.cast<int>();
          if (auto x = get(f, "frame"); !x.is_none()) pf.frame = x.cast<Addr>();
          if (auto x = get(f, "code"); !x.is_none()) pf.code = x.cast<Addr>();
          info.frames.push_back(std::move(pf));
        }
      }
      s.threads.push_back(std::move(info));
    }
  }
  return s;
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
  py::dict wait(int tid, std::optional<Addr> futex) {
    cpython::PyLockWait w;
    {
      py::gil_scoped_release nogil;
      if (!references_) references_ = std::make_unique<cpython::LockReferences>(target_->memory(), state());
      cpython::LockWaitOptions opts;
      opts.references = references_.get();
      w = cpython::find_python_lock_wait(*target_, state(), tid, futex, opts);
    }
    return wait_dict(w);
  }
  Target& target() { return *target_; }
  py::list frame_selves(int tid) {
    std::vector<cpython::FrameSelf> selves;
    {
      py::gil_scoped_release nogil;
      selves = cpython::frame_selves(target_->memory(), state(), tid);
    }
    py::list out;
    for (const auto& f : selves) {
      py::dict d = frame_dict(f.function, f.file, f.line);
      d[key("index")] = f.index;
      d[key("self")] = addr(f.self);
      d[key("type")] = text(f.type);
      out.append(d);
    }
    return out;
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
        out[py::str(name)] = value_dict(*objects_, a);
      } else if (auto n = cpython::int_member(target_->memory(), state(), object, name)) {
        out[py::str(name)] = int_member_dict(*n);   // a C type's integer member (PyMemberDef): no object
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
  // {address: path} for the addresses a variable of the program reaches (cpython/object_names.hpp).
  py::dict object_names(const std::vector<Addr>& addresses) {
    std::unordered_map<Addr, cpython::ObjectPath> found;
    {
      py::gil_scoped_release nogil;
      found = cpython::object_names(target_->memory(), state(), addresses);
    }
    py::dict out;
    for (const auto& [a, p] : found) {
      py::dict d;
      d[key("module")] = text(p.module);
      d[key("variable")] = p.variable;
      d[key("attribute")] = text(p.attribute);
      d[key("owner_type")] = text(p.owner_type);
      d[key("owner")] = addr(p.owner);
      d[key("tid")] = p.tid ? py::object(py::int_(p.tid)) : py::object(py::none());
      d[key("function")] = text(p.function);
      out[py::int_(a)] = d;
    }
    return out;
  }
  // {"by_object": {address: [tid]}, "complete": bool}: the threads whose frames reach each address.
  py::dict thread_references(const std::vector<Addr>& addresses) {
    cpython::ThreadReferences r;
    {
      py::gil_scoped_release nogil;
      r = cpython::thread_references(target_->memory(), state(), addresses);
    }
    py::dict by_object;
    for (const auto& [a, tids] : r.by_object) by_object[py::int_(a)] = tids;
    py::dict d;
    d[key("by_object")] = by_object;
    d[key("complete")] = r.complete;
    return d;
  }
  py::list lock_objects(const std::vector<Addr>& addresses) {
    std::vector<cpython::LockObject> found;
    {
      py::gil_scoped_release nogil;
      if (!references_) references_ = std::make_unique<cpython::LockReferences>(target_->memory(), state());
      found = cpython::lock_objects(target_->memory(), state(), addresses, references_.get());
    }
    py::list out;
    for (const auto& o : found) {
      py::dict d;
      d[key("object")] = o.object;
      d[key("type_name")] = text(o.type_name);
      d[key("refcount")] = opt(o.refcount);
      d[key("alive")] = o.alive;
      d[key("locked")] = opt(o.locked);
      d[key("owner_thread_id")] = opt(o.owner_thread_id);
      d[key("owner_tid")] = opt(o.owner_tid);
      py::list refs;
      for (const auto& [tid, f] : o.references) {
        py::dict r = frame_dict(f.function, f.file, f.line);
        r[key("tid")] = tid;
        refs.append(r);
      }
      d[key("references")] = refs;
      out.append(d);
    }
    return out;
  }
  py::dict threading() {
    cpython::ThreadingState t;
    {
      py::gil_scoped_release nogil;
      t = cpython::threading_state(target_->memory(), state());
    }
    py::dict d;
    d[key("imported")] = t.imported;
    d[key("problem")] = read_problem(t.problem);
    py::list threads;
    for (const auto& x : t.threads) {
      py::dict e;
      e[key("object")] = x.object;
      e[key("type")] = text(x.type);
      e[key("name")] = text(x.name);
      e[key("ident")] = opt(x.ident);
      e[key("native_id")] = opt(x.native_id);
      e[key("daemon")] = opt(x.daemon);
      e[key("tstate_lock")] = addr(x.tstate_lock);
      e[key("handle")] = addr(x.handle);
      e[key("handle_struct")] = addr(x.handle_struct);
      e[key("started")] = x.started;
      threads.append(e);
    }
    d[key("threads")] = threads;
    d[key("shutting_down")] = opt(t.shutting_down);
    return d;
  }

 private:
  std::shared_ptr<Target> target_;
  std::shared_ptr<cpython::Interpreter> interp_;  // null: own_ was read here
  cpython::PythonState own_;
  std::unique_ptr<cpython::PyObjects> objects_;  // made on the first attributes() call
  std::unique_ptr<cpython::LockReferences> references_;  // made on the first wait() call
};

}  // namespace

py::dict value_dict(cpython::PyObjects& objects, Addr a) {
  auto v = objects.value(a);
  py::dict d;
  d[key("address")] = v.address;
  d[key("type")] = v.type;
  d[key("kind")] = py::str(to_string(v.kind));
  d[key("boolean")] = opt(v.boolean);
  d[key("integer")] = opt(v.integer);
  d[key("real")] = opt(v.real);
  d[key("text")] = opt(v.text);
  d[key("length")] = v.length ? py::cast(*v.length) : opt(objects.length(a));
  d[key("problem")] = read_problem(v.problem);
  return d;
}

void register_pylocks(py::module_& m) {
  bind_enum(m, "PyLockKind", cpython::kPyLockKindNames, "Which Python lock a thread waits on (python_lock_wait()['kind']).");
  bind_enum(m, "PyLockFound", cpython::kPyLockFoundNames,
            "How the Python lock a thread waits on was found (python_lock_wait()['found']).");
  py::class_<PythonLocks>(m, "PythonLocks")
      .def(py::init<std::shared_ptr<Target>>(), py::arg("target"),
           "Reads the target's interpreter once (threads and innermost frames) for python-lock questions.")
      .def(py::init<std::shared_ptr<cpython::Interpreter>>(), py::arg("interpreter"),
           "Answers python-lock questions from an Interpreter already read (with frames).")
      .def_property_readonly("status", &PythonLocks::status)
      .def("wait", &PythonLocks::wait, py::arg("tid"), py::arg("futex_address") = py::none(),
           "The Python lock thread `tid` waits on, given the futex address it sleeps on (rdi of futex(2)).")
      .def("frame_selves", &PythonLocks::frame_selves, py::arg("tid"),
           "The `self` (first local) of each of the thread's innermost Python frames, with its type name.")
      .def("attributes", &PythonLocks::attributes, py::arg("address"), py::arg("names"),
           "Decoded values of the named attributes of a Python object (None for each one it does not have).")
      .def("members", &PythonLocks::members, py::arg("addresses"), py::arg("max"),
           "[[address] or None]: the members of each set, frozenset, list or tuple (at most `max` each), None for "
           "another object.")
      .def("object_names", &PythonLocks::object_names, py::arg("addresses"),
           "{address: {module, variable, attribute, owner_type, owner, tid, function}} for those of `addresses` "
           "that a variable of the program reaches: a module global, or an attribute of an instance that one or "
           "a local of the innermost frames refers to.")
      .def("thread_references", &PythonLocks::thread_references, py::arg("addresses"),
           "{by_object: {address: [tid]}, complete}: the threads whose Python frames reach each address (a local, or "
           "an attribute of an instance a local refers to); complete is false when some frames were not read.")
      .def("lock_objects", &PythonLocks::lock_objects, py::arg("addresses"),
           "[{object, type_name, refcount, alive, locked, owner_thread_id, owner_tid, references}]: each address as this "
           "process has it (a threading lock or not, alive, locked) and the threads whose innermost frames reference "
           "it: for a fork child's copy of a lock at the same address.")
      .def("threading", &PythonLocks::threading,
           "threading's Thread objects: name, ident, native_id, daemon, the _tstate_lock or _handle joiners wait on.");

  m.def(
      "python_lock_wait",
      [](std::shared_ptr<Target> target, py::object state, int tid, std::optional<Addr> futex) -> py::dict {
        if (py::isinstance<PythonLocks>(state)) return state.cast<PythonLocks&>().wait(tid, futex);
        if (py::isinstance<cpython::Interpreter>(state))
          return PythonLocks(state.cast<std::shared_ptr<cpython::Interpreter>>()).wait(tid, futex);
        cpython::PythonState s;
        cpython::LockWaitOptions opts;
        if (state.is_none()) s = inspect_now(*target);
        else s = state_from_dict(state.cast<py::dict>(), opts.max_frames);
        cpython::PyLockWait w;
        {
          py::gil_scoped_release nogil;
          w = cpython::find_python_lock_wait(*target, s, tid, futex, opts);
        }
        return wait_dict(w);
      },
      py::arg("target"), py::arg("state"), py::arg("tid"), py::arg("futex_address") = py::none(),
      "Which Python Lock/RLock/Condition thread `tid` waits on and who owns it.  state: a PythonLocks "
      "(cached), an Interpreter, python_state()'s dict, or None (reads the interpreter now).  Never raises on bad target memory.");
}

}  // namespace pyhang::bindings
