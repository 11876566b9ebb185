// What a CPython object or frame reader could not read, as data: the chain
// of things that led to it, outermost first (a frame at A -> its code
// object at B -> its field "name" -> a str at C), and why the last one
// could not be read (unreadable, implausible, not a str, no key 'x', ...),
// with the number or name that reason needs.  The words are
// python/pyhang/render/unread.py's; the name tables below are the
// vocabularies of python/pyhang/model/kinds.py (ReadPart, ReadWhy).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

// One thing on the way to what could not be read.
enum class ReadPart : std::uint8_t {
  Frame,             // a Python frame (PyFrameObject, _PyInterpreterFrame)
  CFrame,            // a thread state's _PyCFrame (3.11)
  Code,              // a code object
  Field,             // a field of the step before, `name` ("name", "line table", "characters", "ob_item")
  Str,
  Bytes,
  Int,
  Float,
  Object,            // any object
  Type,              // an object's type
  Dict,
  DictKeys,          // a dict's keys object
  DictEntries,       // the entries of a keys object
  List,
  Tuple,
  Sequence,          // a list or tuple
  Set,
  Items,             // the items of a container
  InstanceDict,      // an instance's __dict__
  ManagedDict,       // a 3.11+ managed dict
  Cell,              // the cell of variable `name`
  Variable,          // the local variable `name`, holding `address`
  Lock,              // a threading.Lock
  RLock,             // a threading.RLock
  BufferedIO,        // a buffered I/O object (its lock)
  ExceptionArgs,     // the args of an exception
  Coroutine,         // a coroutine or generator
  Task,              // an asyncio task
  ThreadTaskList,    // the 3.14+ task list at `address` of a thread: `number` its LWP (0: unknown)
  InterpreterTaskList,  // the 3.14+ task list of interpreter `number` (tasks of exited threads)
  TaskNode,          // a node of a task list
  TaskRegistry,      // a registry of tasks (asyncio.tasks._all_tasks, _scheduled_tasks)
  AsyncioState,      // _asyncio's module state
  EventLoop,         // the event loop a frame of function `name` runs
  Module,            // sys.modules[`name`]
  Attribute,         // an attribute `name` ("asyncio.tasks._all_tasks")
  SysModules,        // sys.modules of the main interpreter at `address`
  Condition,         // a threading.Condition
  Thread,            // the thread with LWP `number`
  ThreadState,       // a thread state
  Interpreter,       // an interpreter state
  // 3.6's GIL statics, decoded from the code that uses them (cpython/gil_statics.cpp):
  Function,          // the code at `address`, reached through `name` (a call chain: "PyEval_InitThreads -> 0x…")
  Mutex,             // a pthread_mutex_t of the GIL's
  CondVar,           // a pthread_cond_t of the GIL's
  GilObject,         // a pthread object of the GIL's, mutex or condition variable
};

inline constexpr std::array<Named<ReadPart>, 45> kReadPartNames{{
    {ReadPart::Frame, "frame"},
    {ReadPart::CFrame, "cframe"},
    {ReadPart::Code, "code-object"},
    {ReadPart::Field, "field"},
    {ReadPart::Str, "str"},
    {ReadPart::Bytes, "bytes"},
    {ReadPart::Int, "int"},
    {ReadPart::Float, "float"},
    {ReadPart::Object, "object"},
    {ReadPart::Type, "type"},
    {ReadPart::Dict, "dict"},
    {ReadPart::DictKeys, "dict-keys"},
    {ReadPart::DictEntries, "dict-entries"},
    {ReadPart::List, "list"},
    {ReadPart::Tuple, "tuple"},
    {ReadPart::Sequence, "sequence"},
    {ReadPart::Set, "set"},
    {ReadPart::Items, "items"},
    {ReadPart::InstanceDict, "instance-dict"},
    {ReadPart::ManagedDict, "managed-dict"},
    {ReadPart::Cell, "cell"},
    {ReadPart::Variable, "variable"},
    {ReadPart::Lock, "lock"},
    {ReadPart::RLock, "rlock"},
    {ReadPart::BufferedIO, "buffered-io"},
    {ReadPart::ExceptionArgs, "exception-args"},
    {ReadPart::Coroutine, "coroutine"},
    {ReadPart::Task, "task"},
    {ReadPart::ThreadTaskList, "thread-task-list"},
    {ReadPart::InterpreterTaskList, "interpreter-task-list"},
    {ReadPart::TaskNode, "task-node"},
    {ReadPart::TaskRegistry, "task-registry"},
    {ReadPart::AsyncioState, "asyncio-module-state"},
    {ReadPart::EventLoop, "event-loop"},
    {ReadPart::Module, "module"},
    {ReadPart::Attribute, "attribute"},
    {ReadPart::SysModules, "sys-modules"},
    {ReadPart::Condition, "condition"},
    {ReadPart::Thread, "thread"},
    {ReadPart::ThreadState, "thread-state"},
    {ReadPart::Interpreter, "interpreter"},
    {ReadPart::Function, "function"},
    {ReadPart::Mutex, "mutex"},
    {ReadPart::CondVar, "condition-variable"},
    {ReadPart::GilObject, "gil-object"},
}};
constexpr std::string_view to_string(ReadPart p) { return name_in(kReadPartNames, p); }

