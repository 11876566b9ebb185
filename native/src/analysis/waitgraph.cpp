#include "pyhang/analysis/waitgraph.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/libraries.hpp"

namespace pyhang::waitgraph {

namespace {

// Steps of the cycle search before it gives up (a sane wait-for graph has a
// handful of edges per thread; this bounds a pathological one).
constexpr std::size_t kMaxSteps = 1'000'000;

std::string basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The C library itself, whose lock functions every waiter calls: never the
// "library that owns the lock".
bool is_system_library(const std::string& path) { return glibc::is_glibc(path); }

bool is_python_runtime(const std::string& path) {
  std::string b = basename(path);
  return starts_with(b, "libpython") || starts_with(b, "python") || starts_with(b, "_ctypes") ||
         starts_with(b, "_cffi_backend");
}

// The library whose code took the lock: the first frame, from the top,
// outside the C library.
std::string lock_library(const ThreadFacts& t) {
  for (const auto& f : t.frames)
    if (!f.library.empty() && !is_system_library(f.library)) return f.library;
  return {};
}

struct Search {
  const std::map<int, std::vector<const Edge*>>& out;
  int start;
  std::vector<int> path;
  std::set<int> on_path;
  std::vector<std::vector<int>> found;
  std::size_t max_cycles;
  std::size_t steps = 0;
  bool truncated = false;

  void dfs(int node) {
    if (truncated) return;
    if (++steps > kMaxSteps || found.size() >= max_cycles) {
      truncated = true;
      return;
    }
    auto it = out.find(node);
    if (it == out.end()) return;
    std::set<int> seen_next;
    for (const Edge* e : it->second) {
      int next = e->owner;
      if (!seen_next.insert(next).second) continue;  // parallel edges: one cycle
      if (next == start) {
        found.push_back(path);
      } else if (next > start && !on_path.count(next)) {
        path.push_back(next);
        on_path.insert(next);
        dfs(next);
        on_path.erase(next);
        path.pop_back();
      }
    }
  }
};

}  // namespace

Cycles find_cycles(const std::vector<Edge>& edges, std::size_t max_cycles) {
  std::map<int, std::vector<const Edge*>> out;
  for (const auto& e : edges)
    out[e.waiter].push_back(&e);
  // Certain edges first, so the one kept between two threads is certain when one exists.
  for (auto& [tid, list] : out)
    std::stable_sort(list.begin(), list.end(), [](const Edge* a, const Edge* b) { return !a->heuristic() && b->heuristic(); });

  Cycles result;
  std::set<int> nodes;
  for (const auto& e : edges) {
    nodes.insert(e.waiter);
    nodes.insert(e.owner);
  }
  for (int start : nodes) {
    Search s{out, start, {start}, {start}, {}, max_cycles - result.cycles.size()};
    s.dfs(start);
    for (auto& threads : s.found) {
      Cycle c;
      c.threads = threads;
      for (std::size_t i = 0; i < threads.size(); ++i) {
        int from = threads[i], to = threads[(i + 1) % threads.size()];
        for (const Edge* e : out[from])
          if (e->owner == to) {
            c.edges.push_back(*e);
            c.certain = c.certain && !e->heuristic();
            break;
          }
      }
      result.cycles.push_back(std::move(c));
    }
    if (s.truncated) {
      result.truncated = true;
      break;
    }
  }
  return result;
}

bool is_driver_library(const std::string& path) {
  std::string b = basename(path);
  for (const char* p : {"libcuda.so", "libcudart.so", "libnccl.so", "libucp.so", "libucs.so", "libuct.so",
                        "libucx", "libnvidia-", "libcuda_"})
    if (starts_with(b, p)) return true;
  return false;
}

bool is_driver_helper_thread(const std::string& name) {
  // Threads the CUDA driver and its relatives start for their own work.
  for (const char* p : {"cuda-EvtHandlr", "cuda-EvtHandl", "cuda0000", "cuda-", "nccl", "ucx-", "ucp-"})
    if (starts_with(name, p)) return true;
  return false;
}

std::vector<Edge> likely_holders(const std::vector<ThreadFacts>& threads) {
  std::vector<Edge> out;
  for (const auto& waiter : threads) {
    const std::string& k = waiter.blocked_kind;
    const glibc::WaitKind kind = glibc::parse_wait_kind(k).value_or(glibc::WaitKind::None);
    bool unrecorded_owner =
        waiter.owners.empty() && (glibc::is_rwlock(kind) || kind == glibc::WaitKind::Futex || kind == glibc::WaitKind::Mutex);
    // Driver helper threads sleep on their own internal words by design.
    if (!unrecorded_owner || is_driver_helper_thread(waiter.name)) continue;
    std::string lib = lock_library(waiter);
    if (lib.empty() || is_python_runtime(lib)) continue;
    std::string lib_name = basename(lib);
    std::string driver = is_driver_library(lib) ? " (a driver library)" : "";

    // Threads inside the same library and blocked elsewhere; the strongest
    // are those that entered Python from inside it and wait for the GIL.
    std::vector<std::pair<const ThreadFacts*, std::string>> strong, weak;
    for (const auto& t : threads) {
      if (t.tid == waiter.tid || t.blocked_kind.empty() || is_driver_helper_thread(t.name)) continue;
      std::size_t lib_frame = t.frames.size(), callback_frame = t.frames.size();
      for (std::size_t i = 0; i < t.frames.size(); ++i) {
        const auto& f = t.frames[i];
        if (lib_frame == t.frames.size() && f.library == lib) lib_frame = i;
        if (callback_frame == t.frames.size() &&
            (f.function == "PyGILState_Ensure" || f.function.rfind("_ctypes_callproc", 0) == 0 ||
             f.function == "_CallPythonObject" || f.function == "closure_fcn"))
          callback_frame = i;
      }
      if (lib_frame == t.frames.size()) continue;
      std::string where = "frame #" + std::to_string(lib_frame) + " is in " + lib_name;
      if (t.waits_for_gil && callback_frame < lib_frame) {
        strong.push_back({&t, where + ", which called back into Python (" + t.frames[callback_frame].function +
                                  " at frame #" + std::to_string(callback_frame) +
                                  "), and it now waits for the GIL: it entered " + lib_name +
                                  " and has not left, so it likely holds the lock" + driver});
      } else if (t.waits_for_gil) {
        strong.push_back({&t, where + " and it waits for the GIL: it likely holds the lock it took inside " +
                                  lib_name + driver});
      } else {
        weak.push_back({&t, where + " and it is blocked (" + t.blocked_kind + "): it may hold the lock" + driver});
      }
    }
    auto& chosen = strong.empty() ? weak : strong;
    for (auto& [t, evidence] : chosen) {
      Edge e;
      e.waiter = waiter.tid;
      e.owner = t->tid;
      e.kind = k;
      e.address = waiter.blocked_address;
      e.source = OwnerSource::Heuristic;
      e.evidence = evidence;
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace pyhang::waitgraph
