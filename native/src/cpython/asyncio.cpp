// asyncio tasks, the futures they await and the loops running them (see
// pyhang/cpython/asyncio.hpp).
#include "pyhang/cpython/asyncio.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "cpython/asyncio_debug.hpp"
#include "cpython/asyncio_reader.hpp"
#include "cpython/internal.hpp"
#include "cpython/layouts/asyncio.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/locks.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::cpython {

namespace {

using detail::Effective;
using detail::plausible_pointer;
using detail::RemoteStruct;
using detail::TaskLists;
using namespace detail::asyncio_read;

bool is_loop_frame(const PyFrame& f) {
  if (!ends_with(f.file, "asyncio/base_events.py")) return false;
  auto fn = bare(f.function);
  return fn == "run_forever" || fn == "_run_once";
}

bool is_job_frame(const PyFrame& f) {
  return ends_with(f.file, "concurrent/futures/thread.py") && (f.function == "run" || f.function == "_WorkItem.run");
}

// The `self` of frame `index` of thread `tid` (0 when unreadable), and its type.
std::pair<Addr, std::string> self_of(MemoryReader& memory, const PythonState& state, int tid, std::size_t index) {
  LockWaitOptions lo;
  lo.max_frames = index + 1;
  auto selves = frame_selves(memory, state, tid, lo);
  if (selves.size() <= index || !plausible_pointer(selves[index].self)) return {0, ""};
  return {selves[index].self, selves[index].type};
}

// The tasks found, each once, at most max_tasks.
class TaskSet {
 public:
  TaskSet(Reader& r, std::size_t max) : r_(r), max_(max) {}
  void add(Addr t) {
    if (plausible_pointer(t) && !r_.is_none(t) && !full() && seen_.insert(t).second) tasks_.push_back(t);
  }
  bool full() const { return tasks_.size() >= max_; }
  std::vector<Addr>& tasks() { return tasks_; }

