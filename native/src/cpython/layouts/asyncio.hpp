// Object layouts of asyncio's C accelerator and of suspended coroutines,
// written by hand, one row per minor version (3.8 - 3.15).
//
// FutureObj / TaskObj are private structs of Modules/_asynciomodule.c (no
// header declares them, so no probe can print their offsets): the rows
// below follow that file's FutureObj_HEAD and TaskObj of each release,
// 8-byte pointers, 4-byte enum/int, x86_64 alignment:
//   3.8   FutureObj_HEAD: loop callback0 context0 callbacks exception result
//         source_tb; state log_tb blocking (int); dict weakreflist.
//         TaskObj: fut_waiter coro name context must_cancel log_destroy_pending
//   3.9   + cancel_msg after source_tb; + _PyErr_StackItem cancelled_exc_state (32 bytes) at the end
//   3.10  + exception_tb after exception (3.10.x, as 3.11)
//   3.11, 3.12  cancelled_exc_state becomes PyObject *cancelled_exc
//   3.13  cancelled_exc moves before state; log_tb and blocking become 1-bit
//         fields (bit 0 and 1 of the word after state: byte 100), dict and weakreflist
//         leave the struct (managed); TaskObj puts must_cancel and
//         log_destroy_pending bits in that same word, then
//         num_cancels_requested, then fut_waiter coro name context.
//   3.14, 3.15  FutureObj_HEAD: loop callback0 context0 callbacks exception
//         exception_tb result source_tb cancel_msg cancelled_exc awaited_by;
//         state (int, 104); is_task, awaited_by_is_set (chars, 108, 109);
//         log_tb and blocking bits 0 and 1 of byte 110.  TaskObj: must_cancel
//         and log_destroy_pending bits 2 and 3 of that byte,
//         num_cancels_requested (112), fut_waiter coro name context, then
//         struct llist_node task_node (152): the task's link in its
//         thread's list (_PyThreadStateImpl.asyncio_tasks_head), unlinked
//         (NULL) once the task is done.  Read on Debian's 3.14.10 and
//         3.15.2 (ctypes.string_at(id(task), 176)): a pending Task's word
//         at 104 is 0x0008000100000000 (state 0, is_task 1,
//         log_destroy_pending), a failed one's 0x0009000100000002 (state 2,
//         log_tb); fut_waiter at 120, coro 128, name 136; tp_basicsize 112
//         (Future) and 168 (Task).  _asyncio's own _AsyncioDebug (section
//         .AsyncioDebug of _asyncio's object: lib-dynload/_asyncio*.so on
//         3.14, the executable on 3.15) gives the same: task size 168, name
//         136, awaited_by 96, is_task 108, coro 128, task_node 152.  Where
//         the target's _AsyncioDebug can be read, its values win over this
//         row for what it covers (AsyncioDebugMap below).
//
// Generators and coroutines (Include/genobject.h <= 3.10,
// Include/cpython/genobject.h and internal/pycore_frame.h 3.11+) and the
// value stack of a suspended frame (Include/cpython/frameobject.h <= 3.10:
// f_stacktop 3.8-3.9, f_stackdepth 3.10; _PyInterpreterFrame.stacktop
// 3.11 - 3.13, an index into localsplus; 3.14+ _PyStackRef *stackpointer,
// tagged references): offsets printed by gcc from each pyenv release's
// headers (3.8.18 ... 3.13.0) and Debian's 3.11.2 (same as 3.11.7), 3.13.5
// (trixie), 3.14.10 and 3.15.2 (unstable): gi_frame_state 67 and gi_iframe
// 72 from 3.12 on, as the _Py_DebugOffsets gen_object of 3.14+ say.
// The frame states (internal/pycore_frame.h): 3.11 - 3.12 FRAME_SUSPENDED
// -1; 3.13, 3.14 FRAME_SUSPENDED -2 (a plain yield) and
// FRAME_SUSPENDED_YIELD_FROM -1, FRAME_COMPLETED 1, FRAME_CLEARED 4; 3.15
// renumbers them: FRAME_CREATED 0, FRAME_SUSPENDED 1,
// FRAME_SUSPENDED_YIELD_FROM 2, FRAME_SUSPENDED_YIELD_FROM_LOCKED 3,
// FRAME_EXECUTING 4, FRAME_CLEARED 5 (no FRAME_COMPLETED).
// What a frame suspended in `await` / `yield from` delegates to
// (gi_yieldfrom) is the top of its value stack up to 3.14, and the item
// below the top on 3.15, which pushes a NULL (PUSH_NULL after
// GET_AWAITABLE) or an iteration index (GET_ITER) above it: read on
// Debian's 3.15.2 (stackpointer - localsplus), a coroutine in `await fut`
// holds [its locals, FutureIter, 0x1 (PyStackRef_NULL)], a generator in
// `yield from range(3)` [range_iterator, 0x1], in `yield from [1, 2]` [the
// tuple (1, 2), 0x7 (the tagged int 1)]; 3.14.10 holds [its locals,
// FutureIter] and [range_iterator]; each time the delegate is gi_yieldfrom.
//
// Every row was checked against real objects: testdata/scenarios/asyncio_tasks.py
// records each task's id(), name, state, coroutine and what it awaits, and
// gdbext/tests/test_asyncio.py compares what these rows read with that on
// every interpreter present, live and from a core.  A field a version does
// not have is -1.
#pragma once

