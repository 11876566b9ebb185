// The layout asyncio's objects and task lists are read with (3.14+: the
// hand-written row and the generated layout, corrected by the target's own
// _Py_DebugOffsets and _AsyncioDebug): cpython/asyncio_debug.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cpython/layouts/asyncio.hpp"
#include "cpython/layouts/layout.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython::detail {

// 3.14+: where a thread state (_PyThreadStateImpl) and an interpreter keep
// the heads of their lists of native tasks, and which loop and task a
// thread runs now; -1 before 3.14.
struct TaskLists {
  std::int64_t tstate_tasks_head = -1;
  std::int64_t tstate_running_loop = -1;
  std::int64_t tstate_running_task = -1;
  std::int64_t interp_tasks_head = -1;
};

// What the C objects and the task lists are read with: the hand-written row
// and the generated layout, corrected by the target's own debug offsets.
struct Effective {
  AsyncioLayout al;
  TaskLists lists;
};

// The row and lists for `state`, corrected by the target's debug offsets
// (`asyncio_debug`: its _AsyncioDebug, 0 when none); what differs or could
// not be used is said in `warnings` (StateProblem::AsyncioDebug*).
Effective effective(MemoryReader& mem, const PythonState& state, const Layout& l, const AsyncioLayout& row,
                    Addr asyncio_debug, std::vector<StateWarning>& warnings);

}  // namespace pyhang::cpython::detail
