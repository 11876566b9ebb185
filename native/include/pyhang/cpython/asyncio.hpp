// asyncio of the target, read from its own objects: every task, its state,
// the coroutine chain it is suspended in, the future it awaits, the event
// loops and the threads running them — live and from cores, 3.8 - 3.15.
//
// Where the tasks are (Lib/asyncio/tasks.py of each version, which the C
// module _asyncio replaces with its own objects of the same names):
//  - 3.8 - 3.11: asyncio.tasks._all_tasks, a weakref.WeakSet of every task;
//  - 3.12 - 3.13: asyncio.tasks._scheduled_tasks (WeakSet of tasks created
//    by the loop) and _eager_tasks (a set of eagerly started tasks);
//  - 3.14+: _asyncio keeps its own tasks (_asyncio.Task and subclasses) in
//    lists, one per thread state (_PyThreadStateImpl.asyncio_tasks_head,
//    the thread that created the task) and one in the interpreter
//    (PyInterpreterState.asyncio_tasks_head, the tasks of threads that
//    exited), linked through each TaskObj's task_node; a task leaves its
//    list once it is done, so a finished C task is found nowhere.
//    asyncio.tasks._scheduled_tasks and _eager_tasks still hold
//    pure-Python tasks; tasks that are no asyncio.Task (a third party's,
//    given to asyncio.tasks._register_task, which is _asyncio's) are in
//    _asyncio's module state (non_asyncio_tasks, non_asyncio_eager_tasks).
//    All of these are read.
// asyncio.tasks._current_tasks is {loop: task} of the task each running
// loop is stepping now; 3.14's _asyncio keeps it in the thread state running
// the loop instead (_PyThreadStateImpl.asyncio_running_loop and
// asyncio_running_task), where the loop itself is also found.
//
// A task is decoded through the C layout of _asyncio.Task / _asyncio.Future
// (native/src/cpython/layouts/asyncio.hpp; 3.14+ corrected by the target's
// own _AsyncioDebug offsets where they cover a field) when its type is the
// C one, or through its instance attributes (_state, _coro, _fut_waiter,
// _name, _loop, _exception, _log_traceback) when it is the pure-Python
// asyncio.Task.
//
// The coroutine chain: from the task's coroutine, each suspended
// generator's frame, and what it awaits: the item its value stack holds for
// the await / yield from it is suspended in (the top up to 3.14, the one
// below the top on 3.15; a FutureIter, a coroutine, a generator) —
// innermost last in the walk, given innermost first.
//
// An event loop is found on the stack of the thread running it: a frame of
// BaseEventLoop.run_forever / _run_once (asyncio/base_events.py) whose
// `self` is the loop.  A run_in_executor job is found the same way: the
// `self` of _WorkItem.run on a pool thread's stack.
//
// Nothing here throws on bad target memory; every walk (registries, task
// lists, coroutine chains) is bounded and a list or chain that loops is
// cut; what cannot be read is left empty and said in `problem`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {
class AddressSpace;
class Target;
}  // namespace pyhang