#include <climits>
#include <cstdint>

namespace pyhang::cpython {

// How a suspended generator's frame is found and how to tell it is suspended.
enum class GenFrame : std::int8_t {
  Pointer,   // gi_frame: PyFrameObject* (NULL when finished) (<= 3.10)
  Embedded,  // gi_iframe: the _PyInterpreterFrame inside the generator (3.11+)
};

// Where the top of a suspended frame's value stack is.
enum class StackTop : std::int8_t {
  Pointer,      // PyObject **f_stacktop in the frame object (3.8, 3.9), NULL while running
  FrameDepth,   // int f_stackdepth: items above f_valuestack (3.10)
  IframeIndex,  // int stacktop: index into localsplus of the _PyInterpreterFrame (3.11 - 3.13)
  IframePointer,  // _PyStackRef *stackpointer of the _PyInterpreterFrame (3.14+, Layout::iframe_stackpointer)
};

// No such frame state in this version.
inline constexpr std::int8_t kNoFrameState = INT8_MIN;

// Where each value sits in _asyncio's Py_AsyncioModuleDebugOffsets (3.14+;
// the same struct in 3.14 and 3.15): three groups, each starting with the
// size of the struct it describes.  -1: not there.
struct AsyncioDebugMap {
  std::int64_t size = -1;  // sizeof(Py_AsyncioModuleDebugOffsets)
  std::int64_t task_size = -1;  // asyncio_task_object.size: sizeof(TaskObj)
  std::int64_t task_name = -1;
  std::int64_t task_awaited_by = -1;
  std::int64_t task_is_task = -1;
  std::int64_t task_awaited_by_is_set = -1;
  std::int64_t task_coro = -1;
  std::int64_t task_node = -1;
  std::int64_t interp_size = -1;  // asyncio_interpreter_state.size: sizeof(PyInterpreterState)
  std::int64_t interp_tasks_head = -1;
  std::int64_t tstate_size = -1;  // asyncio_thread_state.size: sizeof(_PyThreadStateImpl)
  std::int64_t tstate_running_loop = -1;
  std::int64_t tstate_running_task = -1;
  std::int64_t tstate_tasks_head = -1;
};

// Modules/_asynciomodule.c of 3.14 and 3.15; the .AsyncioDebug sections of
// Debian's 3.14.10 and 3.15.2 are 0x68 bytes, 13 words in this order.
inline constexpr AsyncioDebugMap kAsyncioDebug314{
    .size = 104, .task_size = 0, .task_name = 8, .task_awaited_by = 16, .task_is_task = 24,
    .task_awaited_by_is_set = 32, .task_coro = 40, .task_node = 48, .interp_size = 56, .interp_tasks_head = 64,
    .tstate_size = 72, .tstate_running_loop = 80, .tstate_running_task = 88, .tstate_tasks_head = 96};

struct AsyncioLayout {
  int major = 3;
  int minor = 0;
  const char* source = "";

