// CPython struct layouts, one table per minor version, as data.
//
// The tables are generated from each version's own headers by
// native/tools/gen_cpython_layouts.py into cpython/layouts/generated.cpp.
// Walkers read every field through these offsets; what differs between
// versions in *shape* (which frame struct, which line-table format, where
// the GIL lives) is an enum here, never a version comparison in a walker.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pyhang::cpython {

// What the frame chain is made of.
enum class FrameModel : std::int8_t {
  FrameObject,       // PyFrameObject linked by f_back (<= 3.10)
  InterpreterFrame,  // _PyInterpreterFrame linked by previous (3.11+)
};

// How a code object maps instruction offsets to lines.
enum class LineTableFormat : std::int8_t {
  Lnotab,         // co_lnotab: (byte delta, line delta) pairs (<= 3.9)
  LineTable310,   // co_linetable of 3.10: (byte delta, signed line delta)
  LocationTable,  // co_linetable of 3.11+: varint-coded location entries
};

// Where the GIL state is.
enum class GilModel : std::int8_t {
  Static,              // static variables in ceval.c, not reachable by offset (3.6)
  RuntimeEmbedded,     // _PyRuntime.ceval.gil (3.7 - 3.11)
  InterpreterPointer,  // interp->ceval.gil, pointing at some interp->_gil (3.12+)
};

// How a thread state reaches its innermost frame.
enum class TopFrame : std::int8_t {
  ThreadStateFrameObject,  // tstate->frame
  CFrame,                  // tstate->cframe->current_frame
  ThreadState,             // tstate->current_frame
};

struct Layout {
  int major = 3;
  int minor = 0;
  const char* generated_from = "";  // exact patch version the table came from
  int patch = 0;                    // its patch level
  const char* also_probed = "";     // other patch releases whose headers gave the same table ("3.11.2")
  FrameModel frame_model = FrameModel::FrameObject;
  LineTableFormat linetable = LineTableFormat::Lnotab;
  GilModel gil_model = GilModel::Static;
  TopFrame top_frame = TopFrame::ThreadStateFrameObject;
  int lasti_unit = 1;  // bytes per unit of PyFrameObject.f_lasti
  bool has_debug_offsets = false;  // _PyRuntime starts with _Py_DebugOffsets
  // Not generated: the table of an older minor standing in for a newer
  // release it has no table for (layout_for_release); only usable when the
  // target's _Py_DebugOffsets can be read, and they override what they cover.
  bool stand_in = false;

