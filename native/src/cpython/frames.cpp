// Frame walkers: the PyFrameObject chain (f_back, <= 3.10) and the
// _PyInterpreterFrame chain (previous, 3.11+).  Both are bounded and
// cycle-checked; a bad link ends the walk with a one-line problem.  A frame
// that is readable but whose code object is not is one unknown frame: the
// walk goes on to the older frames, which its link still reaches.

#include <algorithm>
#include <deque>
#include <iterator>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython::detail {

namespace {

// "<unknown>": one string for every frame whose code cannot be named.
const SharedText& unknown_text() {
  static const SharedText text("<unknown>");
  return text;
}

// The frame whose code object cannot be read: it stays in the stack, as
// one frame nobody can name, so the frames older than it keep their place.
PyFrame unknown_frame(Addr frame, Addr code) {
  PyFrame out;
  out.function = unknown_text();
  out.file = unknown_text();
  out.frame = frame;
  out.code = code;
  return out;
}

// The walk's problem: the first one found, and how many frames were unknown.
void note_unknown(FrameWalk& walk, ReadProblem problem, Addr frame, int& unknown) {
  if (++unknown == 1 && walk.problem.empty()) walk.problem = std::move(problem.within(ReadPart::Frame, frame));
}

// How many frames had unreadable code, when more than one did.
void finish(FrameWalk& walk, int unknown) {
  if (unknown > 1) walk.problem.count = unknown;
}

// The frames a walk keeps: the first `inner` in `inner_frames`, then, with
// `outer` > 0, the last `outer` in a ring; the frames pushed out of the
// ring are counted.  last(): the frame pushed last (null before any).
class Kept {
 public:
  Kept(std::vector<PyFrame>& inner_frames, std::size_t inner, std::size_t outer)
      : inner_frames_(inner_frames), inner_(inner), outer_(outer) {}
  void push(PyFrame f) {
    if (inner_frames_.size() < inner_ || outer_ == 0) {
      inner_frames_.push_back(std::move(f));
      return;
    }
    if (ring_.size() == outer_) {
      ring_.pop_front();
      ++omitted_;
    }
    ring_.push_back(std::move(f));
  }
  PyFrame* last() {
    if (!ring_.empty()) return &ring_.back();
    return inner_frames_.empty() ? nullptr : &inner_frames_.back();
  }
  // walk.frames: the innermost, then the outermost; what was left out between.
  void finish(FrameWalk& walk) {
    walk.frames.reserve(inner_frames_.size() + ring_.size());
    walk.frames.assign(std::make_move_iterator(inner_frames_.begin()), std::make_move_iterator(inner_frames_.end()));
    walk.frames.insert(walk.frames.end(), std::make_move_iterator(ring_.begin()), std::make_move_iterator(ring_.end()));
    if (omitted_ > 0) {
      walk.omitted = omitted_;
      walk.omitted_at = inner_frames_.size();
    }
  }

