// state_moves: two reads of an interpreter that ran between them, compared
// on plain PythonStates.
#include <catch2/catch.hpp>

#include "pyhang/cpython/inspect.hpp"

using namespace pyhang::cpython;

namespace {

PyFrame frame(const char* function, int line, bool entry = false) {
  PyFrame f;
  f.function = function;
  f.file = "/app/worker.py";
  f.line = line;
  f.entry_frame = entry;
  return f;
}

PyThreadInfo thread(int tid, std::vector<PyFrame> frames, bool holds_gil = false) {
  PyThreadInfo t;
  t.native_tid = tid;
  t.frames = std::move(frames);
  t.holds_gil = holds_gil;
  return t;
}

PythonState state(std::vector<PyThreadInfo> threads, bool locked = true, pyhang::Addr holder = 0x1000) {
  PythonState s;
  GilInfo g;
  g.address = 0x5000;
  g.locked = locked;
  g.holder_tstate = holder;
  s.gils.push_back(g);
  s.threads = std::move(threads);
  return s;
}

}  // namespace

TEST_CASE("state_moves names the threads whose frames differ in function, line or entry, or are gone", "[cpython]") {
  PythonState first = state({thread(1, {frame("wait", 10), frame("main", 3, true)}),
                             thread(2, {frame("wait", 10)}), thread(3, {frame("run", 7)}),
                             thread(4, {frame("get", 20)}), thread(5, {frame("loop", 1)})});
  PyFrame other_frame_same_place = frame("wait", 10);
  other_frame_same_place.frame = 0xdead;  // another frame object at the same place: not a move
  PythonState again = state({thread(1, {frame("wait", 10), frame("main", 3, true)}),
                             thread(2, {other_frame_same_place}), thread(3, {frame("run", 8)}),
                             thread(4, {frame("get", 20, true)})});
  auto moves = state_moves(first, again);
  CHECK(moves.moved == std::vector<int>{3, 4, 5});
  CHECK_FALSE(moves.gil_moved);
}

TEST_CASE("state_moves says the GIL moved when its holder, its lock or the threads holding it differ", "[cpython]") {
  PythonState first = state({thread(1, {}, true), thread(2, {})});
  CHECK_FALSE(state_moves(first, state({thread(1, {}, true), thread(2, {})})).gil_moved);
  CHECK(state_moves(first, state({thread(1, {}, true), thread(2, {})}, true, 0x2000)).gil_moved);
  CHECK(state_moves(first, state({thread(1, {}, true), thread(2, {})}, false)).gil_moved);
  CHECK(state_moves(first, state({thread(1, {}), thread(2, {}, true)})).gil_moved);
}

TEST_CASE("a read kept as digests finds the same moves as one kept whole, compared either way", "[cpython]") {
  PythonState first = state({thread(1, {frame("wait", 10), frame("main", 3, true)}),
                             thread(2, {frame("wait", 10)}), thread(3, {frame("run", 7)}),
                             thread(4, {frame("get", 20)}), thread(5, {frame("loop", 1)}), thread(6, {})});
  PythonState again = state({thread(1, {frame("wait", 10), frame("main", 3, true)}),
                             thread(2, {frame("wait", 10)}), thread(3, {frame("run", 8)}),
                             thread(4, {frame("get", 20, true)}), thread(6, {})});
  auto digested = [](PythonState s) {  // as a read with Options::digest_frames keeps it
    for (auto& t : s.threads) {
      t.frames_digest = frames_digest(t.frames);
      t.frames.clear();
    }
    return s;
  };
  const std::vector<int> moved{3, 4, 5};
  CHECK(state_moves(first, again).moved == moved);
  CHECK(state_moves(first, digested(again)).moved == moved);
  CHECK(state_moves(digested(first), digested(again)).moved == moved);
  CHECK(state_moves(digested(first), again).moved == moved);
  // The digest tells apart what state_moves compares: the function, the file, the line, the entry, the order.
  std::vector<PyFrame> frames{frame("wait", 10), frame("main", 3, true)};
  auto differs = [&](auto change) {
    auto other = frames;
    change(other);
    return frames_digest(other) != frames_digest(frames);
  };
  CHECK(differs([](auto& f) { f[0].function = "wake"; }));
  CHECK(differs([](auto& f) { f[1].file = "/app/other.py"; }));
  CHECK(differs([](auto& f) { f[0].line = 11; }));
  CHECK(differs([](auto& f) { f[0].entry_frame = true; }));
  CHECK(differs([](auto& f) { std::swap(f[0], f[1]); }));
  CHECK(differs([](auto& f) { f.pop_back(); }));
  CHECK_FALSE(differs([](auto& f) { f[0].frame = 0xdead; }));  // another frame at the same place
}
