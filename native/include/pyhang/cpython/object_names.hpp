// Which variable of the program refers to an object a thread waits on, so
// that reports name it as the program does: a global of `__main__`
// (`__main__.config_lock`), an attribute of an instance such a global refers
// to (`__main__.cache._lock`), an attribute of an instance a local of a
// thread's innermost frames refers to (`self._lock` of `Cache at 0x…`), or a
// global of another imported module, directly or through an instance
// (`mymodule.LOCK`, `mymodule.pool._lock`).  The first of these that finds
// an object is its name.
//
// thread_references() asks the other way round: which threads reach an
// object from their frames (can any thread still put to a queue?).
//
// The search is bounded (ObjectNameLimits): modules, globals per module,
// instances whose attributes are read, attributes per instance, frames per
// thread; every read goes through the Python object reader (bounded,
// garbage gives nothing).  The result is a path, not a sentence: the
// renderer words it (pyhang.render.names.object_name).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

struct ObjectPath {
  std::string module;      // the module whose global leads to the object; empty for a frame's local
  std::string variable;    // that global, or the local's name
  std::string attribute;   // the instance attribute that is the object; empty when the variable is
  std::string owner_type;  // the instance's type name (with an attribute)
  Addr owner = 0;          // the instance (with an attribute)
  int tid = 0;             // a local: the thread whose frame has it
  std::string function;    // a local: that frame's function
};

struct ObjectNameLimits {
  std::size_t modules = 256;         // modules of sys.modules searched after __main__
  std::size_t globals = 1 << 14;     // globals read per module
  std::size_t instances = 2048;      // instances whose attributes are read, in all
  std::size_t attributes = 128;      // attributes read per instance
  std::size_t frames = 4;            // innermost frames of each thread whose locals are read
};

// The path of each of `wanted` that some variable reaches; absent when none
// does (within the limits).  Never throws on bad target memory.
std::unordered_map<Addr, ObjectPath> object_names(MemoryReader& memory, const PythonState& state,
                                                  const std::vector<Addr>& wanted,
                                                  const ObjectNameLimits& limits = {});

// Which threads can reach each of `wanted` from their own Python frames: a
// local (a cell's contents included) of any of their frames, innermost
// first within limits.frames (fewer a thread when the threads are many:
// limits.total_frames bounds the frames read in all), is the object or an instance one of whose
// attributes is (limits.instances and .attributes bound the reads).  A
// module body's locals are its globals, which every thread can reach: they
// are not counted.
// `complete` is false when a thread had more frames than were read, or a
// frame's locals could not all be read: then a missing thread proves nothing.
struct ThreadReferences {
  std::unordered_map<Addr, std::vector<int>> by_object;  // TIDs, in the state's order
  bool complete = true;
};
struct ReferenceLimits {
  std::size_t frames = 128;        // frames read per thread
  // frames read in all: with many threads each gets total_frames / threads, never fewer than least_frames
  std::size_t total_frames = 16384;
  std::size_t least_frames = 4;
  std::size_t instances = 4096;    // instances whose attributes are read, in all
  std::size_t attributes = 128;    // attributes read per instance
};
ThreadReferences thread_references(MemoryReader& memory, const PythonState& state, const std::vector<Addr>& wanted,
                                   const ReferenceLimits& limits = {});

}  // namespace pyhang::cpython
