// Object layouts of asyncio's C accelerator and of suspended coroutines,
// written by hand, one row per minor version (3.8 - 3.13).
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
//         fields (bit 0 and 1 of the word after state), dict and weakreflist
//         leave the struct (managed); TaskObj puts must_cancel and
//         log_destroy_pending bits in that same word, then
//         num_cancels_requested, then fut_waiter coro name context.
//
// Generators and coroutines (Include/genobject.h <= 3.10,
// Include/cpython/genobject.h and internal/pycore_frame.h 3.11+) and the
// value stack of a suspended frame (Include/cpython/frameobject.h <= 3.10:
// f_stacktop 3.8-3.9, f_stackdepth 3.10; _PyInterpreterFrame.stacktop
// 3.11+, an index into localsplus): offsets printed by gcc from each pyenv
// release's headers (3.8.18 ... 3.13.0) and Debian's 3.11.2 (same as 3.11.7).
//
// Every row was checked against real objects: testdata/scenarios/asyncio_tasks.py
// records each task's id(), name, state, coroutine and what it awaits, and
// gdbext/tests/test_asyncio.py compares what these rows read with that on
// every interpreter present, live and from a core.  A field a version does
// not have is -1.
#pragma once

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
  IframeIndex,  // int stacktop: index into localsplus of the _PyInterpreterFrame (3.11+)
};

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
  std::int64_t fut_log_tb = -1;      // int (<= 3.12) / bit 0 of an unsigned (3.13)
  bool log_tb_bit = false;           // fut_log_tb is bit 0 of the 32-bit word there
  std::int64_t fut_size = -1;        // sizeof(FutureObj): tp_basicsize of _asyncio.Future
  // TaskObj
  std::int64_t task_fut_waiter = -1;
  std::int64_t task_coro = -1;
  std::int64_t task_name = -1;
  std::int64_t task_size = -1;       // sizeof(TaskObj): tp_basicsize of _asyncio.Task
  // futureiterobject { PyObject_HEAD; FutureObj *future; } (every version)
  std::int64_t futureiter_future = 16;

  // Generators / coroutines
  GenFrame gen_frame = GenFrame::Pointer;
  std::int64_t gen_frame_ptr = -1;     // gi_frame (<= 3.10)
  std::int64_t gen_iframe = -1;        // gi_iframe (3.11+)
  std::int64_t gen_frame_state = -1;   // gi_frame_state (int8, 3.11+)
  // The frame state of a generator suspended in an await / yield from
  // (3.10 f_state, 3.11+ gi_frame_state): FRAME_SUSPENDED, which 3.13 splits
  // into FRAME_SUSPENDED (-2, a plain yield) and FRAME_SUSPENDED_YIELD_FROM (-1).
  std::int8_t suspended = -1;
  StackTop stack_top = StackTop::Pointer;
  std::int64_t frame_stacktop = -1;    // f_stacktop (3.8, 3.9)
  std::int64_t frame_stackdepth = -1;  // f_stackdepth (3.10)
  std::int64_t frame_state = -1;       // f_state (int8, 3.10)
  std::int64_t iframe_stacktop = -1;   // _PyInterpreterFrame.stacktop (int, 3.11+)

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
  // Modules/_collectionsmodule.c, unchanged in 3.8 - 3.13: dequeobject
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
};

inline const AsyncioLayout* asyncio_layout_for(int major, int minor) {
  for (const auto& l : kAsyncioLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

}  // namespace pyhang::cpython
