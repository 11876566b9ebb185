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
// The dict: kind ("py-lock" | "py-rlock" | "py-condition" | None), confidence,
// object, type_name, wait_address, locked, owner_thread_id, owner_tid, count,
// owner_source ("lock-word" | "heuristic" | "unknown"), suspects [tid],
// frame {function, file, line}, condition, condition_lock,
// condition_lock_type, condition_lock_locked, condition_lock_owner_thread_id,
// condition_lock_owner_tid, condition_lock_count, evidence, problem (None
// when empty).  Addresses are ints, 0 → None.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/cpython/locks.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

py::object addr(Addr a) { return a ? py::cast(a) : py::none(); }
py::object text(std::string_view s) { return s.empty() ? py::object(py::none()) : py::str(s); }

py::dict wait_dict(const cpython::PyLockWait& w) {
  py::dict d;
  d["kind"] = text(to_string(w.kind));
  d["confidence"] = text(to_string(w.confidence));
  d["object"] = addr(w.object);
  d["type_name"] = text(w.type_name);
  d["wait_address"] = addr(w.wait_address);
  d["locked"] = opt(w.locked);
  d["owner_thread_id"] = opt(w.owner_thread_id);
  d["owner_tid"] = opt(w.owner_tid);
  d["count"] = opt(w.count);
  d["owner_source"] = py::str(to_string(w.owner_source));
  d["suspects"] = w.suspects;
  if (w.frame_function.empty()) {
    d["frame"] = py::none();
  } else {
    py::dict f;
    f["function"] = w.frame_function;
    f["file"] = w.frame_file;
    f["line"] = w.frame_line;
    d["frame"] = f;
  }
  d["condition"] = addr(w.condition);
  d["condition_lock"] = addr(w.condition_lock);
  d["condition_lock_type"] = text(w.condition_lock_type);
  d["condition_lock_locked"] = opt(w.condition_lock_locked);
  d["condition_lock_owner_thread_id"] = opt(w.condition_lock_owner_thread_id);
  d["condition_lock_owner_tid"] = opt(w.condition_lock_owner_tid);
  d["condition_lock_count"] = opt(w.condition_lock_count);
  d["evidence"] = w.evidence;
  d["problem"] = text(w.problem);
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
      w = cpython::find_python_lock_wait(*target_, state(), tid, futex);
    }
    return wait_dict(w);
  }
  Target& target() { return *target_; }

 private:
  std::shared_ptr<Target> target_;
  std::shared_ptr<cpython::Interpreter> interp_;  // null: own_ was read here
  cpython::PythonState own_;
};

}  // namespace

void register_pylocks(py::module_& m) {
  bind_enum(m, "PyLockKind", cpython::kPyLockKindNames, "Which Python lock a thread waits on (python_lock_wait()['kind']).");
  py::class_<PythonLocks>(m, "PythonLocks")
      .def(py::init<std::shared_ptr<Target>>(), py::arg("target"),
           "Reads the target's interpreter once (threads and innermost frames) for python-lock questions.")
      .def(py::init<std::shared_ptr<cpython::Interpreter>>(), py::arg("interpreter"),
           "Answers python-lock questions from an Interpreter already read (with frames).")
      .def_property_readonly("status", &PythonLocks::status)
      .def("wait", &PythonLocks::wait, py::arg("tid"), py::arg("futex_address") = py::none(),
           "The Python lock thread `tid` waits on, given the futex address it sleeps on (rdi of futex(2)).");

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