// Why the last step could not be read.
enum class ReadWhy : std::uint8_t {
  None,             // nothing: all was read
  Unreadable,       // its memory could not be read
  PartlyUnreadable, // only part of it
  Implausible,      // its `name` ("length", "dk_size"; empty: itself) is `number`, which cannot be
  Invalid,          // its `name` ("kind") is `number`, which no such object has
  Inconsistent,     // a str's state says ascii with kind `number`
  NotReady,         // a legacy str not ready (wstr only)
  NotA,             // it is not what the step says (`name`: the type it has, when known)
  NoKey,            // the dict has no key `name`
  NotImported,      // sys.modules has no module `name`
  NoLayout,         // pyhang has no layout for it in CPython `name` (a version; empty: unknown)
  NoLength,         // no length for an object of type `name`
  NoInstanceDict,   // the object has no instance dict (none at a fixed offset, `number` 1: none at all)
  TooManyDigits,    // an int of `number` digits, more than `limit` read
  TooLarge,         // an int that does not fit 64 bits (`number` digits, when known)
  WideDigit,        // an int with a digit wider than `limit` bits
  Unsupported,      // its `name` ("PyLong_SHIFT") is `number`, which pyhang does not read
  ReadLimit,        // the read limit was reached (`limit` reads; `at`: the address it was reached at)
  Loops,            // a chain of them loops at `at`
  StoppedAfter,     // more of them than `limit`: the rest not read
  NoFrame,          // a coroutine with no frame
  NoPythonState,    // no Python state: the interpreter's status is `name`
  NotFound,         // it was not found (a lock: `at` the futex, in none of `number` lock objects the
                    // innermost `limit` frames reference; `at` 0: no futex, and no lock object either)
  OwnerNoThread,    // its owner, pthread_t `at`, is no thread of this process
  AwaitsItself,     // a task awaits itself (stale memory)
  NoTaskType,       // _asyncio's module state has no Task type where the `name` row says
  // Decoding the code that uses 3.6's GIL statics:
  Undecodable,      // no instruction decodes at offset `number` (`limit` 1: the code read ends there)
  NotWritable,      // not a writable static of the object
  MutexAndCond,     // used both as a mutex and as a condition variable
  Overlaps,         // it overlaps the object at `at`
  Ambiguous,        // several candidates for one
  MoreThanExpected, // `number` more of them than expected: ignored
  // The analysis's own, never a reader's: the collector gave no answer at all (a replayed snapshot
  // without one).
  NotCollected,
};