  // FutureObj (and the FutureObj_HEAD of TaskObj)
  std::int64_t fut_loop = -1;
  std::int64_t fut_callback0 = -1;
  std::int64_t fut_callbacks = -1;   // list of (callback, context) tuples, or NULL
  std::int64_t fut_exception = -1;
  std::int64_t fut_result = -1;
  std::int64_t fut_state = -1;       // fut_state enum (int): 0 PENDING, 1 CANCELLED, 2 FINISHED
  std::int64_t fut_log_tb = -1;      // int (<= 3.12) / the byte holding the 1-bit field (3.13+)
  bool log_tb_bit = false;           // fut_log_tb is bit 0 of the byte there (3.13+ bit-fields)
  std::int64_t fut_size = -1;        // sizeof(FutureObj): tp_basicsize of _asyncio.Future
  // TaskObj
  std::int64_t task_fut_waiter = -1;
  std::int64_t task_coro = -1;
  std::int64_t task_name = -1;
  std::int64_t task_size = -1;       // sizeof(TaskObj): tp_basicsize of _asyncio.Task
  std::int64_t task_is_task = -1;    // char fut_is_task: 1 in a task (3.14+)
  std::int64_t task_node = -1;       // struct llist_node task_node (3.14+)
  std::int64_t llist_next = 0;       // llist_node.next (internal/pycore_llist.h)
  // _asyncio's own debug offsets (3.14+): where the reader finds the
  // target's values for the fields above and the task list heads.
  const AsyncioDebugMap* debug = nullptr;
  // 3.14+: tasks that are no asyncio.Task (a third party's, registered
  // through asyncio.tasks._register_task) are kept in _asyncio's module
  // state: PyModuleObject.md_state (internal/pycore_moduleobject.h: 32 on
  // 3.14, 24 on 3.15, which drops md_def), then the private asyncio_state
  // of _asynciomodule.c: FutureIterType, TaskStepMethWrapper_Type,
  // FutureType, TaskType (24), asyncio_mod, context_kwname,
  // non_asyncio_tasks (48, a WeakSet), non_asyncio_eager_tasks (56, a set).
  // Read on Debian's 3.14.10 and 3.15.2: those types and containers at
  // those offsets, and a task-like object given to _register_task in the
  // WeakSet.  The TaskType slot is checked before the sets are read.
  std::int64_t module_state = -1;
  std::int64_t state_task_type = -1;
  std::int64_t state_non_asyncio_tasks = -1;
  std::int64_t state_non_asyncio_eager_tasks = -1;
  // futureiterobject { PyObject_HEAD; FutureObj *future; } (every version)
  std::int64_t futureiter_future = 16;

