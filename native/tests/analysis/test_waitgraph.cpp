// The wait-for graph: cycles, and the driver-lock heuristics.
#include <catch2/catch.hpp>

#include "pyhang/analysis/waitgraph.hpp"

using namespace pyhang::waitgraph;

namespace {
Edge edge(int w, int o, std::string kind = "mutex", pyhang::OwnerSource source = pyhang::OwnerSource::LockWord) {
  Edge e;
  e.waiter = w;
  e.owner = o;
  e.kind = std::move(kind);
  e.source = source;
  return e;
}
}  // namespace

TEST_CASE("an ABBA pair is one cycle, reported from its smallest TID") {
  auto c = find_cycles({edge(20, 10), edge(10, 20)});
  REQUIRE(c.cycles.size() == 1);
  CHECK(c.cycles[0].threads == std::vector<int>{10, 20});
  CHECK(c.cycles[0].edges[0].waiter == 10);
  CHECK(c.cycles[0].edges[0].owner == 20);
  CHECK(c.cycles[0].certain);
}

TEST_CASE("every cycle is found, not only the first one a search meets") {
  // Two cycles sharing thread 1, and a separate three-thread cycle.
  auto c = find_cycles({edge(1, 2), edge(2, 1), edge(1, 3), edge(3, 1), edge(7, 8), edge(8, 9), edge(9, 7),
                        edge(5, 1)});
  REQUIRE(c.cycles.size() == 3);
  CHECK(c.cycles[2].threads == std::vector<int>{7, 8, 9});
  CHECK_FALSE(c.truncated);
}

TEST_CASE("waiting without a cycle is no deadlock") {
  CHECK(find_cycles({edge(1, 2), edge(2, 3), edge(4, 3)}).cycles.empty());
  CHECK(find_cycles({}).cycles.empty());
}

TEST_CASE("a cycle that needs a heuristic edge is likely, and a certain edge is preferred") {
  auto c = find_cycles({edge(1, 8, "gil", pyhang::OwnerSource::GilState), edge(8, 1, "rwlock-write", pyhang::OwnerSource::Heuristic)});
  REQUIRE(c.cycles.size() == 1);
  CHECK_FALSE(c.cycles[0].certain);
  auto d = find_cycles({edge(1, 8, "rwlock-write", pyhang::OwnerSource::Heuristic), edge(1, 8, "rwlock-write", pyhang::OwnerSource::LockWord),
                        edge(8, 1, "gil", pyhang::OwnerSource::GilState)});
  REQUIRE(d.cycles.size() == 1);
  CHECK(d.cycles[0].certain);
}

TEST_CASE("the cycle search is bounded on a dense graph") {
  std::vector<Edge> edges;
  for (int a = 1; a <= 12; ++a)
    for (int b = 1; b <= 12; ++b)
      if (a != b) edges.push_back(edge(a, b));
  auto c = find_cycles(edges, 50);
  CHECK(c.cycles.size() == 50);
  CHECK(c.truncated);
}

TEST_CASE("a read-held driver rwlock's likely holder is the thread that called back into Python from the driver") {
  ThreadFacts waiter{1, "python3", {{"", "/lib/libc.so.6"}, {"pthread_rwlock_wrlock", "/lib/libc.so.6"},
                                    {"", "/usr/lib/libcuda.so.1"}, {"_PyEval_EvalFrameDefault", "/usr/bin/python3"}},
                     "rwlock-write", 0x1000, {}, false};
  ThreadFacts callback{8, "python3", {{"", "/lib/libc.so.6"}, {"PyGILState_Ensure", "/usr/bin/python3"},
                                      {"", "/usr/lib/libffi.so.8"}, {"", "/usr/lib/libcuda.so.1"}},
                       "gil", std::nullopt, {1}, true};
  ThreadFacts helper{9, "cuda-EvtHandlr", {{"", "/lib/libc.so.6"}, {"", "/usr/lib/libcuda.so.1"}}, "futex", 0x2000,
                     {}, false};
  ThreadFacts bystander{10, "python3", {{"", "/lib/libc.so.6"}, {"", "/usr/bin/python3"}}, "semaphore", 0x3000, {},
                        false};
  auto edges = likely_holders({waiter, callback, helper, bystander});
  REQUIRE(edges.size() == 1);
  CHECK(edges[0].waiter == 1);
  CHECK(edges[0].owner == 8);
  CHECK(edges[0].heuristic());
  CHECK(edges[0].evidence.find("PyGILState_Ensure") != std::string::npos);
  CHECK(edges[0].evidence.find("driver library") != std::string::npos);
  // With it, the GIL edge closes a likely cycle.
  edges.push_back(edge(8, 1, "gil", pyhang::OwnerSource::GilState));
  auto c = find_cycles(edges);
  REQUIRE(c.cycles.size() == 1);
  CHECK_FALSE(c.cycles[0].certain);
}

TEST_CASE("a lock whose owner is recorded gets no heuristic edge, and driver helper threads are never suspects") {
  ThreadFacts waiter{1, "", {{"", "/usr/lib/libcuda.so.1"}}, "mutex", 0x10, {5}, false};
  ThreadFacts other{2, "", {{"", "/usr/lib/libcuda.so.1"}}, "futex", 0x20, {}, false};
  auto edges = likely_holders({waiter, other});
  for (const auto& e : edges) CHECK(e.waiter != 1);  // thread 1's owner is recorded
  REQUIRE(edges.size() == 1);                        // thread 2's futex records none: thread 1 is inside the same library
  CHECK(edges[0].evidence.find("may hold") != std::string::npos);
  CHECK(is_driver_helper_thread("cuda-EvtHandlr"));
  CHECK_FALSE(is_driver_helper_thread("python3"));
  CHECK(is_driver_library("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  CHECK(is_driver_library("/opt/nccl/lib/libnccl.so.2"));
  CHECK_FALSE(is_driver_library("/usr/lib/libc.so.6"));
}
