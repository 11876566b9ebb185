#!/usr/bin/env python3
"""Generate native/src/cpython/layouts/generated.cpp from CPython's own headers.

For every minor version 3.6 ... 3.13 this finds an interpreter under
$(pyenv root)/versions/3.X.*, writes a C probe that includes that version's
public and internal headers (with Py_BUILD_CORE), and prints offsetof/sizeof
of every field the pyhang walkers read.  Each field may name several
alternative C expressions (the member moved or was renamed between
versions); the first one that compiles wins, and a field none of whose
alternatives compiles is absent (-1).  The probe is compiled repeatedly,
dropping the probe lines gcc rejects, so absence is decided by the headers
themselves and never by a version check written here.

The few facts headers cannot express as one offset (which frame model,
which line-table format, the unit of f_lasti) are derived below from which
fields exist, with the rule written next to each.

Usage: gen_cpython_layouts.py [--pyenv-root DIR] [--output FILE] [--cc gcc] [--also-prefix DIR ...]
The rows of 3.14 and 3.15 (no pyenv build) and of Debian 13's 3.13.5 come from
Debian's libpython3.X-dev in root file systems made with mmdebstrap:
  --also-prefix /usr --also-prefix SID_ROOT/usr --also-prefix TRIXIE_ROOT/usr
Runs with any python3 (no third-party modules).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

MINORS = range(6, 16)

# (field, comment, [alternative C expressions]).  Expression helpers (macros
# defined in the probe prologue):
#   OFF(T, member)      offsetof, nested members allowed ("a.b")
#   SIZE(T)             sizeof(T)
#   MSIZE(T, member)    sizeof of one member
#   CONST(expr)         an integer constant (enumerator or macro)
#   OPMASK(OP, w)       bit i set when opcode 64 * w + i is OP or a specialized form of it
#   POPPED(OP, arg)     stack slots OP pops at that oparg (3.12+ metadata)
#   BITS(T, m, f)       mask of bit-field f inside the 32-bit word at T.m
# The order here is the declaration order of struct Layout in
# native/src/cpython/layouts/layout.hpp; the generator checks they agree.
FIELDS: list[tuple[str, str, list[str]]] = [
    # --- PyObject / PyVarObject / PyTypeObject
    ("object_ob_type", "PyObject.ob_type", ["OFF(PyObject, ob_type)"]),
    ("var_ob_size", "PyVarObject.ob_size", ["OFF(PyVarObject, ob_size)"]),
    ("type_tp_name", "PyTypeObject.tp_name", ["OFF(PyTypeObject, tp_name)"]),
    ("type_tp_flags", "PyTypeObject.tp_flags", ["OFF(PyTypeObject, tp_flags)"]),
    ("tpflags_bytes_subclass", "Py_TPFLAGS_BYTES_SUBCLASS", ["CONST(Py_TPFLAGS_BYTES_SUBCLASS)"]),
    ("tpflags_unicode_subclass", "Py_TPFLAGS_UNICODE_SUBCLASS", ["CONST(Py_TPFLAGS_UNICODE_SUBCLASS)"]),
    # --- bytes
    ("bytes_ob_sval", "PyBytesObject.ob_sval", ["OFF(PyBytesObject, ob_sval)"]),
    # --- str (PEP 393)
    ("unicode_length", "PyASCIIObject.length", ["OFF(PyASCIIObject, length)"]),
    ("unicode_state", "PyASCIIObject.state (32-bit word of bit-fields)", ["OFF(PyASCIIObject, state)"]),
    ("unicode_kind_mask", "state.kind", ["BITS(PyASCIIObject, state, kind)"]),
    ("unicode_compact_mask", "state.compact", ["BITS(PyASCIIObject, state, compact)"]),
    ("unicode_ascii_mask", "state.ascii", ["BITS(PyASCIIObject, state, ascii)"]),
    ("unicode_ready_mask", "state.ready (gone in 3.12)", ["BITS(PyASCIIObject, state, ready)"]),
    ("unicode_ascii_data", "compact ASCII data follows PyASCIIObject", ["SIZE(PyASCIIObject)"]),
    ("unicode_compact_data", "compact non-ASCII data follows PyCompactUnicodeObject", ["SIZE(PyCompactUnicodeObject)"]),
    ("unicode_legacy_data", "PyUnicodeObject.data.any (non-compact strings)", ["OFF(PyUnicodeObject, data.any)"]),
    # --- code objects
    ("code_size", "sizeof(PyCodeObject)", ["SIZE(PyCodeObject)"]),
    ("code_filename", "co_filename", ["OFF(PyCodeObject, co_filename)"]),
    ("code_name", "co_name", ["OFF(PyCodeObject, co_name)"]),
    ("code_qualname", "co_qualname (3.11+)", ["OFF(PyCodeObject, co_qualname)"]),
    ("code_firstlineno", "co_firstlineno (int)", ["OFF(PyCodeObject, co_firstlineno)"]),
    ("code_lnotab", "co_lnotab bytes (<= 3.9)", ["OFF(PyCodeObject, co_lnotab)"]),
    ("code_linetable", "co_linetable bytes (3.10+)", ["OFF(PyCodeObject, co_linetable)"]),
    ("code_code", "co_code bytes object (<= 3.10)", ["OFF(PyCodeObject, co_code)"]),
    ("code_code_adaptive", "inline co_code_adaptive (3.11+)", ["OFF(PyCodeObject, co_code_adaptive)"]),
    ("code_firsttraceable", "_co_firsttraceable (int, 3.11+)", ["OFF(PyCodeObject, _co_firsttraceable)"]),
    # --- PyFrameObject (the frame chain itself up to 3.10)
    ("frame_size", "sizeof(PyFrameObject)", ["SIZE(PyFrameObject)"]),
    ("frame_back", "f_back", ["OFF(PyFrameObject, f_back)"]),
    ("frame_code", "f_code", ["OFF(PyFrameObject, f_code)"]),
    ("frame_lasti", "f_lasti (int)", ["OFF(PyFrameObject, f_lasti)"]),
    ("frame_lineno", "f_lineno (int)", ["OFF(PyFrameObject, f_lineno)"]),
    ("frame_trace", "f_trace", ["OFF(PyFrameObject, f_trace)"]),
    # --- _PyInterpreterFrame (3.11+)
    ("iframe_size", "sizeof(_PyInterpreterFrame)", ["SIZE(_PyInterpreterFrame)"]),
    ("iframe_code", "f_code / f_executable", ["OFF(_PyInterpreterFrame, f_executable)", "OFF(_PyInterpreterFrame, f_code)"]),
    ("iframe_executable", "f_executable (3.13+): the code slot may hold another object than code",
     ["OFF(_PyInterpreterFrame, f_executable)"]),
    ("iframe_previous", "previous", ["OFF(_PyInterpreterFrame, previous)"]),
    ("iframe_instr", "instr_ptr (3.13+) / prev_instr", ["OFF(_PyInterpreterFrame, instr_ptr)", "OFF(_PyInterpreterFrame, prev_instr)"]),
    ("iframe_owner", "owner (char)", ["OFF(_PyInterpreterFrame, owner)"]),
    ("iframe_is_entry", "is_entry (bool, 3.11 only)", ["OFF(_PyInterpreterFrame, is_entry)"]),
    ("owner_generator", "FRAME_OWNED_BY_GENERATOR", ["CONST(FRAME_OWNED_BY_GENERATOR)"]),
    ("owner_cstack", "first owner of frames that run no Python function: FRAME_OWNED_BY_CSTACK (3.12, 3.13), "
     "FRAME_OWNED_BY_INTERPRETER (3.14+; CSTACK, where it remains, is above it)",
     ["CONST(FRAME_OWNED_BY_INTERPRETER)", "CONST(FRAME_OWNED_BY_CSTACK)"]),
    # --- _PyCFrame (3.11, 3.12)
    ("cframe_current_frame", "_PyCFrame.current_frame", ["OFF(_PyCFrame, current_frame)"]),
    # --- PyThreadState
    ("tstate_size", "sizeof(PyThreadState)", ["SIZE(PyThreadState)"]),
    ("tstate_prev", "prev", ["OFF(PyThreadState, prev)"]),
    ("tstate_next", "next", ["OFF(PyThreadState, next)"]),
    ("tstate_interp", "interp", ["OFF(PyThreadState, interp)"]),
    ("tstate_frame", "frame (PyFrameObject*, <= 3.10)", ["OFF(PyThreadState, frame)"]),
    ("tstate_cframe", "cframe (_PyCFrame*, 3.11-3.12)", ["OFF(PyThreadState, cframe)"]),
    ("tstate_current_frame", "current_frame (3.13+)", ["OFF(PyThreadState, current_frame)"]),
    ("tstate_thread_id", "thread_id (pthread_t)", ["OFF(PyThreadState, thread_id)"]),
    ("tstate_native_thread_id", "native_thread_id (3.8+)", ["OFF(PyThreadState, native_thread_id)"]),
    ("tstate_state", "state (int, 3.13+)", ["OFF(PyThreadState, state)"]),
    ("thread_attached", "_Py_THREAD_ATTACHED", ["CONST(_Py_THREAD_ATTACHED)"]),
    # --- PyInterpreterState
    ("interp_size", "sizeof(PyInterpreterState)", ["SIZE(PyInterpreterState)"]),
    ("interp_next", "next", ["OFF(PyInterpreterState, next)"]),
    ("interp_id", "id (int64_t, 3.7+)", ["OFF(PyInterpreterState, id)"]),
    ("interp_threads_head", "threads.head / tstate_head", ["OFF(PyInterpreterState, threads.head)", "OFF(PyInterpreterState, tstate_head)"]),
    ("interp_ceval_gil", "ceval.gil (pointer, 3.12+)", ["OFF(PyInterpreterState, ceval.gil)"]),
    ("interp_own_gil", "_gil (3.12+)", ["OFF(PyInterpreterState, _gil)"]),
    # --- _PyRuntimeState (3.7+)
    ("runtime_size", "sizeof(_PyRuntimeState)", ["SIZE(_PyRuntimeState)"]),
    ("runtime_initialized", "initialized (int)", ["OFF(_PyRuntimeState, initialized)"]),
    ("runtime_finalizing", "_finalizing / finalizing (PyThreadState*)", ["OFF(_PyRuntimeState, _finalizing)", "OFF(_PyRuntimeState, finalizing)"]),
    ("runtime_interpreters_head", "interpreters.head", ["OFF(_PyRuntimeState, interpreters.head)"]),
    ("runtime_interpreters_main", "interpreters.main", ["OFF(_PyRuntimeState, interpreters.main)"]),
    ("runtime_tstate_current", "gilstate.tstate_current (3.7-3.11)", ["OFF(_PyRuntimeState, gilstate.tstate_current)"]),
    ("runtime_ceval_gil", "ceval.gil (embedded, 3.7-3.11)", ["OFF(_PyRuntimeState, ceval.gil)"]),
    # --- struct _gil_runtime_state (3.7+)
    ("gil_size", "sizeof(struct _gil_runtime_state)", ["SIZE(struct _gil_runtime_state)"]),
    ("gil_last_holder", "last_holder", ["OFF(struct _gil_runtime_state, last_holder)"]),
    ("gil_locked", "locked (int)", ["OFF(struct _gil_runtime_state, locked)"]),
    ("gil_switch_number", "switch_number (unsigned long)", ["OFF(struct _gil_runtime_state, switch_number)"]),
    ("gil_cond", "cond", ["OFF(struct _gil_runtime_state, cond)"]),
    ("gil_mutex", "mutex", ["OFF(struct _gil_runtime_state, mutex)"]),
    # --- _Py_DebugOffsets (3.13+): where the target's own table keeps each value
    ("dbg_size", "sizeof(_Py_DebugOffsets)", ["SIZE(_Py_DebugOffsets)"]),
    ("dbg_version", "version", ["OFF(_Py_DebugOffsets, version)"]),
    ("dbg_runtime_size", "runtime_state.size", ["OFF(_Py_DebugOffsets, runtime_state.size)"]),
    ("dbg_runtime_finalizing", "runtime_state.finalizing", ["OFF(_Py_DebugOffsets, runtime_state.finalizing)"]),
    ("dbg_runtime_interpreters_head", "runtime_state.interpreters_head", ["OFF(_Py_DebugOffsets, runtime_state.interpreters_head)"]),
    ("dbg_interp_size", "interpreter_state.size", ["OFF(_Py_DebugOffsets, interpreter_state.size)"]),
    ("dbg_interp_id", "interpreter_state.id", ["OFF(_Py_DebugOffsets, interpreter_state.id)"]),
    ("dbg_interp_next", "interpreter_state.next", ["OFF(_Py_DebugOffsets, interpreter_state.next)"]),
    ("dbg_interp_threads_head", "interpreter_state.threads_head", ["OFF(_Py_DebugOffsets, interpreter_state.threads_head)"]),
    ("dbg_interp_ceval_gil", "interpreter_state.ceval_gil", ["OFF(_Py_DebugOffsets, interpreter_state.ceval_gil)"]),
    ("dbg_interp_gil_runtime_state", "interpreter_state.gil_runtime_state", ["OFF(_Py_DebugOffsets, interpreter_state.gil_runtime_state)"]),
    ("dbg_interp_gil_locked", "interpreter_state.gil_runtime_state_locked", ["OFF(_Py_DebugOffsets, interpreter_state.gil_runtime_state_locked)"]),
    ("dbg_interp_gil_holder", "interpreter_state.gil_runtime_state_holder", ["OFF(_Py_DebugOffsets, interpreter_state.gil_runtime_state_holder)"]),
    ("dbg_tstate_size", "thread_state.size", ["OFF(_Py_DebugOffsets, thread_state.size)"]),
    ("dbg_tstate_prev", "thread_state.prev", ["OFF(_Py_DebugOffsets, thread_state.prev)"]),
    ("dbg_tstate_next", "thread_state.next", ["OFF(_Py_DebugOffsets, thread_state.next)"]),
    ("dbg_tstate_interp", "thread_state.interp", ["OFF(_Py_DebugOffsets, thread_state.interp)"]),
    ("dbg_tstate_current_frame", "thread_state.current_frame", ["OFF(_Py_DebugOffsets, thread_state.current_frame)"]),
    ("dbg_tstate_thread_id", "thread_state.thread_id", ["OFF(_Py_DebugOffsets, thread_state.thread_id)"]),
    ("dbg_tstate_native_thread_id", "thread_state.native_thread_id", ["OFF(_Py_DebugOffsets, thread_state.native_thread_id)"]),
    ("dbg_tstate_status", "thread_state.status", ["OFF(_Py_DebugOffsets, thread_state.status)"]),
    ("dbg_iframe_size", "interpreter_frame.size", ["OFF(_Py_DebugOffsets, interpreter_frame.size)"]),
    ("dbg_iframe_previous", "interpreter_frame.previous", ["OFF(_Py_DebugOffsets, interpreter_frame.previous)"]),
    ("dbg_iframe_executable", "interpreter_frame.executable", ["OFF(_Py_DebugOffsets, interpreter_frame.executable)"]),
    ("dbg_iframe_instr_ptr", "interpreter_frame.instr_ptr", ["OFF(_Py_DebugOffsets, interpreter_frame.instr_ptr)"]),
    ("dbg_iframe_owner", "interpreter_frame.owner", ["OFF(_Py_DebugOffsets, interpreter_frame.owner)"]),
    ("dbg_code_size", "code_object.size", ["OFF(_Py_DebugOffsets, code_object.size)"]),
    ("dbg_code_filename", "code_object.filename", ["OFF(_Py_DebugOffsets, code_object.filename)"]),
    ("dbg_code_name", "code_object.name", ["OFF(_Py_DebugOffsets, code_object.name)"]),
    ("dbg_code_qualname", "code_object.qualname", ["OFF(_Py_DebugOffsets, code_object.qualname)"]),
    ("dbg_code_linetable", "code_object.linetable", ["OFF(_Py_DebugOffsets, code_object.linetable)"]),
    ("dbg_code_firstlineno", "code_object.firstlineno", ["OFF(_Py_DebugOffsets, code_object.firstlineno)"]),
    ("dbg_code_code_adaptive", "code_object.co_code_adaptive", ["OFF(_Py_DebugOffsets, code_object.co_code_adaptive)"]),
    ("dbg_object_ob_type", "pyobject.ob_type", ["OFF(_Py_DebugOffsets, pyobject.ob_type)"]),
    ("dbg_type_tp_name", "type_object.tp_name", ["OFF(_Py_DebugOffsets, type_object.tp_name)"]),
    ("dbg_type_tp_flags", "type_object.tp_flags", ["OFF(_Py_DebugOffsets, type_object.tp_flags)"]),
    ("dbg_bytes_ob_size", "bytes_object.ob_size", ["OFF(_Py_DebugOffsets, bytes_object.ob_size)"]),
    ("dbg_bytes_ob_sval", "bytes_object.ob_sval", ["OFF(_Py_DebugOffsets, bytes_object.ob_sval)"]),
    ("dbg_unicode_state", "unicode_object.state", ["OFF(_Py_DebugOffsets, unicode_object.state)"]),
    ("dbg_unicode_length", "unicode_object.length", ["OFF(_Py_DebugOffsets, unicode_object.length)"]),
    ("dbg_unicode_asciiobject_size", "unicode_object.asciiobject_size", ["OFF(_Py_DebugOffsets, unicode_object.asciiobject_size)"]),
    ("dbg_free_threaded", "free_threaded (3.14+)", ["OFF(_Py_DebugOffsets, free_threaded)"]),
    ("dbg_interp_threads_main", "interpreter_state.threads_main (3.14+)", ["OFF(_Py_DebugOffsets, interpreter_state.threads_main)"]),
    ("dbg_interp_gc", "interpreter_state.gc (3.14+)", ["OFF(_Py_DebugOffsets, interpreter_state.gc)"]),
    ("dbg_interp_imports_modules", "interpreter_state.imports_modules (3.14+)", ["OFF(_Py_DebugOffsets, interpreter_state.imports_modules)"]),
    ("dbg_iframe_localsplus", "interpreter_frame.localsplus (3.14+)", ["OFF(_Py_DebugOffsets, interpreter_frame.localsplus)"]),
    ("dbg_iframe_stackpointer", "interpreter_frame.stackpointer (3.14+)", ["OFF(_Py_DebugOffsets, interpreter_frame.stackpointer)"]),
    ("dbg_code_argcount", "code_object.argcount (3.14+)", ["OFF(_Py_DebugOffsets, code_object.argcount)"]),
    ("dbg_code_localsplusnames", "code_object.localsplusnames (3.14+)", ["OFF(_Py_DebugOffsets, code_object.localsplusnames)"]),
    ("dbg_code_localspluskinds", "code_object.localspluskinds (3.14+)", ["OFF(_Py_DebugOffsets, code_object.localspluskinds)"]),
    ("dbg_type_tp_basicsize", "type_object.tp_basicsize (3.15+)", ["OFF(_Py_DebugOffsets, type_object.tp_basicsize)"]),
    ("dbg_type_tp_dictoffset", "type_object.tp_dictoffset (3.15+)", ["OFF(_Py_DebugOffsets, type_object.tp_dictoffset)"]),
    ("dbg_heaptype_size", "heap_type_object.size (3.15+)", ["OFF(_Py_DebugOffsets, heap_type_object.size)"]),
    ("dbg_heaptype_cached_keys", "heap_type_object.ht_cached_keys (3.15+)", ["OFF(_Py_DebugOffsets, heap_type_object.ht_cached_keys)"]),
    ("dbg_tuple_ob_item", "tuple_object.ob_item (3.14+)", ["OFF(_Py_DebugOffsets, tuple_object.ob_item)"]),
    ("dbg_list_ob_item", "list_object.ob_item (3.14+)", ["OFF(_Py_DebugOffsets, list_object.ob_item)"]),
    ("dbg_set_size", "set_object.size (3.14+)", ["OFF(_Py_DebugOffsets, set_object.size)"]),
    ("dbg_set_used", "set_object.used (3.14+)", ["OFF(_Py_DebugOffsets, set_object.used)"]),
    ("dbg_set_table", "set_object.table (3.14+)", ["OFF(_Py_DebugOffsets, set_object.table)"]),
    ("dbg_set_mask", "set_object.mask (3.14+)", ["OFF(_Py_DebugOffsets, set_object.mask)"]),
    ("dbg_dict_size", "dict_object.size (3.14+)", ["OFF(_Py_DebugOffsets, dict_object.size)"]),
    ("dbg_dict_ma_keys", "dict_object.ma_keys (3.14+)", ["OFF(_Py_DebugOffsets, dict_object.ma_keys)"]),
    ("dbg_dict_ma_values", "dict_object.ma_values (3.14+)", ["OFF(_Py_DebugOffsets, dict_object.ma_values)"]),
    ("dbg_float_size", "float_object.size (3.14+)", ["OFF(_Py_DebugOffsets, float_object.size)"]),
    ("dbg_float_ob_fval", "float_object.ob_fval (3.14+)", ["OFF(_Py_DebugOffsets, float_object.ob_fval)"]),
    ("dbg_long_size", "long_object.size (3.14+)", ["OFF(_Py_DebugOffsets, long_object.size)"]),
    ("dbg_long_lv_tag", "long_object.lv_tag (3.14+)", ["OFF(_Py_DebugOffsets, long_object.lv_tag)"]),
    ("dbg_long_ob_digit", "long_object.ob_digit (3.14+)", ["OFF(_Py_DebugOffsets, long_object.ob_digit)"]),
    ("dbg_unicode_compact_size", "unicode_object.compactunicodeobject_size (3.15+)", ["OFF(_Py_DebugOffsets, unicode_object.compactunicodeobject_size)"]),
    ("dbg_gc_size", "gc.size (3.14+)", ["OFF(_Py_DebugOffsets, gc.size)"]),
    ("dbg_gc_collecting", "gc.collecting (3.14+)", ["OFF(_Py_DebugOffsets, gc.collecting)"]),
    ("dbg_gen_size", "gen_object.size (3.14+)", ["OFF(_Py_DebugOffsets, gen_object.size)"]),
    ("dbg_gen_iframe", "gen_object.gi_iframe (3.14+)", ["OFF(_Py_DebugOffsets, gen_object.gi_iframe)"]),
    ("dbg_gen_frame_state", "gen_object.gi_frame_state (3.14+)", ["OFF(_Py_DebugOffsets, gen_object.gi_frame_state)"]),
    ("dbg_llist_next", "llist_node.next (3.14+)", ["OFF(_Py_DebugOffsets, llist_node.next)"]),
    # --- frame contents (locals + value stack), for finding objects a frame uses
    ("code_nlocalsplus", "co_nlocalsplus (int, 3.11+)", ["OFF(PyCodeObject, co_nlocalsplus)"]),
    ("code_nlocals", "co_nlocals (int)", ["OFF(PyCodeObject, co_nlocals)"]),
    ("code_stacksize", "co_stacksize (int)", ["OFF(PyCodeObject, co_stacksize)"]),
    ("frame_valuestack", "f_valuestack (PyObject **, <= 3.10)", ["OFF(PyFrameObject, f_valuestack)"]),
    ("frame_localsplus", "f_localsplus (<= 3.10)", ["OFF(PyFrameObject, f_localsplus)"]),
    ("iframe_localsplus", "localsplus (3.11+)", ["OFF(_PyInterpreterFrame, localsplus)"]),
    # --- bound methods: the object a method is bound to
    ("cfunction_self", "PyCFunctionObject.m_self", ["OFF(PyCFunctionObject, m_self)"]),
    ("method_self", "PyMethodObject.im_self", ["OFF(PyMethodObject, im_self)"]),
    # --- instance attributes: type facts, dicts (keys object: headers 3.11+ only)
    ("type_basicsize", "PyTypeObject.tp_basicsize", ["OFF(PyTypeObject, tp_basicsize)"]),
    ("type_dictoffset", "PyTypeObject.tp_dictoffset", ["OFF(PyTypeObject, tp_dictoffset)"]),
    ("heaptype_cached_keys", "PyHeapTypeObject.ht_cached_keys", ["OFF(PyHeapTypeObject, ht_cached_keys)"]),
    ("tpflags_managed_dict", "Py_TPFLAGS_MANAGED_DICT (3.11+)", ["CONST(Py_TPFLAGS_MANAGED_DICT)"]),
    ("tpflags_inline_values", "Py_TPFLAGS_INLINE_VALUES (3.13+)", ["CONST(Py_TPFLAGS_INLINE_VALUES)"]),
    ("dict_ma_used", "PyDictObject.ma_used", ["OFF(PyDictObject, ma_used)"]),
    ("dict_ma_keys", "PyDictObject.ma_keys", ["OFF(PyDictObject, ma_keys)"]),
    ("dict_ma_values", "PyDictObject.ma_values", ["OFF(PyDictObject, ma_values)"]),
    ("dictkeys_log2_size", "PyDictKeysObject.dk_log2_size (uint8, 3.11+)", ["OFF(PyDictKeysObject, dk_log2_size)"]),
    ("dictkeys_log2_index_bytes", "dk_log2_index_bytes (uint8, 3.11+)", ["OFF(PyDictKeysObject, dk_log2_index_bytes)"]),
    ("dictkeys_kind", "dk_kind (uint8, 3.11+)", ["OFF(PyDictKeysObject, dk_kind)"]),
    ("dictkeys_nentries", "dk_nentries (3.11+ in headers)", ["OFF(PyDictKeysObject, dk_nentries)"]),
    ("dictkeys_indices", "dk_indices (3.11+ in headers)", ["OFF(PyDictKeysObject, dk_indices)"]),
    ("dictkeys_kind_general", "DICT_KEYS_GENERAL (3.11+)", ["CONST(DICT_KEYS_GENERAL)"]),
    ("dictentry_size", "sizeof(PyDictKeyEntry) (3.11+ in headers)", ["SIZE(PyDictKeyEntry)"]),
    ("dictentry_key", "PyDictKeyEntry.me_key", ["OFF(PyDictKeyEntry, me_key)"]),
    ("dictentry_value", "PyDictKeyEntry.me_value", ["OFF(PyDictKeyEntry, me_value)"]),
    ("dictuentry_size", "sizeof(PyDictUnicodeEntry) (3.11+)", ["SIZE(PyDictUnicodeEntry)"]),
    ("dictuentry_key", "PyDictUnicodeEntry.me_key", ["OFF(PyDictUnicodeEntry, me_key)"]),
    ("dictuentry_value", "PyDictUnicodeEntry.me_value", ["OFF(PyDictUnicodeEntry, me_value)"]),
    ("dictvalues_values", "PyDictValues.values (3.11+)", ["OFF(PyDictValues, values)"]),
    ("dictvalues_valid", "PyDictValues.valid (uint8, 3.13+)", ["OFF(PyDictValues, valid)"]),
    ("dict_or_values_size", "sizeof(PyDictOrValues) (3.12 only)", ["SIZE(PyDictOrValues)"]),
    # --- reading Python values (pyhang/cpython/pyobjects.hpp): sys.modules, numbers, containers
    ("interp_modules", "PyInterpreterState.modules / imports.modules (sys.modules)", ["OFF(PyInterpreterState, imports.modules)", "OFF(PyInterpreterState, modules)"]),
    ("tpflags_long_subclass", "Py_TPFLAGS_LONG_SUBCLASS", ["CONST(Py_TPFLAGS_LONG_SUBCLASS)"]),
    ("tpflags_list_subclass", "Py_TPFLAGS_LIST_SUBCLASS", ["CONST(Py_TPFLAGS_LIST_SUBCLASS)"]),
    ("tpflags_tuple_subclass", "Py_TPFLAGS_TUPLE_SUBCLASS", ["CONST(Py_TPFLAGS_TUPLE_SUBCLASS)"]),
    ("tpflags_dict_subclass", "Py_TPFLAGS_DICT_SUBCLASS", ["CONST(Py_TPFLAGS_DICT_SUBCLASS)"]),
    ("long_digits", "PyLongObject ob_digit / long_value.ob_digit", ["OFF(PyLongObject, long_value.ob_digit)", "OFF(PyLongObject, ob_digit)"]),
    ("long_lv_tag", "PyLongObject long_value.lv_tag (3.12+; before: sign and size in ob_size)", ["OFF(PyLongObject, long_value.lv_tag)"]),
    ("long_shift", "PyLong_SHIFT (bits per digit)", ["CONST(PyLong_SHIFT)"]),
    ("long_non_size_bits", "_PyLong_NON_SIZE_BITS (3.12+)", ["CONST(_PyLong_NON_SIZE_BITS)"]),
    ("long_sign_mask", "_PyLong_SIGN_MASK (3.12+)", ["CONST(_PyLong_SIGN_MASK)"]),
    ("float_ob_fval", "PyFloatObject.ob_fval", ["OFF(PyFloatObject, ob_fval)"]),
    ("list_ob_item", "PyListObject.ob_item", ["OFF(PyListObject, ob_item)"]),
    ("list_allocated", "PyListObject.allocated", ["OFF(PyListObject, allocated)"]),
    ("tuple_ob_item", "PyTupleObject.ob_item", ["OFF(PyTupleObject, ob_item)"]),
    ("set_fill", "PySetObject.fill", ["OFF(PySetObject, fill)"]),
    ("set_used", "PySetObject.used", ["OFF(PySetObject, used)"]),
    ("set_mask", "PySetObject.mask", ["OFF(PySetObject, mask)"]),
    ("set_table", "PySetObject.table", ["OFF(PySetObject, table)"]),
    ("setentry_size", "sizeof(setentry)", ["SIZE(setentry)"]),
    ("setentry_key", "setentry.key", ["OFF(setentry, key)"]),
    # --- locals of a frame (pyhang/cpython/locals.hpp): names, kinds, the frame's dicts
    ("code_argcount", "co_argcount (int)", ["OFF(PyCodeObject, co_argcount)"]),
    ("code_posonlyargcount", "co_posonlyargcount (int, 3.8+)", ["OFF(PyCodeObject, co_posonlyargcount)"]),
    ("code_kwonlyargcount", "co_kwonlyargcount (int)", ["OFF(PyCodeObject, co_kwonlyargcount)"]),
    ("code_flags", "co_flags (int)", ["OFF(PyCodeObject, co_flags)"]),
    ("co_varargs", "CO_VARARGS", ["CONST(CO_VARARGS)"]),
    ("co_varkeywords", "CO_VARKEYWORDS", ["CONST(CO_VARKEYWORDS)"]),
    ("code_varnames", "co_varnames tuple (<= 3.10)", ["OFF(PyCodeObject, co_varnames)"]),
    ("code_cellvars", "co_cellvars tuple (<= 3.10)", ["OFF(PyCodeObject, co_cellvars)"]),
    ("code_freevars", "co_freevars tuple (<= 3.10)", ["OFF(PyCodeObject, co_freevars)"]),
    ("code_localsplusnames", "co_localsplusnames tuple (3.11+)", ["OFF(PyCodeObject, co_localsplusnames)"]),
    ("code_localspluskinds", "co_localspluskinds bytes (3.11+)", ["OFF(PyCodeObject, co_localspluskinds)"]),
    ("co_fast_local", "CO_FAST_LOCAL (3.11+)", ["CONST(CO_FAST_LOCAL)"]),
    ("co_fast_cell", "CO_FAST_CELL (3.11+)", ["CONST(CO_FAST_CELL)"]),
    ("co_fast_free", "CO_FAST_FREE (3.11+)", ["CONST(CO_FAST_FREE)"]),
    ("co_fast_hidden", "CO_FAST_HIDDEN (3.12+: an inlined comprehension's variable)", ["CONST(CO_FAST_HIDDEN)"]),
    ("frame_f_locals", "PyFrameObject.f_locals (<= 3.10)", ["OFF(PyFrameObject, f_locals)"]),
    ("frame_f_globals", "PyFrameObject.f_globals (<= 3.10)", ["OFF(PyFrameObject, f_globals)"]),
    ("frame_f_builtins", "PyFrameObject.f_builtins (<= 3.10)", ["OFF(PyFrameObject, f_builtins)"]),
    ("iframe_f_locals", "_PyInterpreterFrame.f_locals (3.11+)", ["OFF(_PyInterpreterFrame, f_locals)"]),
    ("iframe_f_globals", "_PyInterpreterFrame.f_globals (3.11+)", ["OFF(_PyInterpreterFrame, f_globals)"]),
    ("iframe_f_builtins", "_PyInterpreterFrame.f_builtins (3.11+)", ["OFF(_PyInterpreterFrame, f_builtins)"]),
    # --- naming functions as values (pyhang/cpython/values.hpp)
    ("func_qualname", "PyFunctionObject.func_qualname", ["OFF(PyFunctionObject, func_qualname)"]),
    ("cfunction_ml", "PyCFunctionObject.m_ml (PyMethodDef *)", ["OFF(PyCFunctionObject, m_ml)"]),
    ("methoddef_name", "PyMethodDef.ml_name (const char *)", ["OFF(PyMethodDef, ml_name)"]),
    ("iframe_stackpointer", "_PyInterpreterFrame.stackpointer (_PyStackRef *, 3.14+)", ["OFF(_PyInterpreterFrame, stackpointer)"]),
    ("stackref_tag_bits", "Py_TAG_BITS: low bits of a _PyStackRef that are not the pointer (3.14+)", ["CONST(Py_TAG_BITS)"]),
    ("interp_gc_collecting", "PyInterpreterState.gc.collecting (int, 3.12+) / _PyRuntime.gc.collecting (<= 3.11)", ["OFF(PyInterpreterState, gc.collecting)"]),
    ("runtime_gc_collecting", "_PyRuntimeState.gc.collecting (int, 3.7 - 3.8)", ["OFF(_PyRuntimeState, gc.collecting)"]),
    ("tstateimpl_asyncio_running_loop", "_PyThreadStateImpl.asyncio_running_loop (3.14+)", ["OFF(_PyThreadStateImpl, asyncio_running_loop)"]),
    ("tstateimpl_asyncio_running_task", "_PyThreadStateImpl.asyncio_running_task (3.14+)", ["OFF(_PyThreadStateImpl, asyncio_running_task)"]),
    ("tstateimpl_asyncio_tasks_head", "_PyThreadStateImpl.asyncio_tasks_head (struct llist_node, 3.14+)", ["OFF(_PyThreadStateImpl, asyncio_tasks_head)"]),
    ("interp_asyncio_tasks_head", "PyInterpreterState.asyncio_tasks_head (tasks of exited threads, 3.14+)", ["OFF(PyInterpreterState, asyncio_tasks_head)"]),
    # --- exceptions and instances of classes as values: args, __slots__ (PyMemberDef)
    ("tpflags_heaptype", "Py_TPFLAGS_HEAPTYPE", ["CONST(Py_TPFLAGS_HEAPTYPE)"]),
    ("tpflags_base_exc_subclass", "Py_TPFLAGS_BASE_EXC_SUBCLASS", ["CONST(Py_TPFLAGS_BASE_EXC_SUBCLASS)"]),
    ("tpflags_type_subclass", "Py_TPFLAGS_TYPE_SUBCLASS", ["CONST(Py_TPFLAGS_TYPE_SUBCLASS)"]),
    ("exception_args", "PyBaseExceptionObject.args", ["OFF(PyBaseExceptionObject, args)"]),
    ("type_tp_base", "PyTypeObject.tp_base", ["OFF(PyTypeObject, tp_base)"]),
    ("type_tp_members", "PyTypeObject.tp_members (PyMemberDef *)", ["OFF(PyTypeObject, tp_members)"]),
    ("memberdef_size", "sizeof(PyMemberDef)", ["SIZE(PyMemberDef)"]),
    ("memberdef_name", "PyMemberDef.name (const char *)", ["OFF(PyMemberDef, name)"]),
    ("memberdef_type", "PyMemberDef.type (int)", ["OFF(PyMemberDef, type)"]),
    ("memberdef_offset", "PyMemberDef.offset (Py_ssize_t)", ["OFF(PyMemberDef, offset)"]),
    ("t_object_ex", "Py_T_OBJECT_EX / T_OBJECT_EX (a __slots__ member)", ["CONST(Py_T_OBJECT_EX)", "CONST(T_OBJECT_EX)"]),
    # --- the C callable a frame calls (pyhang/cpython/ccalls.hpp)
    ("object_size", "sizeof(PyObject): a method-wrapper's descriptor follows its header", ["SIZE(PyObject)"]),
    ("cfunction_module", "PyCFunctionObject.m_module (the module's name, for module functions)", ["OFF(PyCFunctionObject, m_module)"]),
    ("descr_type", "PyDescrObject.d_type", ["OFF(PyDescrObject, d_type)"]),
    ("descr_name", "PyDescrObject.d_name", ["OFF(PyDescrObject, d_name)"]),
    ("code_names", "co_names tuple", ["OFF(PyCodeObject, co_names)"]),
    ("op_extended_arg", "EXTENDED_ARG", ["CONST(EXTENDED_ARG)"]),
    ("op_call", "CALL (3.11+)", ["CONST(CALL)"]),
    ("op_call_kw", "CALL_KW (3.13+)", ["CONST(CALL_KW)"]),
    ("op_call_function_ex", "CALL_FUNCTION_EX", ["CONST(CALL_FUNCTION_EX)"]),
] + [
    # Which opcodes are CALL, CALL_KW or CALL_FUNCTION_EX or one of their
    # specialized forms (_PyOpcode_Deopt, 3.11+): bit i of word w is opcode 64 * w + i.
    (f"{field}_mask{w}", f"opcodes that deoptimize to {base}, {64 * w} - {64 * w + 63}", [f"OPMASK({base}, {w})"])
    for field, base in (("op_call", "CALL"), ("op_call_kw", "CALL_KW"), ("op_call_function_ex", "CALL_FUNCTION_EX"))
    for w in range(4)
] + [
    # How many stack slots the instruction pops at oparg 0 and 1 (3.12+
    # metadata): the callable is its deepest input, popped0 + oparg * (popped1 - popped0) below the top.
    (f"{field}_popped{arg}", f"inputs {base} pops at oparg {arg} (3.12+)", [f"POPPED({base}, {arg})"])
    for field, base in (("op_call", "CALL"), ("op_call_kw", "CALL_KW"), ("op_call_function_ex", "CALL_FUNCTION_EX"))
    for arg in range(2)
]

HEADERS = [
    # (path relative to include/python3.X[m]/, included only when present)
    "Python.h",
    "frameobject.h",
    "structmember.h",              # T_OBJECT_EX before 3.12
    "opcode.h",                    # opcode numbers (3.13+: from opcode_ids.h)
    "internal/pystate.h",          # 3.7
    "internal/pycore_pystate.h",   # 3.8+
    "internal/pycore_runtime.h",   # 3.9+
    "internal/pycore_interp.h",    # 3.9+
    "internal/pycore_frame.h",     # 3.11+
    "internal/pycore_code.h",
    "internal/pycore_dict.h",      # 3.11+ (dict keys objects)
    "internal/pycore_long.h",      # 3.12+ (_PyLong_NON_SIZE_BITS)
    "internal/pycore_object.h",
    "internal/pycore_gil.h",
    "internal/pycore_debug_offsets.h",  # 3.14+ (_Py_DebugOffsets moved here)
    "internal/pycore_tstate.h",    # 3.13+ (_PyThreadStateImpl)
    "internal/pycore_stackref.h",  # 3.14+ (Py_TAG_BITS)
    "internal/gil.h",              # 3.7
    "internal/pycore_opcode.h",    # 3.11 - 3.12 (_PyOpcode_Deopt with NEED_OPCODE_TABLES)
    "internal/pycore_opcode_metadata.h",  # 3.13+ (_PyOpcode_Deopt with NEED_OPCODE_METADATA)
]

PROLOGUE = r"""
/* Generated by gen_cpython_layouts.py: probe for one CPython version. */
#define Py_BUILD_CORE 1
#define Py_BUILD_CORE_BUILTIN 1
#define NEED_OPCODE_TABLES 1
#define NEED_OPCODE_METADATA 1
#include <stddef.h>
#include <stdio.h>
#include <string.h>
%(includes)s
/* The opcode an instruction's opcode stands for: its own before 3.11. */
#if PY_VERSION_HEX >= 0x030B0000
#define PYHANG_DEOPT(op) (_PyOpcode_Deopt[op])
#else
#define PYHANG_DEOPT(op) (op)
#endif
/* _PyOpcode_num_popped(opcode, oparg[, jump]): 3.12 has the third argument. */
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
#define PYHANG_JUMP , 0
#else
#define PYHANG_JUMP
#endif
static long long pyhang_opmask(int base, int word) {
  unsigned long long m = 0;
  for (int i = 0; i < 64; i++)
    if (PYHANG_DEOPT(64 * word + i) == base) m |= 1ULL << i;
  return (long long)m;
}
int main(void) {
  printf("version %%s\n", PY_VERSION);
"""


def find_interpreters(pyenv_root: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for minor in MINORS:
        cands = []
        for d in glob.glob(os.path.join(pyenv_root, "versions", f"3.{minor}.*")):
            m = re.fullmatch(rf"3\.{minor}\.(\d+)", os.path.basename(d))
            if m and glob.glob(os.path.join(d, "include", f"python3.{minor}*", "Python.h")):
                cands.append((int(m.group(1)), d))
        if cands:
            found[minor] = max(cands)[1]
    return found


def expand(fi: int, ai: int, expr: str) -> str:
    """One probe statement, written out in full so that gcc reports an
    absent member on the probe's own line (not inside a macro)."""
    m = re.fullmatch(r"(\w+)\((.*)\)", expr)
    if not m:
        sys.exit(f"bad probe expression {expr}")
    op, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    if op == "OFF":
        value = f"__builtin_offsetof({args[0]}, {args[1]})"
    elif op == "SIZE":
        value = f"sizeof({args[0]})"
    elif op == "MSIZE":
        value = f"sizeof((({args[0]} *)0)->{args[1]})"
    elif op == "CONST":
        value = f"({args[0]})"
    elif op == "OPMASK":
        value = f"pyhang_opmask({args[0]}, {args[1]})"
    elif op == "POPPED":
        # `sizeof &f`: an undeclared function is an error on this line, not a link error.
        value = f"(sizeof &_PyOpcode_num_popped ? _PyOpcode_num_popped({args[0]}, {args[1]} PYHANG_JUMP) : 0)"
    elif op == "BITS":
        t, mem, bit = args
        value = (f"({{ {t} o_; unsigned int w_; memset(&o_, 0, sizeof o_); o_.{mem}.{bit} = ~0u; "
                 f"memcpy(&w_, (char *)&o_ + __builtin_offsetof({t}, {mem}), sizeof w_); w_; }})")
    else:
        sys.exit(f"bad probe operator {op}")
    return f'printf("%d %d %lld\\n", {fi}, {ai}, (long long)({value}));'


def probe(prefix: str, minor: int, cc: str) -> tuple[str, dict[str, tuple[int, int]]]:
    incdir = glob.glob(os.path.join(prefix, "include", f"python3.{minor}*"))[0]
    includes = "\n".join(f'#if __has_include("{h}")\n#include "{h}"\n#endif' for h in HEADERS)
    head = PROLOGUE % {"includes": includes}
    lines = []  # (field index, alternative index, expr)
    for fi, (_, _, alts) in enumerate(FIELDS):
        for ai, expr in enumerate(alts):
            lines.append((fi, ai, expr))
    dropped: set[int] = set()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        for _ in range(50):
            text = head
            first = head.count("\n") + 1
            line_of = {}
            for k, (fi, ai, expr) in enumerate(lines):
                line_of[first + k] = k
                text += (f"  {expand(fi, ai, expr)}\n" if k not in dropped else "  /* absent */\n")
            text += "  return 0;\n}\n"
            with open(src, "w") as f:
                f.write(text)
            # -idirafter prefix/include: a distribution's pyconfig.h includes
            # <x86_64-linux-gnu/python3.X/pyconfig.h> from there.
            res = subprocess.run([cc, "-w", "-std=gnu11", "-I", incdir, "-idirafter", os.path.join(prefix, "include"),
                                  "-o", exe, src],
                                 capture_output=True, text=True)
            if res.returncode == 0:
                break
            bad = {int(m.group(1)) for m in re.finditer(r"probe\.c:(\d+):\d+: error", res.stderr)}
            new = {line_of[b] for b in bad if b in line_of and line_of[b] not in dropped}
            if not new:
                sys.exit(f"probe for {prefix} does not compile outside the probe lines:\n{res.stderr}")
            dropped |= new
        else:
            sys.exit(f"probe for {prefix} did not converge")
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    version = ""
    values: dict[str, tuple[int, int]] = {}
    for line in out.splitlines():
        if line.startswith("version "):
            version = line.split()[1]
            continue
        fi, ai, val = (int(x) for x in line.split())
        name = FIELDS[fi][0]
        if name not in values or ai < values[name][0]:
            values[name] = (ai, val)
    return version, values


def shown(incdir: str) -> str:
    """An include directory as the generated file names it: the system's
    own paths as they are, others (a root made for the purpose) by what
    they are, never by a path of the machine that generated the file."""
    if incdir.startswith(("/usr/include/", "/usr/local/include/")):
        return incdir
    return "distribution headers, include/" + os.path.basename(incdir)


def patch_of(version: str) -> int:
    """3.11.7 -> 7; 3.13.0rc1 -> 0."""
    return int(re.match(r"\d+\.\d+\.(\d+)", version).group(1))


def derive(v: dict[str, int]) -> dict[str, str]:
    """Facts that are not one offset, each from which fields exist."""
    # The frame chain is made of _PyInterpreterFrame when that type exists.
    frame_model = "FrameModel::InterpreterFrame" if v["iframe_previous"] >= 0 else "FrameModel::FrameObject"
    # co_lnotab only: lnotab; co_linetable with PyFrameObject frames: the
    # 3.10 line table; with interpreter frames: the 3.11 location table.
    if v["code_linetable"] < 0:
        linetable = "LineTableFormat::Lnotab"
    elif frame_model == "FrameModel::FrameObject":
        linetable = "LineTableFormat::LineTable310"
    else:
        linetable = "LineTableFormat::LocationTable"
    # f_lasti counts bytes with lnotab, code units (2 bytes) from 3.10 on.
    lasti_unit = "1" if linetable == "LineTableFormat::Lnotab" else "2"
    # Where the GIL lives: a pointer in each interpreter, embedded in the
    # runtime, or static variables we cannot name (3.6).
    if v["interp_ceval_gil"] >= 0:
        gil_model = "GilModel::InterpreterPointer"
    elif v["runtime_ceval_gil"] >= 0:
        gil_model = "GilModel::RuntimeEmbedded"
    else:
        gil_model = "GilModel::Static"
    # How the thread's innermost frame is reached.
    if v["tstate_current_frame"] >= 0:
        top = "TopFrame::ThreadState"
    elif v["tstate_cframe"] >= 0 and v["cframe_current_frame"] >= 0:  # 3.10's cframe has no frame
        top = "TopFrame::CFrame"
    else:
        top = "TopFrame::ThreadStateFrameObject"
    return {"frame_model": frame_model, "linetable": linetable, "lasti_unit": lasti_unit,
            "gil_model": gil_model, "top_frame": top,
            "has_debug_offsets": "true" if v["dbg_size"] >= 0 else "false"}


def check_header(header_path: str) -> None:
    text = open(header_path).read()
    m = re.search(r"// BEGIN GENERATED FIELDS(.*?)// END GENERATED FIELDS", text, re.S)
    if not m:
        sys.exit(f"{header_path}: no '// BEGIN GENERATED FIELDS' block")
    declared = re.findall(r"std::int64_t\s+(\w+)\s*=", m.group(1))
    expected = [f[0] for f in FIELDS]
    if declared != expected:
        missing = [x for x in expected if x not in declared]
        extra = [x for x in declared if x not in expected]
        sys.exit(f"{header_path} disagrees with FIELDS: missing {missing}, extra {extra} (or order differs)")


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyenv-root", default=None)
    ap.add_argument("--output", default=os.path.join(here, "..", "src", "cpython", "layouts", "generated.cpp"))
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--also-prefix", action="append", default=None,
                    help="prefix with include/python3.X of another patch release, or of a minor pyenv "
                         "does not have (default: /usr, /usr/local); e.g. a Debian root with libpython3.X-dev")
    args = ap.parse_args()
    if args.also_prefix is None:
        args.also_prefix = ["/usr", "/usr/local"]
    root = args.pyenv_root
    if not root:
        try:
            root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            root = os.path.expanduser("~/.pyenv")
    check_header(os.path.join(os.path.dirname(args.output), "layout.hpp"))

    interpreters = find_interpreters(root)
    tables = []
    for minor, prefix in sorted(interpreters.items()):
        version, values = probe(prefix, minor, args.cc)
        flat = {name: values.get(name, (0, -1))[1] for name, _, _ in FIELDS}
        tables.append((minor, version, prefix, flat, derive(flat)))
        absent = [n for n, v in flat.items() if v < 0 and not n.startswith("dbg_")]
        print(f"3.{minor}: {version} from {prefix}; absent: {', '.join(absent) or 'none'}", file=sys.stderr)

    # Other patch releases whose headers are installed (a distribution's
    # python3.X-dev): a patch release may change a layout, so each one found
    # is probed too.  Identical ones are recorded as checked; a different one
    # gets its own row, chosen at run time for that patch level and later.
    checked = []
    also_probed: dict[str, list[str]] = {}
    for prefix in args.also_prefix:
        for incdir in sorted(glob.glob(os.path.join(prefix, "include", "python3.*"))):
            m = re.fullmatch(r"python3\.(\d+)m?", os.path.basename(incdir))
            if not m or not os.path.isdir(os.path.join(incdir, "internal")):
                continue
            minor = int(m.group(1))
            primary = next((t for t in tables if t[0] == minor), None)
            if primary is None and minor not in MINORS:
                continue
            version, values = probe(prefix, minor, args.cc)
            if primary is None:
                # No pyenv build of this minor (3.14, 3.15): the
                # distribution's headers are the first row.
                flat = {name: values.get(name, (0, -1))[1] for name, _, _ in FIELDS}
                tables.append((minor, version, prefix, flat, derive(flat)))
                print(f"3.{minor}: {version} from {incdir}", file=sys.stderr)
                continue
            if version == primary[1]:
                continue
            flat = {name: values.get(name, (0, -1))[1] for name, _, _ in FIELDS}
            diff = [n for n in flat if flat[n] != primary[3][n]]
            if diff:
                tables.append((minor, version, prefix, flat, derive(flat)))
                checked.append(f"{version} ({shown(incdir)}): DIFFERS in {', '.join(diff)}; own row")
            else:
                also_probed.setdefault(primary[1], []).append(version)
                checked.append(f"{version} ({shown(incdir)}): identical to {primary[1]}")
            print(f"3.{minor}: also {version} from {incdir}: {checked[-1]}", file=sys.stderr)
    tables.sort(key=lambda t: (t[0], [int(x) for x in re.findall(r"\d+", t[1])[:3]]))

    out = []
    out.append("// GENERATED by native/tools/gen_cpython_layouts.py -- do not edit by hand.")
    out.append("// Offsets and sizes printed by gcc from each version's own headers")
    out.append("// (public + internal, Py_BUILD_CORE), x86_64 Linux:")
    for minor, version, prefix, _, _ in tables:
        where = os.path.basename(prefix) if "/.pyenv/" in prefix + "/" else "distribution headers"
        out.append(f"//   3.{minor}: CPython {version} ({where})")
    for line in checked:
        out.append(f"// Also probed: {line}")
    out.append("// Absent fields are -1.")
    out.append('#include "cpython/layouts/layout.hpp"')
    out.append("")
    out.append("namespace pyhang::cpython {")
    out.append("namespace {")
    out.append("")
    out.append("constexpr Layout kLayouts[] = {")
    for minor, version, _, flat, derived in tables:
        out.append("    {")
        out.append(f"        .major = 3,")
        out.append(f"        .minor = {minor},")
        out.append(f'        .generated_from = "{version}",')
        out.append("        .patch = %d," % patch_of(version))
        out.append('        .also_probed = "%s",' % ",".join(also_probed.get(version, [])))
        out.append(f"        .frame_model = {derived['frame_model']},")
        out.append(f"        .linetable = {derived['linetable']},")
        out.append(f"        .gil_model = {derived['gil_model']},")
        out.append(f"        .top_frame = {derived['top_frame']},")
        out.append(f"        .lasti_unit = {derived['lasti_unit']},")
        out.append(f"        .has_debug_offsets = {derived['has_debug_offsets']},")
        for name, comment, _ in FIELDS:
            out.append(f"        .{name} = {flat[name]},")
        out.append("    },")
    out.append("};")
    out.append("")
    out.append("}  // namespace")
    out.append("")
    out.append("std::span<const Layout> generated_layouts() { return kLayouts; }")
    out.append("")
    out.append("}  // namespace pyhang::cpython")
    with open(args.output, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
