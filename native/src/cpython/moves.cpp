// Two reads of a running interpreter compared (state_moves): what a reader
// that never stops the process must not present as certain.
#include <algorithm>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "pyhang/cpython/inspect.hpp"

namespace pyhang::cpython {

namespace {

// One step of a 64-bit hash combination (boost's hash_combine constant, widened).
void mix(std::uint64_t& h, std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4); }

bool same_frames(const PyThreadInfo& x, const PyThreadInfo& y) {
  if (x.frames_digest || y.frames_digest) {  // a read that kept only its digest
    auto digest = [](const PyThreadInfo& t) { return t.frames_digest ? *t.frames_digest : frames_digest(t.frames); };
    return digest(x) == digest(y);
  }
  const auto& a = x.frames;
  const auto& b = y.frames;
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

std::uint64_t frames_digest(const std::vector<PyFrame>& frames) {
  std::uint64_t h = frames.size();
  std::hash<std::string_view> text;
  for (const auto& f : frames) {
    mix(h, text(f.function));
    mix(h, text(f.file));
    mix(h, static_cast<std::uint64_t>(static_cast<std::int64_t>(f.line)));
    mix(h, f.entry_frame ? 1 : 0);
  }
  return h;
}

StateMoves state_moves(const PythonState& first, const PythonState& again) {
  StateMoves out;
  std::unordered_map<int, const PyThreadInfo*> later;  // the last of `again`'s threads with each TID
  for (const auto& t : again.threads)
    if (t.native_tid) later[*t.native_tid] = &t;
  static const PyThreadInfo kNone;
  for (const auto& t : first.threads) {
    if (!t.native_tid || *t.native_tid == 0) continue;
    auto it = later.find(*t.native_tid);
    if (!same_frames(t, it == later.end() ? kNone : *it->second)) out.moved.push_back(*t.native_tid);
  }
  out.gil_moved = !same_gils(first, again);
  return out;
}

}  // namespace pyhang::cpython
