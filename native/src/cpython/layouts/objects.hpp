// Object layouts CPython keeps out of its installed headers, written by
// hand, one row per minor version: the dict keys object of
// Objects/dict-common.h (<= 3.10; 3.11+ it is in internal/pycore_dict.h and
// comes from the generated table), and where an instance with a "managed
// dict" keeps its attributes (inline functions of internal/pycore_object.h,
// not offsets a probe can print).  Used by the Python object reader
// (native/src/cpython/pyobjects.cpp) for dicts, instance and module attributes.
//
// Every row was checked against real memory (x86_64, pyenv 3.6.15 ...
// 3.13.0, Debian's 3.11.2, and Debian's 3.13.5, 3.14.10 and 3.15.2 run in
// their own root file systems): the `_lock` attribute of a
// threading.Condition (testdata/scenarios/py_locks.py) and module globals
// (testdata/scenarios/fork_*.py) were read through these rows and matched
// what the program printed (cell_ob_ref: the `self` of Barrier._wait, which
// a lambda captures, in testdata/scenarios/py_objects.py).  A field a
// version does not have is -1.
#pragma once

#include <cstdint>

namespace pyhang::cpython {

// Where an instance of a class with Py_TPFLAGS_MANAGED_DICT keeps its
// attributes (pycore_object.h).
enum class ManagedDict : std::int8_t {
  None,                // no managed dicts (<= 3.10): the dict is at tp_dictoffset
  ValuesAndDict,       // 3.11: PyDictValues* at obj-4 words, PyDictObject* at obj-3 words
  TaggedDictOrValues,  // 3.12: one word at obj-3 words: the dict, or (bit 0 set) the values pointer - 1
  InlineValues,        // 3.13: PyDictValues inline at obj + tp_basicsize (Py_TPFLAGS_INLINE_VALUES,
                       //       valid while .valid != 0), else the dict pointer at obj-3 words
};

struct ObjectLayout {
  int major = 3;
  int minor = 0;
  const char* source = "";  // the structs this row was written from

  // Objects/dict-common.h (<= 3.10): struct _dictkeysobject and
  // PyDictKeyEntry.  3.11+ read these from the generated table.
  std::int64_t dk_size = -1;        // Py_ssize_t dk_size (number of index slots)
  std::int64_t dk_nentries = -1;    // Py_ssize_t dk_nentries
  std::int64_t dk_indices = -1;     // dk_indices[] (3.6: a union, same place)
  std::int64_t entry_size = -1;     // sizeof(PyDictKeyEntry): me_hash, me_key, me_value
  std::int64_t entry_key = -1;
  std::int64_t entry_value = -1;

  ManagedDict managed_dict = ManagedDict::None;
  std::int64_t managed_dict_ptr = -1;    // offset from the object of the dict pointer (or tagged word)
  std::int64_t managed_values_ptr = -1;  // 3.11: offset of the PyDictValues pointer

  // Include/cellobject.h: PyCellObject { PyObject_HEAD; PyObject *ob_ref; },
  // the box of a variable a closure captures (a method's `self` in a frame
  // whose lambdas use it).  The same in every version.
  std::int64_t cell_ob_ref = 16;
};

inline constexpr ObjectLayout kObjectLayouts[] = {
#define PYHANG_DICT_COMMON .dk_size = 8, .dk_nentries = 32, .dk_indices = 40, \
    .entry_size = 24, .entry_key = 8, .entry_value = 16
    {.minor = 6, .source = "3.6 Objects/dict-common.h", PYHANG_DICT_COMMON},
    {.minor = 7, .source = "3.7 Objects/dict-common.h", PYHANG_DICT_COMMON},
    {.minor = 8, .source = "3.8 Objects/dict-common.h", PYHANG_DICT_COMMON},
    {.minor = 9, .source = "3.9 Objects/dict-common.h", PYHANG_DICT_COMMON},
    {.minor = 10, .source = "3.10 Objects/dict-common.h", PYHANG_DICT_COMMON},
    {.minor = 11, .source = "3.11 pycore_object.h _PyObject_ValuesPointer/_PyObject_ManagedDictPointer",
     .managed_dict = ManagedDict::ValuesAndDict, .managed_dict_ptr = -24, .managed_values_ptr = -32},
    {.minor = 12, .source = "3.12 pycore_object.h _PyObject_DictOrValuesPointer",
     .managed_dict = ManagedDict::TaggedDictOrValues, .managed_dict_ptr = -24},
    {.minor = 13, .source = "3.13 pycore_object.h MANAGED_DICT_OFFSET",
     .managed_dict = ManagedDict::InlineValues, .managed_dict_ptr = -24},
    {.minor = 14, .source = "3.14 pycore_object.h MANAGED_DICT_OFFSET (default build), pycore_dict.h _dictvalues",
     .managed_dict = ManagedDict::InlineValues, .managed_dict_ptr = -24},
    {.minor = 15, .source = "3.15 pycore_object.h MANAGED_DICT_OFFSET (default build), pycore_dict.h _dictvalues",
     .managed_dict = ManagedDict::InlineValues, .managed_dict_ptr = -24},
#undef PYHANG_DICT_COMMON
};

inline const ObjectLayout* object_layout_for(int major, int minor) {
  for (const auto& l : kObjectLayouts)
    if (l.major == major && l.minor == minor) return &l;
  return nullptr;
}

}  // namespace pyhang::cpython