namespace pyhang::cpython {

// A future's (or task's) state: _asyncio's fut_state / asyncio.Future._state.
enum class FutureState : std::uint8_t { Unknown, Pending, Cancelled, Finished };

inline constexpr std::array<Named<FutureState>, 4> kFutureStateNames{{
    {FutureState::Unknown, "unknown"},
    {FutureState::Pending, "pending"},
    {FutureState::Cancelled, "cancelled"},
    {FutureState::Finished, "finished"},
}};
constexpr std::string_view to_string(FutureState s) { return name_in(kFutureStateNames, s); }
constexpr std::optional<FutureState> parse_future_state(std::string_view s) { return parse_in(kFutureStateNames, s); }

// A future-like object: what a task awaits, or a future's own facts.
struct PyFutureInfo {
  Addr object = 0;
  std::string type;                     // tp_name: "_asyncio.Future", "_GatheringFuture", "_asyncio.Task", ...
  FutureState state = FutureState::Unknown;
  Addr loop = 0;
  std::vector<Addr> children;           // a gather's _children (tasks or futures)
  // Objects whose completion completes this one: what the closures of its
  // done-callbacks and of the callbacks registered on it refer to, e.g. the
  // concurrent.futures.Future of run_in_executor (asyncio.futures._chain_future).
  std::vector<Addr> chained;
  std::vector<std::string> chained_types;
  std::optional<double> when;           // a sleep's deadline: the loop-time of the TimerHandle that completes it
};

struct PyTaskInfo {
  Addr object = 0;
  std::string type;                     // "_asyncio.Task" or a Python class name ("Task")
  bool native = false;                  // decoded through _asyncio's C layout
  std::string name;                     // Task.get_name() (3.8+)
  FutureState state = FutureState::Unknown;
  Addr loop = 0;
  Addr coro = 0;
  std::vector<PyFrame> stack;           // the suspended coroutine chain, innermost first
  // The first local of the innermost coroutine frame: a method's `self`
  // (the asyncio.Lock of Lock.acquire, the Queue of Queue.get); 0 when none.
  Addr innermost_self = 0;
  std::string innermost_self_type;
  std::optional<PyFutureInfo> awaits;   // fut_waiter: the future its coroutine waits on
  bool has_exception = false;           // finished with an exception
  std::string exception_type;
  bool exception_unretrieved = false;   // the exception was never retrieved (fut_log_tb / _log_traceback)
  // Objects this task completes when it finishes (the concurrent future of
  // run_coroutine_threadsafe, chained by a done-callback).
  std::vector<Addr> completes;
  std::vector<std::string> completes_types;
  ReadProblem problem;
};

struct PyLoopInfo {
  Addr loop = 0;
  std::string type;                     // "_UnixSelectorEventLoop", ...
  std::optional<int> tid;               // the LWP whose stack runs it
  std::string frame_function;           // the base_events.py frame it was found by
  Addr current_task = 0;                // _current_tasks[loop]: the task being stepped now, 0 when none
  std::optional<std::int64_t> ready;    // len(loop._ready): callbacks ready to run
  std::optional<std::int64_t> scheduled;  // len(loop._scheduled): timers
  std::optional<bool> stopping;         // loop._stopping
  // Futures the closures of the ready callbacks refer to: what the loop
  // completes once it runs them (run_coroutine_threadsafe's concurrent
  // future before its task exists).
  std::vector<Addr> ready_chained;
  std::vector<std::string> ready_chained_types;
};

// A thread of a concurrent.futures.ThreadPoolExecutor running a job: the
// `self` of _WorkItem.run (concurrent/futures/thread.py) and the Future it completes.
struct PyExecutorJob {
  int tid = 0;
  Addr work_item = 0;
  Addr future = 0;
};

struct AsyncioState {
  bool imported = false;                // asyncio.tasks is in sys.modules
  std::string registry;                 // where the tasks were found ("asyncio.tasks._all_tasks", ...)
  std::vector<PyTaskInfo> tasks;
  std::vector<PyLoopInfo> loops;
  std::vector<PyExecutorJob> jobs;
  ReadProblem problem;                  // what could not be read; empty when all was read
  // How the C objects were read differently from the hand-written table
  // (the target's _AsyncioDebug or _Py_DebugOffsets differ from it, or
  // were unusable): StateProblem::AsyncioDebug* warnings.
  std::vector<StateWarning> warnings;
};

struct AsyncioOptions {
  std::size_t max_tasks = 10000;        // in all; also the nodes followed in one task list
  std::size_t max_chain = 64;           // coroutines followed per task
  std::size_t max_loop_frames = 256;    // frames searched per thread for run_forever
  std::size_t max_timers = 10000;       // loop._scheduled entries read for sleep deadlines
  // Where the target's _AsyncioDebug is (3.14+, asyncio_debug_offsets());
  // 0: the C objects are read with the hand-written table alone.
  Addr asyncio_debug = 0;
};

// _asyncio's own debug offsets in the target (3.14+): the address of its
// `_AsyncioDebug`, which fills the ".AsyncioDebug" section of the object
// _asyncio is in (its extension module, or the executable or libpython it
// is built into); 0 when no mapped object has one (before 3.14, asyncio
// not imported, or the object's file could not be opened).
Addr asyncio_debug_offsets(const AddressSpace& space);

AsyncioState asyncio_state(MemoryReader& memory, const PythonState& state, const AsyncioOptions& opts = {});
// The same, with _asyncio's own debug offsets looked up in the target's
// mapped objects (unless opts names them).
AsyncioState asyncio_state(Target& target, const PythonState& state, const AsyncioOptions& opts = {});

}  // namespace pyhang::cpython
