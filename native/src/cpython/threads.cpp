// From the roots (_PyRuntime, or 3.6's statics) to interpreters, their
// thread states and each thread's frames.  Every pointer is checked before
// it is trusted: a thread state must point back at its interpreter and at
// its predecessor; lists are bounded and cycle-checked.

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython {

namespace {

using detail::RemoteStruct;
using detail::span_of;
using detail::plausible_pointer;

constexpr Addr kPageBytes = 4096;

// The innermost frame of a thread state, by the layout's TopFrame rule.
Addr top_frame(MemoryReader& mem, const Layout& l, const RemoteStruct& ts, ReadProblem& problem) {
  switch (l.top_frame) {
    case TopFrame::ThreadStateFrameObject: return ts.ptr(l.tstate_frame);
    case TopFrame::ThreadState: return ts.ptr(l.tstate_current_frame);
    case TopFrame::CFrame: {
      Addr cframe = ts.ptr(l.tstate_cframe);
      if (cframe == 0) return 0;
      auto frame = mem.read_pointer(cframe + l.cframe_current_frame);
      if (!frame) problem = unread(ReadPart::CFrame, cframe);
      return frame.value_or(0);
    }
  }
  return 0;
}

struct RuntimeView {
  Addr interp_head = 0;
  Addr interp_main = 0;
  Addr tstate_current = 0;  // 0 when unknown or nobody holds the GIL
  bool tstate_current_known = false;
  Addr finalizing = 0;
  std::optional<std::int32_t> initialized;
  bool readable = true;
};

RuntimeView read_runtime(MemoryReader& mem, const Layout& l, const Roots& roots) {
  RuntimeView v;
  if (roots.runtime) {
    RemoteStruct rt;
    if (!rt.load(mem, roots.runtime,
                 span_of({l.runtime_initialized, l.runtime_finalizing, l.runtime_interpreters_head,
                          l.runtime_interpreters_main, l.runtime_tstate_current}))) {
      v.readable = false;
      return v;
    }
    v.interp_head = rt.ptr(l.runtime_interpreters_head);
    v.interp_main = rt.ptr(l.runtime_interpreters_main);
    v.finalizing = rt.ptr(l.runtime_finalizing);
    v.initialized = rt.get<std::int32_t>(l.runtime_initialized);
    if (l.has(l.runtime_tstate_current)) {
      v.tstate_current = rt.ptr(l.runtime_tstate_current);
      v.tstate_current_known = true;
    }
    return v;
  }
  // 3.6: separate statics, located by locate() from exported symbols.
  if (!roots.interp_head_var) {
    v.readable = false;
    return v;
  }
  auto head = mem.read_pointer(roots.interp_head_var);
  if (!head) {
    v.readable = false;
    return v;
  }
  v.interp_head = *head;
  if (roots.tstate_current_var) {
    if (auto cur = mem.read_pointer(roots.tstate_current_var)) {
      v.tstate_current = *cur;
      v.tstate_current_known = true;
    }
  }
  if (roots.finalizing_var) v.finalizing = mem.read_pointer(roots.finalizing_var).value_or(0);
  return v;
}

// The thread states of one interpreter: the list first, then each thread's
// frames, the pages of their top frames (and the page below each, where a
// stack of a few dozen frames goes on) read in one batch between.
void read_threads(detail::ObjectReader& objects, detail::CodeCache& codes, const detail::InterpInfo& interp,
                  Addr head, PythonState& st) {
  MemoryReader& mem = objects.memory();
  const Layout& l = objects.layout();
  const Options& opts = objects.options();
  const std::size_t span = span_of({l.tstate_prev, l.tstate_next, l.tstate_interp, l.tstate_frame, l.tstate_cframe,
                                    l.tstate_current_frame, l.tstate_thread_id, l.tstate_native_thread_id,
                                    l.tstate_state});
  detail::ChainGuard guard(opts.max_threads, ReadPart::ThreadState);
  std::vector<RemoteStruct> states;
  Addr prev = 0;
  for (Addr t = head; t != 0; ) {
    if (auto end = guard.end(t); end != detail::ChainEnd::None) {
      st.warnings.push_back({end == detail::ChainEnd::Loops ? StateProblem::ThreadsLoop : StateProblem::TooManyThreads,
                             t, 0, 0, interp.id, static_cast<std::int64_t>(opts.max_threads), {}, {}, {}});
      break;
    }
    RemoteStruct ts;
    if (!plausible_pointer(t) || !ts.load(mem, t, span)) {
      st.warnings.push_back({StateProblem::ThreadStateUnreadable, t, 0, 0, interp.id, 0, {}, {}, {}});
      break;
    }
    if (Addr back = ts.ptr(l.tstate_interp); back != interp.address) {
      st.warnings.push_back({StateProblem::ThreadOfOtherInterp, t, back, interp.address, 0, 0, {}, {}, {}});
      break;
    }
    if (Addr p = ts.ptr(l.tstate_prev); p != prev) {
      st.warnings.push_back({StateProblem::ThreadPrevMismatch, t, p, prev, 0, 0, {}, {}, {}});
    }
    prev = t;
    t = ts.ptr(l.tstate_next);
    states.push_back(std::move(ts));
  }
  // The pages each thread's walk starts on (its _PyCFrame's, its top frame's and the one below) are read in one
  // batch for a run of threads at a time, as many as the page cache keeps whole until their walks are done
  // (a batch for every thread at once would push the first threads' pages out before they are walked).
  // A reader with no cache (a core's mapping) is read as the walks go.
  constexpr std::size_t kPagesPerThread = 3;
  const bool ahead = mem.batch_pages() != 0;
  const std::size_t run = ahead ? std::max<std::size_t>(1, mem.batch_pages() / kPagesPerThread) : states.size();
  for (std::size_t first = 0; first < states.size(); first += run) {
    const std::size_t last = std::min(states.size(), first + run);
    std::vector<Addr> tops(last - first);
    std::vector<ReadProblem> problems(last - first);
    if (opts.frames) {
      if (ahead && l.top_frame == TopFrame::CFrame) {  // each top frame is found through a _PyCFrame on its thread's C stack
        std::vector<Addr> cframes;
        for (std::size_t i = first; i < last; ++i)
          if (Addr cframe = states[i].ptr(l.tstate_cframe)) cframes.push_back(cframe + l.cframe_current_frame);
        prefetch(mem, cframes);
      }
      std::vector<Addr> pages;
      for (std::size_t i = first; i < last; ++i) {
        Addr& top = tops[i - first];
        top = top_frame(mem, l, states[i], problems[i - first]);
        if (plausible_pointer(top)) {
          pages.push_back(top);
          if (top >= 2 * kPageBytes) pages.push_back(top - kPageBytes);
        }
      }
      if (ahead) prefetch(mem, pages);
    }
    for (std::size_t i = first; i < last; ++i) {
      const RemoteStruct& ts = states[i];
      PyThreadInfo info;
      info.tstate = ts.address();
      info.interp = interp.address;
      info.interp_id = interp.id;
      info.thread_id = ts.get<std::uint64_t>(l.tstate_thread_id).value_or(0);
      if (auto tid = ts.get<std::uint64_t>(l.tstate_native_thread_id); tid && *tid > 0 && *tid < (1u << 30))
        info.native_tid = static_cast<int>(*tid);
      if (auto state = ts.get<std::int32_t>(l.tstate_state)) info.attached = (*state == l.thread_attached);
      if (opts.frames) {
        auto walk = detail::walk_frames(objects, codes, tops[i - first], /*both_ends=*/true);
        if (opts.digest_frames) info.frames_digest = frames_digest(walk.frames);
        else info.frames = std::move(walk.frames);
        info.frames_omitted = walk.omitted;
        info.frames_omitted_at = walk.omitted_at;
        if (!opts.digest_frames) detail::add_c_calls(objects, codes, info.frames);
        const ReadProblem& problem = problems[i - first];
        info.problem = problem.empty() ? walk.problem : problem;
      }
      st.threads.push_back(std::move(info));
    }
  }
}

// gc.collecting: of the runtime (3.7, 3.8), else of the main interpreter
// (3.9+; the last listed, the oldest, when main is not known).  An int that
// is 0 or 1; anything else is not trusted.
std::optional<bool> read_gc_collecting(MemoryReader& mem, const Layout& l, Addr runtime, Addr interp) {
  Addr at = 0;
  if (l.has(l.runtime_gc_collecting) && runtime) at = runtime + static_cast<Addr>(l.runtime_gc_collecting);
  else if (l.has(l.interp_gc_collecting) && interp) at = interp + static_cast<Addr>(l.interp_gc_collecting);
  if (!at) return std::nullopt;
  auto v = mem.read_value<std::int32_t>(at);
  if (!v || (*v != 0 && *v != 1)) return std::nullopt;
  return *v == 1;
}

}  // namespace

PythonState inspect_memory(MemoryReader& mem, const Layout& generated, const Roots& roots, const Options& opts) {
  PythonState st;
  st.major = generated.major;
  st.minor = generated.minor;
  st.layout = generated.generated_from;
  st.runtime = roots.runtime;
  auto effective = detail::effective_layout(mem, generated, roots.runtime, st.warnings);
  if (!effective.layout) {  // a free-threaded build, or a stand-in table without the target's offsets
    st.status = Status::Unsupported;
    st.free_threaded = effective.free_threaded;
    if (effective.refused) st.warnings.push_back(*effective.refused);
    return st;
  }
  st.layout_debug_offsets = effective.debug_offsets;
  st.effective_layout = effective.layout;
  const Layout& l = *effective.layout;
  detail::ObjectReader objects(mem, l, opts);
  detail::CodeCache codes(objects);

  RuntimeView rt = read_runtime(mem, l, roots);
  if (!rt.readable) {
    st.status = Status::Unreadable;
    st.warnings.push_back(
        {StateProblem::RuntimeUnreadable, roots.runtime ? roots.runtime : roots.interp_head_var, 0, 0, 0, 0, {}, {}, {}});
    return st;
  }
  if (rt.finalizing) st.status = Status::Finalizing;
  else if (rt.interp_head == 0 || (rt.initialized && *rt.initialized == 0)) st.status = Status::Starting;
  else st.status = Status::Ok;

  // Interpreters, newest first as CPython links them.
  std::vector<detail::InterpInfo> interps;
  detail::ChainGuard guard(opts.max_interpreters, ReadPart::Interpreter);
  const std::size_t ispan = span_of({l.interp_next, l.interp_id, l.interp_threads_head, l.interp_ceval_gil});
  for (Addr i = rt.interp_head; i != 0; ) {
    if (auto end = guard.end(i); end != detail::ChainEnd::None) {
      st.warnings.push_back({end == detail::ChainEnd::Loops ? StateProblem::InterpretersLoop
                                                            : StateProblem::TooManyInterpreters,
                             i, 0, 0, 0, static_cast<std::int64_t>(opts.max_interpreters), {}, {}, {}});
      break;
    }
    RemoteStruct is;
    if (!plausible_pointer(i) || !is.load(mem, i, ispan)) {
      st.warnings.push_back({StateProblem::InterpreterUnreadable, i, 0, 0, 0, 0, {}, {}, {}});
      break;
    }
    detail::InterpInfo info;
    info.address = i;
    info.id = is.get<std::int64_t>(l.interp_id).value_or(0);
    info.gil_pointer = is.ptr(l.interp_ceval_gil);
    if (info.id < 0 || info.id > (std::int64_t{1} << 40)) {
      st.warnings.push_back({StateProblem::InterpreterIdOdd, i, 0, 0, info.id, 0, {}, {}, {}});
    }
    interps.push_back(info);
    read_threads(objects, codes, info, is.ptr(l.interp_threads_head), st);
    i = is.ptr(l.interp_next);
  }
  if (rt.interp_main && !interps.empty()) {
    bool found = false;
    for (auto& i : interps) found |= i.address == rt.interp_main;
    if (!found) st.warnings.push_back({StateProblem::MainNotListed, rt.interp_main, 0, 0, 0, 0, {}, {}, {}});
    for (auto& i : interps)
      if (i.address == rt.interp_main && l.has(l.interp_id) && i.id != 0)
        st.warnings.push_back({StateProblem::MainIdNotZero, 0, 0, 0, i.id, 0, {}, {}, {}});
  }

  st.gc_collecting = read_gc_collecting(mem, l, roots.runtime,
                                        rt.interp_main ? rt.interp_main : interps.empty() ? 0 : interps.back().address);

  // The GIL(s) and who holds them.
  st.gils = detail::read_gils(objects, roots, interps, st.warnings);
  if (rt.tstate_current_known) {
    // 3.6 - 3.11 also record the thread that holds the GIL in the runtime;
    // where the GIL state itself cannot be read (3.6) it is the only source.
    for (auto& g : st.gils) {
      if (g.interp_id != -1) continue;
      if (g.locked.value_or(false)) {
        if (g.holder_tstate == 0) {
          g.holder_tstate = rt.tstate_current;
          if (rt.tstate_current) g.source += " + tstate-current";
        } else if (rt.tstate_current && g.holder_tstate != rt.tstate_current) {
          st.warnings.push_back({StateProblem::GilHolderDisagrees, g.holder_tstate, rt.tstate_current, 0, 0, 0, {}, {}, {}});
          g.holder_tstate = rt.tstate_current;
        }
      } else if (!g.locked && rt.tstate_current) {
        // Locked state unknown (3.6 without gil_locked): a current thread
        // state exists only while its thread holds the GIL.
        g.locked = true;
        g.holder_tstate = rt.tstate_current;
        g.source = "tstate-current";
      }
    }
    if (rt.tstate_current) {
      bool found = false;
      for (auto& t : st.threads) found |= t.tstate == rt.tstate_current;
      if (!found) st.warnings.push_back({StateProblem::CurrentNotListed, rt.tstate_current, 0, 0, 0, 0, {}, {}, {}});
    }
  }
  for (auto& t : st.threads) {
    for (auto& g : st.gils) {
      if (g.interp_id != -1 && g.interp_id != t.interp_id && g.address != 0) {
        // a GIL shared by several interpreters is listed under its owner
        bool shared = false;
        for (auto& i : interps) shared |= i.address == t.interp && i.gil_pointer == g.address;
        if (!shared) continue;
      }
      if (g.locked.value_or(false) && g.holder_tstate == t.tstate) t.holds_gil = true;
    }
  }
  return st;
}

void innermost_frame_pages(const PyThreadInfo& thread, std::size_t frames, std::vector<Addr>& into) {
  // A frame's header and the locals after it: a few hundred bytes, on one page or two.
  constexpr Addr kFrameAndLocals = 512;
  for (std::size_t i = 0; i < thread.frames.size() && i < frames; ++i) {
    Addr f = thread.frames[i].frame;
    if (!plausible_pointer(f)) continue;
    into.push_back(f);
    into.push_back(f + kFrameAndLocals);
  }
}

}  // namespace pyhang::cpython