inline constexpr std::array<Named<ReadWhy>, 32> kReadWhyNames{{
    {ReadWhy::Unreadable, "unreadable"},
    {ReadWhy::PartlyUnreadable, "partly-unreadable"},
    {ReadWhy::Implausible, "implausible"},
    {ReadWhy::Invalid, "invalid"},
    {ReadWhy::Inconsistent, "inconsistent"},
    {ReadWhy::NotReady, "not-ready"},
    {ReadWhy::NotA, "not-a"},
    {ReadWhy::NoKey, "no-key"},
    {ReadWhy::NotImported, "not-imported"},
    {ReadWhy::NoLayout, "no-layout"},
    {ReadWhy::NoLength, "no-length"},
    {ReadWhy::NoInstanceDict, "no-instance-dict"},
    {ReadWhy::TooManyDigits, "too-many-digits"},
    {ReadWhy::TooLarge, "too-large"},
    {ReadWhy::WideDigit, "wide-digit"},
    {ReadWhy::Unsupported, "unsupported"},
    {ReadWhy::ReadLimit, "read-limit"},
    {ReadWhy::Loops, "loops"},
    {ReadWhy::StoppedAfter, "stopped-after"},
    {ReadWhy::NoFrame, "no-frame"},
    {ReadWhy::NoPythonState, "no-python-state"},
    {ReadWhy::NotFound, "not-found"},
    {ReadWhy::OwnerNoThread, "owner-no-thread"},
    {ReadWhy::AwaitsItself, "awaits-itself"},
    {ReadWhy::NoTaskType, "no-task-type"},
    {ReadWhy::Undecodable, "undecodable"},
    {ReadWhy::NotWritable, "not-writable"},
    {ReadWhy::MutexAndCond, "mutex-and-condition-variable"},
    {ReadWhy::Overlaps, "overlaps"},
    {ReadWhy::Ambiguous, "ambiguous"},
    {ReadWhy::MoreThanExpected, "more-than-expected"},
    {ReadWhy::NotCollected, "not-collected"},
}};
constexpr std::string_view to_string(ReadWhy w) { return name_in(kReadWhyNames, w); }

struct ReadStep {
  ReadPart part = ReadPart::Object;
  Addr address = 0;     // 0: none (a field, a module by name)
  std::string name;     // a field, key, variable, module or attribute name
  std::int64_t number = 0;  // an LWP (a thread, a thread's task list)
  bool operator==(const ReadStep&) const = default;
};

struct ReadProblem {
  std::vector<ReadStep> path;  // outermost first; the last is what could not be read
  ReadWhy why = ReadWhy::None;
  std::optional<std::int64_t> number;  // the value that is implausible, invalid, ... (see ReadWhy)
  std::int64_t limit = 0;      // the bound that was passed
  Addr at = 0;                 // where a chain loops, where the read limit was reached
  std::string name;            // a key, a version, a type (see ReadWhy)
  std::int64_t count = 0;      // how many problems like it in all, when more than one was counted

  bool empty() const { return why == ReadWhy::None; }
  explicit operator bool() const { return !empty(); }
  bool operator==(const ReadProblem&) const = default;

  // The problem reached through `part` at `address`: it goes first in the path.
  ReadProblem& within(ReadPart part, Addr address = 0, std::string step_name = {}, std::int64_t step_number = 0) {
    path.insert(path.begin(), ReadStep{part, address, std::move(step_name), step_number});
    return *this;
  }
  // The last step, when there is one.
  const ReadStep* last() const { return path.empty() ? nullptr : &path.back(); }
};

// `why` about `part` at `address`.
inline ReadProblem unread(ReadPart part, Addr address, ReadWhy why = ReadWhy::Unreadable) {
  ReadProblem p;
  p.path.push_back({part, address, {}, 0});
  p.why = why;
  return p;
}
inline ReadProblem unread_named(ReadPart part, Addr address, ReadWhy why, std::string name,
                                std::optional<std::int64_t> number = std::nullopt) {
  ReadProblem p = unread(part, address, why);
  p.name = std::move(name);
  p.number = number;
  return p;
}
// `why` about field `field` of `part` at `address` ("str at A: characters unreadable").
inline ReadProblem unread_field(ReadPart part, Addr address, const char* field, ReadWhy why = ReadWhy::Unreadable) {
  ReadProblem p = unread(part, address, why);
  p.path.push_back({ReadPart::Field, 0, field, 0});
  return p;
}

// No Python state to read: the interpreter's status is `status` ("starting", "unsupported", ...).
inline ReadProblem no_python_state(std::string_view status) {
  ReadProblem p;
  p.why = ReadWhy::NoPythonState;
  p.name = std::string(status);
  return p;
}

// Keeps the first problem: `p` when none was noted yet.
inline void note(ReadProblem& first, ReadProblem p) {
  if (first.empty()) first = std::move(p);
}

}  // namespace pyhang::cpython