 private:
  Reader& r_;
  std::size_t max_;
  std::vector<Addr> tasks_;
  std::unordered_set<Addr> seen_;
};

// The tasks of a registry: a WeakSet of tasks (its `data` is a set of weak
// references) or a plain set; false when `reg` is neither.
bool registry_items(Reader& r, Addr reg, TaskSet& tasks, const AsyncioOptions& opts, ReadProblem* p) {
  PyObjects& objs = r.objs();
  std::string type = r.type(reg);
  if (type == "set") {
    for (Addr t : objs.set_items(reg, opts.max_tasks, p)) tasks.add(t);
  } else if (type == "WeakSet") {
    Addr data = objs.attribute(reg, "data", p);
    for (Addr ref : objs.set_items(data, opts.max_tasks, p))
      tasks.add(r.mem().read_pointer(ref + 16).value_or(0));  // PyWeakReference.wr_object; None once dead
  } else {
    return false;
  }
  return true;
}

// Tasks of the registries of asyncio.tasks.  3.14+ keeps only tasks that
// are not _asyncio's (pure-Python ones) there.
void registry_tasks(Reader& r, AsyncioState& out, TaskSet& tasks, std::vector<std::string>& found,
                    const AsyncioOptions& opts) {
  for (const char* name : {"_all_tasks", "_scheduled_tasks", "_eager_tasks"}) {
    ReadProblem p;
    Addr reg = r.objs().module_attribute("asyncio.tasks", name, &p);
    // 3.12+ keeps a function named all_tasks, not a registry
    if (!plausible_pointer(reg) || !registry_items(r, reg, tasks, opts, &p)) continue;
    if (!p.empty()) note(out.problem, p.within(ReadPart::Attribute, reg, std::string("asyncio.tasks.") + name));
    found.push_back(std::string("asyncio.tasks.") + name);
  }
}

// 3.14+: the tasks that are no asyncio.Task (a third party's, given to
// asyncio.tasks._register_task), which _asyncio keeps in its module state;
// read once the state is seen to hold _asyncio's Task type where the row
// says.  Nothing when _asyncio is not imported (pure-Python asyncio).
void module_state_tasks(Reader& r, const AsyncioLayout& al, AsyncioState& out, TaskSet& tasks,
                        std::vector<std::string>& found, const AsyncioOptions& opts) {
  if (al.module_state < 0) return;
  Addr mod = r.objs().module("_asyncio");
  if (!plausible_pointer(mod) || r.type(mod) != "module") return;
  Addr st = r.mem().read_pointer(mod + static_cast<Addr>(al.module_state)).value_or(0);
  Addr task_type =
      plausible_pointer(st) ? r.mem().read_pointer(st + static_cast<Addr>(al.state_task_type)).value_or(0) : 0;
  if (!plausible_pointer(task_type) || r.type_name_of_type(task_type) != "_asyncio.Task") {
    note(out.problem, unread_named(ReadPart::AsyncioState, st, ReadWhy::NoTaskType,
                                   std::to_string(al.major) + "." + std::to_string(al.minor)));
    return;
  }
  for (auto [name, at] : {std::pair{"non_asyncio_tasks", al.state_non_asyncio_tasks},
                          std::pair{"non_asyncio_eager_tasks", al.state_non_asyncio_eager_tasks}}) {
    ReadProblem p;
    Addr reg = r.mem().read_pointer(st + static_cast<Addr>(at)).value_or(0);
    if (!plausible_pointer(reg) || !registry_items(r, reg, tasks, opts, &p)) p = unread(ReadPart::Set, reg, ReadWhy::NotA);
    if (!p.empty()) note(out.problem, p.within(ReadPart::Field, 0, name).within(ReadPart::AsyncioState, st));
    else found.push_back(std::string("_asyncio's ") + name);
  }
}

// Takes the task of one node of a task list; why the walk must stop there
// otherwise (a node met before, one that is no task's, too many nodes).
ReadProblem next_task_node(Reader& r, Addr node, std::unordered_set<Addr>& visited, TaskSet& tasks,
                           const AsyncioOptions& opts) {
  ReadProblem stop;
  if (visited.size() >= opts.max_tasks || tasks.full()) {
    stop = unread(ReadPart::Task, 0, ReadWhy::StoppedAfter);
    stop.limit = static_cast<std::int64_t>(opts.max_tasks);
  } else if (!visited.insert(node).second) {
    stop = unread(ReadPart::TaskNode, 0, ReadWhy::Loops);
    stop.at = node;
  } else if (Addr t = plausible_pointer(node) ? r.task_of_node(node) : 0) {
    tasks.add(t);
  } else {
    stop = unread(ReadPart::TaskNode, node, ReadWhy::NotA);
  }
  return stop;
}

// One list of _asyncio's tasks (3.14+): circular, through each TaskObj's
// task_node, from the llist_node at `head` (in a thread state or the
// interpreter).  Every node is checked to be a task's before it is taken;
// a node met twice, an unreadable link, a node that is no task's or more
// than max_tasks nodes end the walk with a problem within `list` (the step naming the list).
void walk_task_list(Reader& r, const AsyncioLayout& al, Addr head, const ReadStep& list, TaskSet& tasks,
                    AsyncioState& out, const AsyncioOptions& opts) {
  MemoryReader& mem = r.mem();
  auto link = [&](Addr node) { return mem.read_pointer(node + static_cast<Addr>(al.llist_next)); };
  auto first = link(head);
  if (!first) {
    note(out.problem, ReadProblem{{list}, ReadWhy::Unreadable});
    return;
  }
  if (*first == 0) return;  // a thread state not initialised yet
  std::unordered_set<Addr> visited;
  for (Addr node = *first; node != head;) {
    ReadProblem stop = next_task_node(r, node, visited, tasks, opts);
    auto next = stop.empty() ? link(node) : std::nullopt;
    if (stop.empty() && !next) stop = unread(ReadPart::TaskNode, node);
    if (!stop.empty()) {
      note(out.problem, stop.within(list.part, list.address, list.name, list.number));
      return;
    }
    node = *next;
  }
}

// The lists of _asyncio's tasks (3.14+): one per thread state, and the
// interpreter's, which keeps the tasks of threads that exited.
void list_tasks(Reader& r, const PythonState& state, const Effective& e, AsyncioState& out, TaskSet& tasks,
                std::vector<std::string>& found, const AsyncioOptions& opts) {
  const TaskLists& lists = e.lists;
  if (e.al.task_node < 0 || lists.tstate_tasks_head < 0) return;
  std::vector<Addr> interps;
  for (const auto& t : state.threads) {
    if (!t.tstate) continue;
    const Addr head = t.tstate + static_cast<Addr>(lists.tstate_tasks_head);
    walk_task_list(r, e.al, head, ReadStep{ReadPart::ThreadTaskList, head, {}, t.native_tid.value_or(0)}, tasks, out,
                   opts);
    if (t.interp && std::find(interps.begin(), interps.end(), t.interp) == interps.end()) interps.push_back(t.interp);
  }
  found.push_back("_PyThreadStateImpl.asyncio_tasks_head");
  if (lists.interp_tasks_head < 0) return;
  for (Addr interp : interps) {
    const Addr head = interp + static_cast<Addr>(lists.interp_tasks_head);
    walk_task_list(r, e.al, head,
                   ReadStep{ReadPart::InterpreterTaskList, head, {}, static_cast<std::int64_t>(interp)}, tasks, out,
                   opts);
  }
  found.push_back("PyInterpreterState.asyncio_tasks_head");
}

// Every task: the registries of asyncio.tasks, and 3.14+ the task lists and
// _asyncio's own registries of tasks that are no asyncio.Task.
std::vector<Addr> collect_tasks(Reader& r, const PythonState& state, const Effective& e, AsyncioState& out,
                                const AsyncioOptions& opts) {
  TaskSet tasks(r, opts.max_tasks);
  std::vector<std::string> found;
  registry_tasks(r, out, tasks, found, opts);
  // Every version has one (3.14+ for pure-Python tasks): none is garbage.
  if (found.empty()) note(out.problem, unread(ReadPart::TaskRegistry, 0, ReadWhy::NotFound).within(ReadPart::Module, 0, "asyncio.tasks"));
  list_tasks(r, state, e, out, tasks, found, opts);
  module_state_tasks(r, e.al, out, tasks, found, opts);
  for (std::size_t i = 0; i < found.size(); ++i) out.registry += (i ? ", " : "") + found[i];
  return std::move(tasks.tasks());
}

// 3.14+: the loop each thread runs and the task it steps now, from its
// thread state (_asyncio's running loop and current task).
struct Running {
  std::optional<int> tid;
  Addr loop = 0;
  Addr task = 0;
};

std::vector<Running> running_loops(Reader& r, const PythonState& state, const TaskLists& lists) {
  std::vector<Running> out;
  if (lists.tstate_running_loop < 0 || lists.tstate_running_task < 0) return out;
  for (const auto& t : state.threads) {
    if (!t.tstate) continue;
    Addr loop = r.mem().read_pointer(t.tstate + static_cast<Addr>(lists.tstate_running_loop)).value_or(0);
    Addr task = r.mem().read_pointer(t.tstate + static_cast<Addr>(lists.tstate_running_task)).value_or(0);
    if (plausible_pointer(loop) && !r.is_none(loop))
      out.push_back({t.native_tid, loop, plausible_pointer(task) && !r.is_none(task) ? task : 0});
  }
  return out;
}

// Loops and executor jobs: found on the stacks of the threads running them
// (3.14+ also a thread state's running loop, where no frame shows it).
void find_loops(MemoryReader& memory, const PythonState& state, Reader& r, const std::vector<Running>& running,
                AsyncioState& out, const AsyncioOptions& opts) {
  for (const auto& t : state.threads) {
    if (!t.native_tid) continue;
    auto end = t.frames.begin() + static_cast<std::ptrdiff_t>(std::min(t.frames.size(), opts.max_loop_frames));
    if (auto it = std::find_if(t.frames.begin(), end, is_loop_frame); it != end) {
      auto [self, type] = self_of(memory, state, *t.native_tid, static_cast<std::size_t>(it - t.frames.begin()));
      if (!self) {
        note(out.problem, ReadProblem{{{ReadPart::Thread, 0, {}, *t.native_tid}, {ReadPart::EventLoop, 0, it->function, 0}},
                                      ReadWhy::Unreadable});
      } else {
        PyLoopInfo loop;
        loop.loop = self;
        loop.type = type;
        loop.tid = *t.native_tid;
        loop.frame_function = it->function;
        out.loops.push_back(std::move(loop));
      }
    }
    if (auto it = std::find_if(t.frames.begin(), end, is_job_frame); it != end) {
      auto [self, type] = self_of(memory, state, *t.native_tid, static_cast<std::size_t>(it - t.frames.begin()));
      Addr future = self && type == "_WorkItem" ? r.objs().attribute(self, "future") : 0;
      if (plausible_pointer(future)) out.jobs.push_back({*t.native_tid, self, future});
    }
  }
  for (const auto& run : running) {
    auto same = [&](const PyLoopInfo& l) { return l.loop == run.loop; };
    if (std::any_of(out.loops.begin(), out.loops.end(), same)) continue;
    PyLoopInfo loop;
    loop.loop = run.loop;
    loop.type = r.type(run.loop);
    loop.tid = run.tid;
    out.loops.push_back(std::move(loop));
  }
}

}  // namespace

