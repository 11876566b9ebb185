// Frame walkers: the PyFrameObject chain (f_back, <= 3.10) and the
// _PyInterpreterFrame chain (previous, 3.11+).  Both are bounded and
// cycle-checked; a bad link ends the walk with a one-line problem.  A frame
// that is readable but whose code object is not is one unknown frame: the
// walk goes on to the older frames, which its link still reaches.

#include <iterator>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython::detail {

namespace {

// The frame whose code object cannot be read: it stays in the stack, as
// one frame nobody can name, so the frames older than it keep their place.
PyFrame unknown_frame(Addr frame, Addr code) {
  PyFrame out;
  out.function = "<unknown>";
  out.file = "<unknown>";
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

// Fills function/file/line from a code object; false when it is not one.
bool describe(CodeCache& codes, Addr code_addr, std::int64_t byte_offset, PyFrame& out, ReadProblem& problem) {
  const CodeInfo& code = codes.get(code_addr);
  out.code = code_addr;
  if (!code.ok) {
    problem = code.problem;
    return false;
  }
  out.function = code.name.empty() ? "<unknown>" : code.name;
  out.file = code.filename.empty() ? "<unknown>" : code.filename;
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
FrameWalk walk_frame_objects(ObjectReader& objects, CodeCache& codes, Addr top) {
  const Layout& l = objects.layout();
  FrameWalk walk;
  ChainGuard guard(objects.options().max_frames, ReadPart::Frame);
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
      walk.frames.push_back(unknown_frame(f, fr.ptr(l.frame_code)));
      f = fr.ptr(l.frame_back);
      continue;
    }
    if (fr.ptr(l.frame_trace) != 0) {
      auto lineno = fr.get<std::int32_t>(l.frame_lineno);
      if (lineno && *lineno > 0) out.line = *lineno;  // (<= 3.10: no columns to keep in step)
    }
    if (walk.problem.empty() && !problem.empty()) walk.problem = std::move(problem);
    walk.frames.push_back(std::move(out));
    f = fr.ptr(l.frame_back);
  }
  finish(walk, unknown);
  return walk;
}

// 3.11+: _PyInterpreterFrame linked by previous.  As CPython does, frames
// owned by the C stack or the interpreter (3.12+ entry shims) and incomplete frames (whose
// instruction pointer is before the code's first traceable instruction)
// are skipped.  Entry frames: is_entry (3.11), or the frame just inside a
// C-stack shim (3.12+).
FrameWalk walk_interpreter_frames(ObjectReader& objects, CodeCache& codes, Addr top) {
  const Layout& l = objects.layout();
  FrameWalk walk;
  ChainGuard guard(objects.options().max_frames, ReadPart::Frame);
  const std::size_t span = span_of({l.iframe_code, l.iframe_previous, l.iframe_instr, l.iframe_owner, l.iframe_is_entry});
  // 3.13's slot is f_executable, which may hold another object than code.
  const bool executable_slot = l.has(l.iframe_executable);
  // Frames go to a buffer each walk of this thread reuses, then to one
  // vector of the exact size: no growing and moving for every thread.
  static thread_local std::vector<PyFrame> frames;
  frames.clear();
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
      if (!frames.empty()) frames.back().entry_frame = true;
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
      frames.push_back(unknown_frame(f, code_addr));
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
    frames.push_back(std::move(out));
    f = previous;
  }
  walk.frames.assign(std::make_move_iterator(frames.begin()), std::make_move_iterator(frames.end()));
  finish(walk, unknown);
  return walk;
}

}  // namespace

FrameWalk walk_frames(ObjectReader& objects, CodeCache& codes, Addr top_frame) {
  switch (objects.layout().frame_model) {
    case FrameModel::FrameObject: return walk_frame_objects(objects, codes, top_frame);
    case FrameModel::InterpreterFrame: return walk_interpreter_frames(objects, codes, top_frame);
  }
  return {};
}

}  // namespace pyhang::cpython::detail