  // Generators / coroutines
  GenFrame gen_frame = GenFrame::Pointer;
  std::int64_t gen_frame_ptr = -1;     // gi_frame (<= 3.10)
  std::int64_t gen_iframe = -1;        // gi_iframe (3.11+)
  std::int64_t gen_frame_state = -1;   // gi_frame_state (int8, 3.11+)
  // The frame state of a generator suspended in an await / yield from
  // (3.10 f_state, 3.11+ gi_frame_state): FRAME_SUSPENDED, which 3.13 splits
  // into FRAME_SUSPENDED (-2, a plain yield) and FRAME_SUSPENDED_YIELD_FROM
  // (-1); 3.15's FRAME_SUSPENDED_YIELD_FROM is 2, and 3 (…_LOCKED) is the
  // same frame while another thread looks at what it awaits.
  std::int8_t suspended = -1;
  std::int8_t suspended_locked = kNoFrameState;
  // gi_frame_state from which a generator has no frame (3.11 - 3.14
  // FRAME_COMPLETED 1 and FRAME_CLEARED 4; 3.15 FRAME_CLEARED 5).
  std::int8_t frame_gone = 1;
  // Stack items above what a suspended frame delegates to: 1 up to 3.14
  // (the top), 2 on 3.15 (a NULL or an index is pushed above it).
  std::int64_t yield_from_depth = 1;
  StackTop stack_top = StackTop::Pointer;
  std::int64_t frame_stacktop = -1;    // f_stacktop (3.8, 3.9)
  std::int64_t frame_stackdepth = -1;  // f_stackdepth (3.10)
  std::int64_t frame_state = -1;       // f_state (int8, 3.10)
  std::int64_t iframe_stacktop = -1;   // _PyInterpreterFrame.stacktop (int, 3.11 - 3.13)

  // PyFunctionObject.func_closure (a tuple of cells)
  std::int64_t func_closure = -1;
  // PyWeakReference.wr_object
  std::int64_t weakref_object = 16;

  // __slots__ attributes (asyncio's Handle and TimerHandle keep theirs so):
  // PyTypeObject.tp_dict and tp_mro (Include/cpython/object.h), the
  // PyMemberDef* of a member_descriptor (PyMemberDescrObject.d_member after
  // PyDescr_COMMON, Include/descrobject.h) and PyMemberDef.offset
  // (structmember.h / descrobject.h).  The same in 3.8 - 3.13 (gcc, each
  // pyenv release's headers).
  std::int64_t type_dict = 264;
  std::int64_t type_mro = 344;
  std::int64_t member_descr_member = 40;
  std::int64_t memberdef_offset = 16;

