// asyncio of the target: tasks, what each awaits, loops and their threads
// (pyhang/cpython/asyncio.hpp), crossing as the records of
// pyhang.model.asyncio_facts (python/records.hpp; the tables below):
//
//   asyncio_state(interpreter) -> AsyncioState
//     imported, registry, problem (ReadProblem | None), warnings ([StateIssue]),
//     tasks: [TaskFacts: object, type, native, name, state, loop, coro,
//             stack: [CodeLine] (innermost first),
//             innermost_self, innermost_self_type (first local of the innermost frame),
//             awaits: AwaitedFuture | None (object, type, state, loop, children: [addr],
//                                           chained: [TypedObject], when),
//             has_exception, exception_type, exception_unretrieved,
//             completes: [TypedObject], problem],
//     loops: [LoopFacts: loop, type, tid, frame_function, current_task, ready, scheduled, stopping,
//             ready_chained: [TypedObject]],
//     jobs: [ExecutorJob: tid, work_item, future]
//   Addresses are ints, 0 → None (a TypedObject's object is the address as it is); state is a FutureState
//   name; clock is the collector's.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

// One object of a list the native side keeps as two (addresses, and their types beside).
struct TypedObject {
  Addr object;
  const std::string* type;  // nullptr: the types list is shorter
};
// The AsyncioState, its warnings the StateIssue records of state_warning (bind_cpython.cpp).
struct StateAnswer {
  const cpython::AsyncioState& s;
};

std::vector<TypedObject> objects(const std::vector<Addr>& addrs, const std::vector<std::string>& types) {
  std::vector<TypedObject> out;
  out.reserve(addrs.size());
  for (std::size_t i = 0; i < addrs.size(); ++i) out.push_back({addrs[i], i < types.size() ? &types[i] : nullptr});
  return out;
}

py::object warnings(const std::vector<cpython::StateWarning>& ws) {
  py::list out;
  for (const auto& w : ws) out.append(state_warning(w));
  return std::move(out);
}

}  // namespace

PYHANG_RECORD(TypedObject, "pyhang.model.asyncio_facts", "TypedObject",
              PYHANG_FIELD(object), PYHANG_FIELD_AS("type", text(v.type ? *v.type : std::string())))
PYHANG_RECORD(cpython::PyFutureInfo, "pyhang.model.asyncio_facts", "AwaitedFuture",
              PYHANG_FIELD_AS("object", addr(v.object)), PYHANG_FIELD_AS("type", text(v.type)), PYHANG_FIELD(state),
              PYHANG_FIELD_AS("loop", addr(v.loop)), PYHANG_FIELD(children),
              PYHANG_FIELD_AS("chained", objects(v.chained, v.chained_types)), PYHANG_FIELD(when))
PYHANG_RECORD(cpython::PyTaskInfo, "pyhang.model.asyncio_facts", "TaskFacts",
              PYHANG_FIELD_AS("object", addr(v.object)), PYHANG_FIELD_AS("type", text(v.type)), PYHANG_FIELD(native),
              PYHANG_FIELD_AS("name", text(v.name)), PYHANG_FIELD(state), PYHANG_FIELD_AS("loop", addr(v.loop)),
              PYHANG_FIELD_AS("coro", addr(v.coro)), PYHANG_FIELD_AS("stack", code_lines(v.stack)),
              PYHANG_FIELD_AS("innermost_self", addr(v.innermost_self)),
              PYHANG_FIELD_AS("innermost_self_type", text(v.innermost_self_type)), PYHANG_FIELD(awaits),
              PYHANG_FIELD(has_exception), PYHANG_FIELD_AS("exception_type", text(v.exception_type)),
              PYHANG_FIELD(exception_unretrieved), PYHANG_FIELD_AS("completes", objects(v.completes, v.completes_types)),
              PYHANG_FIELD_AS("problem", read_problem(v.problem)))
PYHANG_RECORD(cpython::PyLoopInfo, "pyhang.model.asyncio_facts", "LoopFacts",
              PYHANG_FIELD_AS("loop", addr(v.loop)), PYHANG_FIELD_AS("type", text(v.type)), PYHANG_FIELD(tid),
              PYHANG_FIELD_AS("frame_function", text(v.frame_function)),
              PYHANG_FIELD_AS("current_task", addr(v.current_task)), PYHANG_FIELD(ready), PYHANG_FIELD(scheduled),
              PYHANG_FIELD(stopping), PYHANG_FIELD_AS("ready_chained", objects(v.ready_chained, v.ready_chained_types)))
PYHANG_RECORD(cpython::PyExecutorJob, "pyhang.model.asyncio_facts", "ExecutorJob",
              PYHANG_FIELD(tid), PYHANG_FIELD_AS("work_item", addr(v.work_item)), PYHANG_FIELD_AS("future", addr(v.future)))
PYHANG_RECORD(StateAnswer, "pyhang.model.asyncio_facts", "AsyncioState",
              PYHANG_FIELD_AS("imported", v.s.imported), PYHANG_FIELD_AS("registry", text(v.s.registry)),
              PYHANG_FIELD_AS("problem", read_problem(v.s.problem)), PYHANG_FIELD_AS("warnings", warnings(v.s.warnings)),
              PYHANG_FIELD_AS("tasks", v.s.tasks), PYHANG_FIELD_AS("loops", v.s.loops), PYHANG_FIELD_AS("jobs", v.s.jobs))

void register_asyncio(py::module_& m) {
  bind_enum(m, "FutureState", cpython::kFutureStateNames, "An asyncio future's or task's state (asyncio_state()).");
  m.def(
      "asyncio_state",
      [](std::shared_ptr<cpython::Interpreter> interp) -> py::object {
        cpython::AsyncioState s;
        {
          py::gil_scoped_release nogil;
          s = cpython::asyncio_state(interp->target(), interp->state());  // with _asyncio's own offsets (3.14+)
        }
        return to_py(StateAnswer{s});
      },
      py::arg("interpreter"),
      "asyncio of the target as an AsyncioState record: every task (state, name, coroutine chain, the future it awaits), the event loops "
      "and the threads running them, executor jobs.  Never raises on bad target memory.");
}

}  // namespace pyhang::bindings