AsyncioState asyncio_state(Target& target, const PythonState& state, const AsyncioOptions& opts) {
  AsyncioOptions with = opts;
  if (!with.asyncio_debug) with.asyncio_debug = asyncio_debug_offsets(target.space());
  return asyncio_state(target.memory(), state, with);
}

AsyncioState asyncio_state(MemoryReader& memory, const PythonState& state, const AsyncioOptions& opts) {
  AsyncioState out;
  if (state.status != Status::Ok && state.status != Status::Finalizing) {
    out.problem = no_python_state(to_string(state.status));
    return out;
  }
  auto layout = detail::layout_of(memory, state);
  const AsyncioLayout* row = asyncio_layout_for(state.major, state.minor);
  if (!layout || !row) {
    out.problem = unread_named(ReadPart::AsyncioState, 0, ReadWhy::NoLayout, state.version);
    return out;
  }
  const Effective e = detail::effective(memory, state, *layout, *row, opts.asyncio_debug, out.warnings);
  const AsyncioLayout* al = &e.al;
  Reader r(memory, state, *layout, e.al, opts);
  if (!r.objs().ok()) {
    out.problem = r.objs().problem();
    return out;
  }
  ReadProblem why;
  if (!r.objs().module("asyncio.tasks", &why)) {
    out.problem = why;  // a program that never imported asyncio
    return out;
  }
  out.imported = true;

  const std::vector<Running> running = running_loops(r, state, e.lists);
  find_loops(memory, state, r, running, out, opts);
  std::vector<Addr> tasks = collect_tasks(r, state, e, out, opts);

  // Loops the tasks belong to that no thread is running.
  auto known = [&](Addr loop) {
    return std::any_of(out.loops.begin(), out.loops.end(), [&](const PyLoopInfo& l) { return l.loop == loop; });
  };
  for (Addr t : tasks) {
    Addr loop = r.c_layout(t, al->task_size) ? memory.read_pointer(t + static_cast<Addr>(al->fut_loop)).value_or(0)
                                             : r.objs().attribute(t, "_loop");
    if (plausible_pointer(loop) && !r.is_none(loop) && !known(loop)) {
      PyLoopInfo info;
      info.loop = loop;
      info.type = r.type(loop);
      out.loops.push_back(std::move(info));
    }
  }

  // Per loop: the task being stepped (asyncio.tasks._current_tasks; 3.14+
  // _asyncio keeps it in the thread state instead), the ready queue, the timers.
  ReadProblem p;
  Addr current = r.objs().module_attribute("asyncio.tasks", "_current_tasks", &p);
  auto current_items = plausible_pointer(current) ? r.objs().dict_items(current, 1024, &p)
                                                  : std::vector<std::pair<Addr, Addr>>{};
  for (auto& loop : out.loops) {
    for (auto [l, t] : current_items)
      if (l == loop.loop) loop.current_task = t;
    for (const auto& run : running)
      if (run.loop == loop.loop && run.task) loop.current_task = run.task;
    if (Addr ready = r.objs().attribute(loop.loop, "_ready"); plausible_pointer(ready)) {
      loop.ready = r.objs().length(ready);
      r.read_ready(ready, loop);
    }
    if (Addr stopping = r.objs().attribute(loop.loop, "_stopping"); plausible_pointer(stopping))
      if (auto v = r.objs().integer(stopping)) loop.stopping = *v != 0;
    r.read_timers(loop.loop, loop);
  }

  for (Addr t : tasks) out.tasks.push_back(r.task(t));
  return out;
}

}  // namespace pyhang::cpython
