// The wait-for graph of a process: an edge from each blocked thread to each
// thread that holds what it waits for, and every deadlock cycle in it.
//
// Edges come from every decoder (lock words, the GIL state, Python RLock
// owners) and from the driver-lock heuristics below; a cycle that needs a
// heuristic edge is "likely", never "certain".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/base/confidence.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::waitgraph {

struct Edge {
  int waiter = 0;
  int owner = 0;
  std::string kind;              // what is waited for: "mutex", "rwlock-write", "gil", "py-rlock", ...
  std::optional<Addr> address;   // of the lock, when it has one
  OwnerSource source = OwnerSource::Unknown;  // how the owner is known
  std::string evidence;          // for heuristic edges: why
  bool heuristic() const { return source == OwnerSource::Heuristic; }
};

struct Cycle {
  std::vector<int> threads;      // in wait order: threads[i] waits for threads[i+1] (and the last for the first)
  std::vector<Edge> edges;       // edges[i]: threads[i] -> threads[(i+1) % n]
  bool certain = true;           // false when any edge is heuristic
};

struct Cycles {
  std::vector<Cycle> cycles;
  bool truncated = false;        // more cycles than the limit
};

// Every elementary cycle (depth-first from each thread, visiting only larger
// TIDs, so each cycle is found once), starting at its
// smallest TID.  Between the same two threads, a lock-word/GIL edge is
// preferred to a heuristic one.  Bounded by max_cycles.
Cycles find_cycles(const std::vector<Edge>& edges, std::size_t max_cycles = 1000);

// --- driver-lock heuristics --------------------------------------------------

struct FrameFacts {
  std::string function;  // empty when no symbol covers the pc
  std::string library;   // path, empty when unknown
};

struct ThreadFacts {
  int tid = 0;
  std::string name;                // the OS thread name, may be empty
  std::vector<FrameFacts> frames;  // native frames, innermost first
  std::string blocked_kind;        // what it waits for ("" when not blocked): a glibc::WaitKind name, "gil", "py-lock", ...
  std::optional<Addr> blocked_address;
  std::vector<int> owners;         // known owners of what it waits for
  bool waits_for_gil = false;
};

// Libraries whose internal locks are the "driver lock" of case 5 (CUDA
// driver and runtime, NCCL, UCX).  Matched on the file name.
bool is_driver_library(const std::string& path);
// Helper threads drivers start for themselves (e.g. "cuda-EvtHandlr"):
// never suspects.
bool is_driver_helper_thread(const std::string& name);

// For each blocked thread whose lock records no owner (a read-held rwlock,
// a lock without an owner field), the likely holders: other threads that
// are inside the same library (by frame) and blocked elsewhere — above all
// one that entered Python from inside that library (a ctypes/cffi callback,
// PyGILState_Ensure below the library's frames) and now waits for the GIL.
// Each edge has source "heuristic" and its evidence.
std::vector<Edge> likely_holders(const std::vector<ThreadFacts>& threads);

}  // namespace pyhang::waitgraph