 private:
  std::vector<PyFrame>& inner_frames_;
  std::size_t inner_, outer_;
  std::deque<PyFrame> ring_;
  std::size_t omitted_ = 0;
};

// The guard of a walk: past max_frames only when the outermost frames are kept too.
std::size_t walk_limit(const Options& o, bool both_ends) {
  return both_ends && o.outermost_frames > 0 ? std::max(o.max_walk, o.max_frames) : o.max_frames;
}

// Fills function/file/line from a code object; false when it is not one.
bool describe(CodeCache& codes, Addr code_addr, std::int64_t byte_offset, PyFrame& out, ReadProblem& problem) {
  const CodeInfo& code = codes.get(code_addr);
  out.code = code_addr;
  if (!code.ok) {
    problem = code.problem;
    return false;
  }
  out.function = code.name.empty() ? unknown_text() : code.name;
  out.file = code.filename.empty() ? unknown_text() : code.filename;
  Position at = codes.position(code, byte_offset);
  out.line = at.line;
  out.end_line = at.end_line;
  out.col = at.col;
  out.end_col = at.end_col;
  if (!code.problem.empty() && problem.empty()) problem = code.problem;
  return true;
}

// <= 3.10: tstate->frame, then f_back.  f_lasti counts layout.lasti_unit
// bytes; while a trace function is set, f_lineno is kept exact by CPython.
FrameWalk walk_frame_objects(ObjectReader& objects, CodeCache& codes, Addr top, bool both_ends) {
  const Layout& l = objects.layout();
  const Options& o = objects.options();
  FrameWalk walk;
  ChainGuard guard(walk_limit(o, both_ends), ReadPart::Frame);
  std::vector<PyFrame> inner;
  Kept kept(inner, o.max_frames, both_ends ? o.outermost_frames : 0);
  const std::size_t span = span_of({l.frame_back, l.frame_code, l.frame_lasti, l.frame_lineno, l.frame_trace});
  int unknown = 0;
  for (Addr f = top; f != 0; ) {
    if (auto stop = guard.next(f)) {
      walk.problem = stop;
      break;
    }
    RemoteStruct fr;
    if (!plausible_pointer(f) || !fr.load(objects.memory(), f, span)) {
      walk.problem = unread(ReadPart::Frame, f);
      break;
    }
    PyFrame out;
    out.frame = f;
    auto lasti = fr.get<std::int32_t>(l.frame_lasti).value_or(-1);
    ReadProblem problem;
    if (!describe(codes, fr.ptr(l.frame_code), std::int64_t{lasti} * l.lasti_unit, out, problem)) {
      note_unknown(walk, std::move(problem), f, unknown);
      kept.push(unknown_frame(f, fr.ptr(l.frame_code)));
      f = fr.ptr(l.frame_back);
      continue;
    }
    if (fr.ptr(l.frame_trace) != 0) {
      auto lineno = fr.get<std::int32_t>(l.frame_lineno);
      if (lineno && *lineno > 0) out.line = *lineno;  // (<= 3.10: no columns to keep in step)
    }
    if (walk.problem.empty() && !problem.empty()) walk.problem = std::move(problem);
    kept.push(std::move(out));
    f = fr.ptr(l.frame_back);
  }
  kept.finish(walk);
  finish(walk, unknown);
  return walk;
}

// 3.11+: _PyInterpreterFrame linked by previous.  As CPython does, frames
// owned by the C stack or the interpreter (3.12+ entry shims) and incomplete frames (whose
// instruction pointer is before the code's first traceable instruction)
// are skipped.  Entry frames: is_entry (3.11), or the frame just inside a
// C-stack shim (3.12+).
FrameWalk walk_interpreter_frames(ObjectReader& objects, CodeCache& codes, Addr top, bool both_ends) {
  const Layout& l = objects.layout();
  const Options& o = objects.options();
  FrameWalk walk;
  ChainGuard guard(walk_limit(o, both_ends), ReadPart::Frame);
  const std::size_t span = span_of({l.iframe_code, l.iframe_previous, l.iframe_instr, l.iframe_owner, l.iframe_is_entry});
  // 3.13's slot is f_executable, which may hold another object than code.
  const bool executable_slot = l.has(l.iframe_executable);
  // Frames go to a buffer each walk of this thread reuses, then to one
  // vector of the exact size: no growing and moving for every thread.
  static thread_local std::vector<PyFrame> frames;
  frames.clear();
  Kept kept(frames, o.max_frames, both_ends ? o.outermost_frames : 0);
  int unknown = 0;
  RemoteStruct fr;  // one buffer for every frame's bytes
  for (Addr f = top; f != 0; ) {
    if (auto stop = guard.next(f)) {
      walk.problem = stop;
      break;
    }
    if (!plausible_pointer(f) || !fr.load(objects.memory(), f, span)) {
      walk.problem = unread(ReadPart::Frame, f);
      break;
    }
    Addr previous = fr.ptr(l.iframe_previous);
    auto owner = fr.get<std::int8_t>(l.iframe_owner);
    if (owner && l.has(l.owner_cstack) && *owner >= l.owner_cstack) {
      if (PyFrame* newer = kept.last()) newer->entry_frame = true;
      f = previous;
      continue;
    }
    Addr code_addr = l.untag(fr.ptr(l.iframe_code));
    const CodeInfo& code = codes.get(code_addr);
    if (!code.ok) {
      if (executable_slot && code.reason == ErrorReason::NotCodeObject) {  // not a Python function's frame
        f = previous;
        continue;
      }
      note_unknown(walk, code.problem, f, unknown);
      kept.push(unknown_frame(f, code_addr));
      f = previous;
      continue;
    }
    Addr instr = fr.ptr(l.iframe_instr);
    std::int64_t offset = static_cast<std::int64_t>(instr - code.code_start);
    bool generator = owner && *owner == l.owner_generator;
    if (!generator && offset < std::int64_t{code.firsttraceable} * 2) {  // incomplete: not yet started
      f = previous;
      continue;
    }
    PyFrame out;
    out.frame = f;
    ReadProblem problem;
    describe(codes, code_addr, offset, out, problem);
    out.entry_frame = fr.get<std::uint8_t>(l.iframe_is_entry).value_or(0) != 0;
    if (walk.problem.empty() && !problem.empty()) walk.problem = std::move(problem);
    kept.push(std::move(out));
    f = previous;
  }
  kept.finish(walk);
  finish(walk, unknown);
  return walk;
}

}  // namespace

FrameWalk walk_frames(ObjectReader& objects, CodeCache& codes, Addr top_frame, bool both_ends) {
  switch (objects.layout().frame_model) {
    case FrameModel::FrameObject: return walk_frame_objects(objects, codes, top_frame, both_ends);
    case FrameModel::InterpreterFrame: return walk_interpreter_frames(objects, codes, top_frame, both_ends);
  }
  return {};
}

}  // namespace pyhang::cpython::detail
