// asyncio of the target: tasks, what each awaits, loops and their threads
// (pyhang/cpython/asyncio.hpp).
//
//   asyncio_state(interpreter) -> dict
//     {"imported": bool, "registry": str|None, "problem": ReadProblem|None, "warnings": [str],
//      "tasks": [{object, type, native, name, state, loop, coro,
//                 stack: [{function, file, line}] (innermost first),
//                 innermost_self, innermost_self_type (first local of the innermost frame),
//                 awaits: None | {object, type, state, loop, children: [addr],
//                                 chained: [{object, type}], when},
//                 has_exception, exception_type, exception_unretrieved,
//                 completes: [{object, type}], problem}],
//      "loops": [{loop, type, tid, frame_function, current_task, ready, scheduled, stopping,
//                 ready_chained: [{object, type}]}],
//      "jobs": [{tid, work_item, future}]}
//   Addresses are ints, 0 → None; state is a FutureState text.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {


py::list objects(const std::vector<Addr>& addrs, const std::vector<std::string>& types) {
  py::list out;
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    py::dict o;
    o["object"] = addrs[i];
    o["type"] = text(i < types.size() ? types[i] : "");
    out.append(o);
  }
  return out;
}

py::dict future_dict(const cpython::PyFutureInfo& f) {
  py::dict d;
  d["object"] = addr(f.object);
  d["type"] = text(f.type);
  d["state"] = py::str(to_string(f.state));
  d["loop"] = addr(f.loop);
  d["children"] = f.children;
  d["chained"] = objects(f.chained, f.chained_types);
  d["when"] = opt(f.when);
  return d;
}

py::dict task_dict(const cpython::PyTaskInfo& t) {
  py::dict d;
  d["object"] = addr(t.object);
  d["type"] = text(t.type);
  d["native"] = t.native;
  d["name"] = text(t.name);
  d["state"] = py::str(to_string(t.state));
  d["loop"] = addr(t.loop);
  d["coro"] = addr(t.coro);
  py::list stack;
  for (const auto& f : t.stack) {
    py::dict e;
    e["function"] = f.function;
    e["file"] = f.file;
    e["line"] = f.line;
    stack.append(e);
  }
  d["stack"] = stack;
  d["innermost_self"] = addr(t.innermost_self);
  d["innermost_self_type"] = text(t.innermost_self_type);
  d["awaits"] = t.awaits ? py::object(future_dict(*t.awaits)) : py::object(py::none());
  d["has_exception"] = t.has_exception;
  d["exception_type"] = text(t.exception_type);
  d["exception_unretrieved"] = t.exception_unretrieved;
  d["completes"] = objects(t.completes, t.completes_types);
  d["problem"] = read_problem(t.problem);
  return d;
}

py::dict state_dict(const cpython::AsyncioState& s) {
  py::dict d;
  d["imported"] = s.imported;
  d["registry"] = text(s.registry);
  d["problem"] = read_problem(s.problem);
  py::list warnings;
  for (const auto& w : s.warnings) warnings.append(state_warning(w));
  d["warnings"] = warnings;
  py::list tasks, loops, jobs;
  for (const auto& t : s.tasks) tasks.append(task_dict(t));
  for (const auto& l : s.loops) {
    py::dict e;
    e["loop"] = addr(l.loop);
    e["type"] = text(l.type);
    e["tid"] = opt(l.tid);
    e["frame_function"] = text(l.frame_function);
    e["current_task"] = addr(l.current_task);
    e["ready"] = opt(l.ready);
    e["scheduled"] = opt(l.scheduled);
    e["stopping"] = opt(l.stopping);
    e["ready_chained"] = objects(l.ready_chained, l.ready_chained_types);
    loops.append(e);
  }
  for (const auto& j : s.jobs) {
    py::dict e;
    e["tid"] = j.tid;
    e["work_item"] = addr(j.work_item);
    e["future"] = addr(j.future);
    jobs.append(e);
  }
  d["tasks"] = tasks;
  d["loops"] = loops;
  d["jobs"] = jobs;
  return d;
}

}  // namespace

void register_asyncio(py::module_& m) {
  bind_enum(m, "FutureState", cpython::kFutureStateNames, "An asyncio future's or task's state (asyncio_state()).");
  m.def(
      "asyncio_state",
      [](std::shared_ptr<cpython::Interpreter> interp) -> py::dict {
        cpython::AsyncioState s;
        {
          py::gil_scoped_release nogil;
          s = cpython::asyncio_state(interp->target(), interp->state());  // with _asyncio's own offsets (3.14+)
        }
        return state_dict(s);
      },
      py::arg("interpreter"),
      "asyncio of the target: every task (state, name, coroutine chain, the future it awaits), the event loops "
      "and the threads running them, executor jobs.  Never raises on bad target memory.");
}

}  // namespace pyhang::bindings
