// Two reads of a running interpreter compared (state_moves): what a reader
// that never stops the process must not present as certain.
#include <algorithm>
#include <unordered_map>

#include "pyhang/cpython/inspect.hpp"

namespace pyhang::cpython {

namespace {

bool same_frames(const std::vector<PyFrame>& a, const std::vector<PyFrame>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const PyFrame& x, const PyFrame& y) {
    return x.line == y.line && x.entry_frame == y.entry_frame && x.function == y.function && x.file == y.file;
  });
}

// The native TIDs of the threads that say they hold a GIL (0 for one not known), sorted.
std::vector<int> holders(const PythonState& s) {
  std::vector<int> out;
  for (const auto& t : s.threads)
    if (t.holds_gil) out.push_back(t.native_tid.value_or(0));
  std::sort(out.begin(), out.end());
  return out;
}

bool same_gils(const PythonState& a, const PythonState& b) {
  return std::equal(a.gils.begin(), a.gils.end(), b.gils.begin(), b.gils.end(),
                    [](const GilInfo& x, const GilInfo& y) {
                      return x.address == y.address && x.locked == y.locked && x.holder_tstate == y.holder_tstate;
                    }) &&
         holders(a) == holders(b);
}

}  // namespace

StateMoves state_moves(const PythonState& first, const PythonState& again) {
  StateMoves out;
  std::unordered_map<int, const PyThreadInfo*> later;  // the last of `again`'s threads with each TID
  for (const auto& t : again.threads)
    if (t.native_tid) later[*t.native_tid] = &t;
  static const std::vector<PyFrame> kNone;
  for (const auto& t : first.threads) {
    if (!t.native_tid || *t.native_tid == 0) continue;
    auto it = later.find(*t.native_tid);
    if (!same_frames(t.frames, it == later.end() ? kNone : it->second->frames)) out.moved.push_back(*t.native_tid);
  }
  out.gil_moved = !same_gils(first, again);
  return out;
}

}  // namespace pyhang::cpython