  // collections.deque (loop._ready), private structs of
  // Modules/_collectionsmodule.c, unchanged in 3.8 - 3.15: dequeobject
  // { PyObject_VAR_HEAD; block *leftblock; block *rightblock; Py_ssize_t
  // leftindex; ... } and block { block *leftlink; PyObject *data[BLOCKLEN
  // = 64]; block *rightlink; }.
  std::int64_t deque_leftblock = 24;
  std::int64_t deque_leftindex = 40;
  std::int64_t block_data = 8;
  std::int64_t block_len = 64;
  std::int64_t block_rightlink = 8 + 64 * 8;
};

inline constexpr AsyncioLayout kAsyncioLayouts[] = {
    {.minor = 8, .source = "3.8 _asynciomodule.c FutureObj_HEAD/TaskObj; genobject.h; frameobject.h",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 56,
     .fut_state = 72, .fut_log_tb = 76, .fut_size = 104,
     .task_fut_waiter = 104, .task_coro = 112, .task_name = 120, .task_size = 144,
     .gen_frame = GenFrame::Pointer, .gen_frame_ptr = 16,
     .stack_top = StackTop::Pointer, .frame_stacktop = 72, .func_closure = 48},
    {.minor = 9, .source = "3.9 _asynciomodule.c (+ fut_cancel_msg, _PyErr_StackItem fut_cancelled_exc_state)",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 56,
     .fut_state = 80, .fut_log_tb = 84, .fut_size = 144,
     .task_fut_waiter = 144, .task_coro = 152, .task_name = 160, .task_size = 184,
     .gen_frame = GenFrame::Pointer, .gen_frame_ptr = 16,
     .stack_top = StackTop::Pointer, .frame_stacktop = 72, .func_closure = 48},
    {.minor = 10, .source = "3.10 _asynciomodule.c (+ fut_exception_tb); frameobject.h f_stackdepth/f_state",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 64,
     .fut_state = 88, .fut_log_tb = 92, .fut_size = 152,
     .task_fut_waiter = 152, .task_coro = 160, .task_name = 168, .task_size = 192,
     .gen_frame = GenFrame::Pointer, .gen_frame_ptr = 16, .suspended = -1,
     .stack_top = StackTop::FrameDepth, .frame_stackdepth = 80, .frame_state = 108, .func_closure = 72},
    {.minor = 11, .source = "3.11 _asynciomodule.c (PyObject *fut_cancelled_exc); cpython/genobject.h; pycore_frame.h",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 64,
     .fut_state = 88, .fut_log_tb = 92, .fut_size = 128,
     .task_fut_waiter = 128, .task_coro = 136, .task_name = 144, .task_size = 176,
     .gen_frame = GenFrame::Embedded, .gen_iframe = 80, .gen_frame_state = 75, .suspended = -1,
     .stack_top = StackTop::IframeIndex, .iframe_stacktop = 64, .func_closure = 72},
    {.minor = 12, .source = "3.12 _asynciomodule.c; cpython/genobject.h (no gi_code); pycore_frame.h",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 64,
     .fut_state = 88, .fut_log_tb = 92, .fut_size = 128,
     .task_fut_waiter = 128, .task_coro = 136, .task_name = 144, .task_size = 176,
     .gen_frame = GenFrame::Embedded, .gen_iframe = 72, .gen_frame_state = 67, .suspended = -1,
     .stack_top = StackTop::IframeIndex, .iframe_stacktop = 64, .func_closure = 72},
    {.minor = 13, .source = "3.13 _asynciomodule.c (bit-fields, managed dict); pycore_frame.h FRAME_SUSPENDED_YIELD_FROM",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 64,
     .fut_state = 96, .fut_log_tb = 100, .log_tb_bit = true, .fut_size = 104,
     .task_fut_waiter = 112, .task_coro = 120, .task_name = 128, .task_size = 144,
     .gen_frame = GenFrame::Embedded, .gen_iframe = 72, .gen_frame_state = 67, .suspended = -1,
     .stack_top = StackTop::IframeIndex, .iframe_stacktop = 64, .func_closure = 72},
    {.minor = 14, .source = "3.14 _asynciomodule.c (awaited_by, is_task, task_node; _AsyncioDebug); pycore_frame.h "
                            "stackpointer",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 64,
     .fut_state = 104, .fut_log_tb = 110, .log_tb_bit = true, .fut_size = 112,
     .task_fut_waiter = 120, .task_coro = 128, .task_name = 136, .task_size = 168, .task_is_task = 108,
     .task_node = 152, .debug = &kAsyncioDebug314,
     .module_state = 32, .state_task_type = 24, .state_non_asyncio_tasks = 48, .state_non_asyncio_eager_tasks = 56,
     .gen_frame = GenFrame::Embedded, .gen_iframe = 72, .gen_frame_state = 67, .suspended = -1,
     .stack_top = StackTop::IframePointer, .func_closure = 72},
    {.minor = 15, .source = "3.15 _asynciomodule.c (as 3.14); pycore_frame.h FRAME_SUSPENDED_YIELD_FROM 2, 3",
     .fut_loop = 16, .fut_callback0 = 24, .fut_callbacks = 40, .fut_exception = 48, .fut_result = 64,
     .fut_state = 104, .fut_log_tb = 110, .log_tb_bit = true, .fut_size = 112,
     .task_fut_waiter = 120, .task_coro = 128, .task_name = 136, .task_size = 168, .task_is_task = 108,
     .task_node = 152, .debug = &kAsyncioDebug314,
     .module_state = 24, .state_task_type = 24, .state_non_asyncio_tasks = 48, .state_non_asyncio_eager_tasks = 56,
     .gen_frame = GenFrame::Embedded, .gen_iframe = 72, .gen_frame_state = 67, .suspended = 2,
     .suspended_locked = 3, .frame_gone = 5, .yield_from_depth = 2,
     .stack_top = StackTop::IframePointer, .func_closure = 72},
};

inline const AsyncioLayout* asyncio_layout_for(int major, int minor) {
  for (const auto& l : kAsyncioLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

}  // namespace pyhang::cpython