  // Offsets (bytes from the start of the struct), sizes and constants; -1
  // when the field does not exist in this version.  The generator checks
  // that this block lists the fields of native/tools/cpython_layout_fields.py
  // in that table's order.
  // BEGIN GENERATED FIELDS
  std::int64_t object_ob_type = -1;  // PyObject.ob_type
  std::int64_t var_ob_size = -1;  // PyVarObject.ob_size
  std::int64_t type_tp_name = -1;  // PyTypeObject.tp_name
  std::int64_t type_tp_flags = -1;  // PyTypeObject.tp_flags
  std::int64_t tpflags_bytes_subclass = -1;  // Py_TPFLAGS_BYTES_SUBCLASS
  std::int64_t tpflags_unicode_subclass = -1;  // Py_TPFLAGS_UNICODE_SUBCLASS
  std::int64_t bytes_ob_sval = -1;  // PyBytesObject.ob_sval
  std::int64_t unicode_length = -1;  // PyASCIIObject.length
  std::int64_t unicode_state = -1;  // PyASCIIObject.state (32-bit word of bit-fields)
  std::int64_t unicode_kind_mask = -1;  // state.kind
  std::int64_t unicode_compact_mask = -1;  // state.compact
  std::int64_t unicode_ascii_mask = -1;  // state.ascii
  std::int64_t unicode_ready_mask = -1;  // state.ready (gone in 3.12)
  std::int64_t unicode_ascii_data = -1;  // compact ASCII data follows PyASCIIObject
  std::int64_t unicode_compact_data = -1;  // compact non-ASCII data follows PyCompactUnicodeObject
  std::int64_t unicode_legacy_data = -1;  // PyUnicodeObject.data.any (non-compact strings)
  std::int64_t code_size = -1;  // sizeof(PyCodeObject)
  std::int64_t code_filename = -1;  // co_filename
  std::int64_t code_name = -1;  // co_name
  std::int64_t code_qualname = -1;  // co_qualname (3.11+)
  std::int64_t code_firstlineno = -1;  // co_firstlineno (int)
  std::int64_t code_lnotab = -1;  // co_lnotab bytes (<= 3.9)
  std::int64_t code_linetable = -1;  // co_linetable bytes (3.10+)
  std::int64_t code_code = -1;  // co_code bytes object (<= 3.10)
  std::int64_t code_code_adaptive = -1;  // inline co_code_adaptive (3.11+)
  std::int64_t code_firsttraceable = -1;  // _co_firsttraceable (int, 3.11+)
  std::int64_t frame_size = -1;  // sizeof(PyFrameObject)
  std::int64_t frame_back = -1;  // f_back
  std::int64_t frame_code = -1;  // f_code
  std::int64_t frame_lasti = -1;  // f_lasti (int)
  std::int64_t frame_lineno = -1;  // f_lineno (int)
  std::int64_t frame_trace = -1;  // f_trace
  std::int64_t iframe_size = -1;  // sizeof(_PyInterpreterFrame)
  std::int64_t iframe_code = -1;  // f_code / f_executable
  std::int64_t iframe_executable = -1;  // f_executable (3.13+): the code slot may hold another object than code
  std::int64_t iframe_previous = -1;  // previous
  std::int64_t iframe_instr = -1;  // instr_ptr (3.13+) / prev_instr
  std::int64_t iframe_owner = -1;  // owner (char)
  std::int64_t iframe_is_entry = -1;  // is_entry (bool, 3.11 only)
  std::int64_t owner_generator = -1;  // FRAME_OWNED_BY_GENERATOR
  std::int64_t owner_cstack = -1;  // FRAME_OWNED_BY_CSTACK (3.12+)
  std::int64_t cframe_current_frame = -1;  // _PyCFrame.current_frame
  std::int64_t tstate_size = -1;  // sizeof(PyThreadState)
  std::int64_t tstate_prev = -1;  // prev
  std::int64_t tstate_next = -1;  // next
  std::int64_t tstate_interp = -1;  // interp
  std::int64_t tstate_frame = -1;  // frame (PyFrameObject*, <= 3.10)
  std::int64_t tstate_cframe = -1;  // cframe (_PyCFrame*, 3.11-3.12)
  std::int64_t tstate_current_frame = -1;  // current_frame (3.13+)
  std::int64_t tstate_thread_id = -1;  // thread_id (pthread_t)
  std::int64_t tstate_native_thread_id = -1;  // native_thread_id (3.8+)
  std::int64_t tstate_state = -1;  // state (int, 3.13+)
  std::int64_t thread_attached = -1;  // _Py_THREAD_ATTACHED
  std::int64_t interp_size = -1;  // sizeof(PyInterpreterState)
  std::int64_t interp_next = -1;  // next
  std::int64_t interp_id = -1;  // id (int64_t, 3.7+)
  std::int64_t interp_threads_head = -1;  // threads.head / tstate_head
  std::int64_t interp_ceval_gil = -1;  // ceval.gil (pointer, 3.12+)
  std::int64_t interp_own_gil = -1;  // _gil (3.12+)
  std::int64_t runtime_size = -1;  // sizeof(_PyRuntimeState)
  std::int64_t runtime_initialized = -1;  // initialized (int)
  std::int64_t runtime_finalizing = -1;  // _finalizing / finalizing (PyThreadState*)
  std::int64_t runtime_interpreters_head = -1;  // interpreters.head
  std::int64_t runtime_interpreters_main = -1;  // interpreters.main
  std::int64_t runtime_tstate_current = -1;  // gilstate.tstate_current (3.7-3.11)
  std::int64_t runtime_ceval_gil = -1;  // ceval.gil (embedded, 3.7-3.11)
  std::int64_t gil_size = -1;  // sizeof(struct _gil_runtime_state)
  std::int64_t gil_last_holder = -1;  // last_holder
  std::int64_t gil_locked = -1;  // locked (int)
  std::int64_t gil_switch_number = -1;  // switch_number (unsigned long)
  std::int64_t gil_cond = -1;  // cond
  std::int64_t gil_mutex = -1;  // mutex
  std::int64_t dbg_size = -1;  // sizeof(_Py_DebugOffsets)
  std::int64_t dbg_version = -1;  // version
  std::int64_t dbg_runtime_size = -1;  // runtime_state.size
  std::int64_t dbg_runtime_finalizing = -1;  // runtime_state.finalizing
  std::int64_t dbg_runtime_interpreters_head = -1;  // runtime_state.interpreters_head
  std::int64_t dbg_interp_size = -1;  // interpreter_state.size
  std::int64_t dbg_interp_id = -1;  // interpreter_state.id
  std::int64_t dbg_interp_next = -1;  // interpreter_state.next
  std::int64_t dbg_interp_threads_head = -1;  // interpreter_state.threads_head
  std::int64_t dbg_interp_ceval_gil = -1;  // interpreter_state.ceval_gil
  std::int64_t dbg_interp_gil_runtime_state = -1;  // interpreter_state.gil_runtime_state
  std::int64_t dbg_interp_gil_locked = -1;  // interpreter_state.gil_runtime_state_locked
  std::int64_t dbg_interp_gil_holder = -1;  // interpreter_state.gil_runtime_state_holder
  std::int64_t dbg_tstate_size = -1;  // thread_state.size
  std::int64_t dbg_tstate_prev = -1;  // thread_state.prev
  std::int64_t dbg_tstate_next = -1;  // thread_state.next
  std::int64_t dbg_tstate_interp = -1;  // thread_state.interp
  std::int64_t dbg_tstate_current_frame = -1;  // thread_state.current_frame
  std::int64_t dbg_tstate_thread_id = -1;  // thread_state.thread_id
  std::int64_t dbg_tstate_native_thread_id = -1;  // thread_state.native_thread_id
  std::int64_t dbg_tstate_status = -1;  // thread_state.status
  std::int64_t dbg_iframe_size = -1;  // interpreter_frame.size
  std::int64_t dbg_iframe_previous = -1;  // interpreter_frame.previous
  std::int64_t dbg_iframe_executable = -1;  // interpreter_frame.executable
  std::int64_t dbg_iframe_instr_ptr = -1;  // interpreter_frame.instr_ptr
  std::int64_t dbg_iframe_owner = -1;  // interpreter_frame.owner
  std::int64_t dbg_code_size = -1;  // code_object.size
  std::int64_t dbg_code_filename = -1;  // code_object.filename
  std::int64_t dbg_code_name = -1;  // code_object.name
  std::int64_t dbg_code_qualname = -1;  // code_object.qualname
  std::int64_t dbg_code_linetable = -1;  // code_object.linetable
  std::int64_t dbg_code_firstlineno = -1;  // code_object.firstlineno
  std::int64_t dbg_code_code_adaptive = -1;  // code_object.co_code_adaptive
  std::int64_t dbg_object_ob_type = -1;  // pyobject.ob_type
  std::int64_t dbg_type_tp_name = -1;  // type_object.tp_name
  std::int64_t dbg_type_tp_flags = -1;  // type_object.tp_flags
  std::int64_t dbg_bytes_ob_size = -1;  // bytes_object.ob_size
  std::int64_t dbg_bytes_ob_sval = -1;  // bytes_object.ob_sval
  std::int64_t dbg_unicode_state = -1;  // unicode_object.state
  std::int64_t dbg_unicode_length = -1;  // unicode_object.length
  std::int64_t dbg_unicode_asciiobject_size = -1;  // unicode_object.asciiobject_size
  std::int64_t dbg_free_threaded = -1;  // free_threaded (3.14+)
  std::int64_t dbg_interp_threads_main = -1;  // interpreter_state.threads_main (3.14+)
  std::int64_t dbg_interp_gc = -1;  // interpreter_state.gc (3.14+)
  std::int64_t dbg_interp_imports_modules = -1;  // interpreter_state.imports_modules (3.14+)
  std::int64_t dbg_iframe_localsplus = -1;  // interpreter_frame.localsplus (3.14+)
  std::int64_t dbg_iframe_stackpointer = -1;  // interpreter_frame.stackpointer (3.14+)
  std::int64_t dbg_code_argcount = -1;  // code_object.argcount (3.14+)
  std::int64_t dbg_code_localsplusnames = -1;  // code_object.localsplusnames (3.14+)
  std::int64_t dbg_code_localspluskinds = -1;  // code_object.localspluskinds (3.14+)
  std::int64_t dbg_type_tp_basicsize = -1;  // type_object.tp_basicsize (3.15+)
  std::int64_t dbg_type_tp_dictoffset = -1;  // type_object.tp_dictoffset (3.15+)
  std::int64_t dbg_heaptype_size = -1;  // heap_type_object.size (3.15+)
  std::int64_t dbg_heaptype_cached_keys = -1;  // heap_type_object.ht_cached_keys (3.15+)
  std::int64_t dbg_tuple_ob_item = -1;  // tuple_object.ob_item (3.14+)
  std::int64_t dbg_list_ob_item = -1;  // list_object.ob_item (3.14+)
  std::int64_t dbg_set_size = -1;  // set_object.size (3.14+)
  std::int64_t dbg_set_used = -1;  // set_object.used (3.14+)
  std::int64_t dbg_set_table = -1;  // set_object.table (3.14+)
  std::int64_t dbg_set_mask = -1;  // set_object.mask (3.14+)
  std::int64_t dbg_dict_size = -1;  // dict_object.size (3.14+)
  std::int64_t dbg_dict_ma_keys = -1;  // dict_object.ma_keys (3.14+)
  std::int64_t dbg_dict_ma_values = -1;  // dict_object.ma_values (3.14+)
  std::int64_t dbg_float_size = -1;  // float_object.size (3.14+)
  std::int64_t dbg_float_ob_fval = -1;  // float_object.ob_fval (3.14+)
  std::int64_t dbg_long_size = -1;  // long_object.size (3.14+)
  std::int64_t dbg_long_lv_tag = -1;  // long_object.lv_tag (3.14+)
  std::int64_t dbg_long_ob_digit = -1;  // long_object.ob_digit (3.14+)
  std::int64_t dbg_unicode_compact_size = -1;  // unicode_object.compactunicodeobject_size (3.15+)
  std::int64_t dbg_gc_size = -1;  // gc.size (3.14+)
  std::int64_t dbg_gc_collecting = -1;  // gc.collecting (3.14+)
  std::int64_t dbg_gen_size = -1;  // gen_object.size (3.14+)
  std::int64_t dbg_gen_iframe = -1;  // gen_object.gi_iframe (3.14+)
  std::int64_t dbg_gen_frame_state = -1;  // gen_object.gi_frame_state (3.14+)
  std::int64_t dbg_llist_next = -1;  // llist_node.next (3.14+)
  std::int64_t code_nlocalsplus = -1;  // co_nlocalsplus (int, 3.11+)
  std::int64_t code_nlocals = -1;  // co_nlocals (int)
  std::int64_t code_stacksize = -1;  // co_stacksize (int)
  std::int64_t frame_valuestack = -1;  // f_valuestack (PyObject **, <= 3.10)
  std::int64_t frame_localsplus = -1;  // f_localsplus (<= 3.10)
  std::int64_t iframe_localsplus = -1;  // localsplus (3.11+)
  std::int64_t cfunction_self = -1;  // PyCFunctionObject.m_self
  std::int64_t method_self = -1;  // PyMethodObject.im_self
  std::int64_t type_basicsize = -1;  // PyTypeObject.tp_basicsize
  std::int64_t type_dictoffset = -1;  // PyTypeObject.tp_dictoffset
  std::int64_t heaptype_cached_keys = -1;  // PyHeapTypeObject.ht_cached_keys
  std::int64_t tpflags_managed_dict = -1;  // Py_TPFLAGS_MANAGED_DICT (3.11+)
  std::int64_t tpflags_inline_values = -1;  // Py_TPFLAGS_INLINE_VALUES (3.13+)
  std::int64_t dict_ma_used = -1;  // PyDictObject.ma_used
  std::int64_t dict_ma_keys = -1;  // PyDictObject.ma_keys
  std::int64_t dict_ma_values = -1;  // PyDictObject.ma_values
  std::int64_t dictkeys_log2_size = -1;  // PyDictKeysObject.dk_log2_size (uint8, 3.11+)
  std::int64_t dictkeys_log2_index_bytes = -1;  // dk_log2_index_bytes (uint8, 3.11+)
  std::int64_t dictkeys_kind = -1;  // dk_kind (uint8, 3.11+)
  std::int64_t dictkeys_nentries = -1;  // dk_nentries (3.11+ in headers)
  std::int64_t dictkeys_indices = -1;  // dk_indices (3.11+ in headers)
  std::int64_t dictkeys_kind_general = -1;  // DICT_KEYS_GENERAL (3.11+)
  std::int64_t dictentry_size = -1;  // sizeof(PyDictKeyEntry) (3.11+ in headers)
  std::int64_t dictentry_key = -1;  // PyDictKeyEntry.me_key
  std::int64_t dictentry_value = -1;  // PyDictKeyEntry.me_value
  std::int64_t dictuentry_size = -1;  // sizeof(PyDictUnicodeEntry) (3.11+)
  std::int64_t dictuentry_key = -1;  // PyDictUnicodeEntry.me_key
  std::int64_t dictuentry_value = -1;  // PyDictUnicodeEntry.me_value
  std::int64_t dictvalues_values = -1;  // PyDictValues.values (3.11+)
  std::int64_t dictvalues_valid = -1;  // PyDictValues.valid (uint8, 3.13+)
  std::int64_t dict_or_values_size = -1;  // sizeof(PyDictOrValues) (3.12 only)
  std::int64_t interp_modules = -1;  // PyInterpreterState.modules / imports.modules (sys.modules)
  std::int64_t tpflags_long_subclass = -1;  // Py_TPFLAGS_LONG_SUBCLASS
  std::int64_t tpflags_list_subclass = -1;  // Py_TPFLAGS_LIST_SUBCLASS
  std::int64_t tpflags_tuple_subclass = -1;  // Py_TPFLAGS_TUPLE_SUBCLASS
  std::int64_t tpflags_dict_subclass = -1;  // Py_TPFLAGS_DICT_SUBCLASS
  std::int64_t long_digits = -1;  // PyLongObject ob_digit / long_value.ob_digit
  std::int64_t long_lv_tag = -1;  // PyLongObject long_value.lv_tag (3.12+; before: sign and size in ob_size)
  std::int64_t long_shift = -1;  // PyLong_SHIFT (bits per digit)
  std::int64_t long_non_size_bits = -1;  // _PyLong_NON_SIZE_BITS (3.12+)
  std::int64_t long_sign_mask = -1;  // _PyLong_SIGN_MASK (3.12+)
  std::int64_t float_ob_fval = -1;  // PyFloatObject.ob_fval
  std::int64_t list_ob_item = -1;  // PyListObject.ob_item
  std::int64_t list_allocated = -1;  // PyListObject.allocated
  std::int64_t tuple_ob_item = -1;  // PyTupleObject.ob_item
  std::int64_t set_fill = -1;  // PySetObject.fill
  std::int64_t set_used = -1;  // PySetObject.used
  std::int64_t set_mask = -1;  // PySetObject.mask
  std::int64_t set_table = -1;  // PySetObject.table
  std::int64_t setentry_size = -1;  // sizeof(setentry)
  std::int64_t setentry_key = -1;  // setentry.key
  std::int64_t code_argcount = -1;  // co_argcount (int)
  std::int64_t code_posonlyargcount = -1;  // co_posonlyargcount (int, 3.8+)
  std::int64_t code_kwonlyargcount = -1;  // co_kwonlyargcount (int)
  std::int64_t code_flags = -1;  // co_flags (int)
  std::int64_t co_varargs = -1;  // CO_VARARGS
  std::int64_t co_varkeywords = -1;  // CO_VARKEYWORDS
  std::int64_t code_varnames = -1;  // co_varnames tuple (<= 3.10)
  std::int64_t code_cellvars = -1;  // co_cellvars tuple (<= 3.10)
  std::int64_t code_freevars = -1;  // co_freevars tuple (<= 3.10)
  std::int64_t code_localsplusnames = -1;  // co_localsplusnames tuple (3.11+)
  std::int64_t code_localspluskinds = -1;  // co_localspluskinds bytes (3.11+)
  std::int64_t co_fast_local = -1;  // CO_FAST_LOCAL (3.11+)
  std::int64_t co_fast_cell = -1;  // CO_FAST_CELL (3.11+)
  std::int64_t co_fast_free = -1;  // CO_FAST_FREE (3.11+)
  std::int64_t co_fast_hidden = -1;  // CO_FAST_HIDDEN (3.12+: an inlined comprehension's variable)
  std::int64_t frame_f_locals = -1;  // PyFrameObject.f_locals (<= 3.10)
  std::int64_t frame_f_globals = -1;  // PyFrameObject.f_globals (<= 3.10)
  std::int64_t frame_f_builtins = -1;  // PyFrameObject.f_builtins (<= 3.10)
  std::int64_t iframe_f_locals = -1;  // _PyInterpreterFrame.f_locals (3.11+)
  std::int64_t iframe_f_globals = -1;  // _PyInterpreterFrame.f_globals (3.11+)
  std::int64_t iframe_f_builtins = -1;  // _PyInterpreterFrame.f_builtins (3.11+)
  std::int64_t func_qualname = -1;  // PyFunctionObject.func_qualname
  std::int64_t cfunction_ml = -1;  // PyCFunctionObject.m_ml (PyMethodDef *)
  std::int64_t methoddef_name = -1;  // PyMethodDef.ml_name (const char *)
  std::int64_t iframe_stackpointer = -1;  // _PyInterpreterFrame.stackpointer (_PyStackRef *, 3.14+)
  std::int64_t stackref_tag_bits = -1;  // Py_TAG_BITS: low bits of a _PyStackRef that are not the pointer (3.14+)
  std::int64_t interp_gc_collecting = -1;  // PyInterpreterState.gc.collecting (int, 3.12+) / _PyRuntime.gc.collecting (<= 3.11)
  std::int64_t runtime_gc_collecting = -1;  // _PyRuntimeState.gc.collecting (int, 3.7 - 3.8)
  std::int64_t tstateimpl_asyncio_running_loop = -1;  // _PyThreadStateImpl.asyncio_running_loop (3.14+)
  std::int64_t tstateimpl_asyncio_running_task = -1;  // _PyThreadStateImpl.asyncio_running_task (3.14+)
  std::int64_t tstateimpl_asyncio_tasks_head = -1;  // _PyThreadStateImpl.asyncio_tasks_head (struct llist_node, 3.14+)
  std::int64_t interp_asyncio_tasks_head = -1;  // PyInterpreterState.asyncio_tasks_head (tasks of exited threads, 3.14+)
  std::int64_t tpflags_heaptype = -1;  // Py_TPFLAGS_HEAPTYPE
  std::int64_t tpflags_base_exc_subclass = -1;  // Py_TPFLAGS_BASE_EXC_SUBCLASS
  std::int64_t tpflags_type_subclass = -1;  // Py_TPFLAGS_TYPE_SUBCLASS
  std::int64_t exception_args = -1;  // PyBaseExceptionObject.args
  std::int64_t type_tp_base = -1;  // PyTypeObject.tp_base
  std::int64_t type_tp_members = -1;  // PyTypeObject.tp_members (PyMemberDef *)
  std::int64_t memberdef_size = -1;  // sizeof(PyMemberDef)
  std::int64_t memberdef_name = -1;  // PyMemberDef.name (const char *)
  std::int64_t memberdef_type = -1;  // PyMemberDef.type (int)
  std::int64_t memberdef_offset = -1;  // PyMemberDef.offset (Py_ssize_t)
  std::int64_t t_object_ex = -1;  // Py_T_OBJECT_EX / T_OBJECT_EX (a __slots__ member)
  std::int64_t object_size = -1;  // sizeof(PyObject): a method-wrapper's descriptor follows its header
  std::int64_t cfunction_module = -1;  // PyCFunctionObject.m_module (the module's name, for module functions)
  std::int64_t descr_type = -1;  // PyDescrObject.d_type
  std::int64_t descr_name = -1;  // PyDescrObject.d_name
  std::int64_t code_names = -1;  // co_names tuple
  std::int64_t code_exceptiontable = -1;  // co_exceptiontable bytes (3.11+)
  std::int64_t op_extended_arg = -1;  // EXTENDED_ARG
  std::int64_t op_call = -1;  // CALL (3.11+)
  std::int64_t op_call_kw = -1;  // CALL_KW (3.13+)
  std::int64_t op_call_function_ex = -1;  // CALL_FUNCTION_EX
  std::int64_t op_call_mask0 = -1;  // opcodes that deoptimize to CALL, 0 - 63
  std::int64_t op_call_mask1 = -1;  // opcodes that deoptimize to CALL, 64 - 127
  std::int64_t op_call_mask2 = -1;  // opcodes that deoptimize to CALL, 128 - 191
  std::int64_t op_call_mask3 = -1;  // opcodes that deoptimize to CALL, 192 - 255
  std::int64_t op_call_kw_mask0 = -1;  // opcodes that deoptimize to CALL_KW, 0 - 63
  std::int64_t op_call_kw_mask1 = -1;  // opcodes that deoptimize to CALL_KW, 64 - 127
  std::int64_t op_call_kw_mask2 = -1;  // opcodes that deoptimize to CALL_KW, 128 - 191
  std::int64_t op_call_kw_mask3 = -1;  // opcodes that deoptimize to CALL_KW, 192 - 255
  std::int64_t op_call_function_ex_mask0 = -1;  // opcodes that deoptimize to CALL_FUNCTION_EX, 0 - 63
  std::int64_t op_call_function_ex_mask1 = -1;  // opcodes that deoptimize to CALL_FUNCTION_EX, 64 - 127
  std::int64_t op_call_function_ex_mask2 = -1;  // opcodes that deoptimize to CALL_FUNCTION_EX, 128 - 191
  std::int64_t op_call_function_ex_mask3 = -1;  // opcodes that deoptimize to CALL_FUNCTION_EX, 192 - 255
  std::int64_t op_call_popped0 = -1;  // inputs CALL pops at oparg 0 (3.12+)
  std::int64_t op_call_popped1 = -1;  // inputs CALL pops at oparg 1 (3.12+)
  std::int64_t op_call_kw_popped0 = -1;  // inputs CALL_KW pops at oparg 0 (3.12+)
  std::int64_t op_call_kw_popped1 = -1;  // inputs CALL_KW pops at oparg 1 (3.12+)
  std::int64_t op_call_function_ex_popped0 = -1;  // inputs CALL_FUNCTION_EX pops at oparg 0 (3.12+)
  std::int64_t op_call_function_ex_popped1 = -1;  // inputs CALL_FUNCTION_EX pops at oparg 1 (3.12+)
  // END GENERATED FIELDS

  bool has(std::int64_t field) const { return field >= 0; }
  // The object a frame slot refers to: a _PyStackRef (3.14+: f_executable,
  // localsplus and the value stack) carries tag bits below the pointer
  // (Py_TAG_BITS); earlier slots are plain PyObject pointers.
  std::uint64_t untag(std::uint64_t slot) const {
    return has(stackref_tag_bits) ? slot & ~static_cast<std::uint64_t>(stackref_tag_bits) : slot;
  }
};

// Every generated table, by ascending minor version.
std::span<const Layout> generated_layouts();

// The generated table for major.minor (the lowest patch level generated),
// or null.
const Layout* layout_for(int major, int minor);
// The generated table for an exact release: the row generated from the
// greatest patch <= patch (a patch release whose headers differed has its
// own row); patch < 0 (unknown) is layout_for(major, minor).
const Layout* layout_for(int major, int minor, int patch);
// The layout to read a release with: layout_for(major, minor, patch), or for
// a minor newer than every table, a copy of the newest table that has
// _Py_DebugOffsets, marked stand_in and renumbered to that minor; nullopt
// for anything else (older than 3.6, another major).
std::optional<Layout> layout_for_release(int major, int minor, int patch);

}  // namespace pyhang::cpython
