// inspect(): the interpreter located (locate.cpp), read from its roots
// (threads.cpp) with the layout of its release (layouts/select.cpp), and the
// LWPs of its threads filled in.
#include <optional>

#include "cpython/internal.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/target/target.hpp"
#include "pyhang/unwind/partitions.hpp"

namespace pyhang::cpython {

PythonState inspect(Target& target, const Options& opts) { return inspect(target, locate(target), opts); }

namespace {

// The evaluation loop's split-off partitions in the interpreter's object get
// the name gcc gives them, so that a thread inside the loop has a frame that
// says so (the frame filter and report pair Python frames by it): Debian's
// 3.14 and 3.15 run every opcode in a partition no exported symbol covers.
constexpr const char* kEvalLoop = "_PyEval_EvalFrameDefault";

void name_eval_loop_partitions(const Target& target, const std::string& library) {
  for (const auto& obj : target.space().objects()) {
    if (obj.path != library || !obj.elf) continue;
    auto sym = obj.elf->symbol(kEvalLoop);
    if (!sym || sym->value == 0) return;
    for (const auto& part : unwind::split_partitions(obj.elf, sym->value))
      target.space().name_code(part.begin + obj.bias, part.end + obj.bias, std::string(kEvalLoop) + ".cold");
    return;
  }
}

}  // namespace

PythonState inspect(Target& target, const std::optional<Located>& loc, const Options& opts) {
  PythonState st;
  if (!loc) {
    st.status = Status::NotPython;
    return st;
  }
  name_eval_loop_partitions(target, loc->library);
  std::optional<Layout> layout;
  if (loc->major) layout = layout_for_release(loc->major, loc->minor, loc->patch);
  if (!layout) {
    st.status = Status::Unsupported;
    st.version = loc->version;
    st.major = loc->major, st.minor = loc->minor, st.patch = loc->patch;
    st.library = loc->library;
    st.warnings = loc->warnings;
    st.warnings.push_back({StateProblem::NoLayoutTable, 0, 0, 0, 0, 0, loc->version, {}, {}});
    return st;
  }
  st = inspect_memory(target.memory(), *layout, loc->roots, opts);
  // Say which table serves which release: a patch level other than the
  // generated one relies on the headers having been probed identical, or
  // else on the target's _Py_DebugOffsets (3.13+) and the run-time checks
  // (back-pointers, GIL word, type names).  A newer minor than every table
  // is read through its _Py_DebugOffsets alone, the rest assumed unchanged.
  if (layout->stand_in && st.effective_layout) {
    st.layout_basis = LayoutBasis::StandIn;
    st.warnings.push_back({StateProblem::DebugOffsetsOnly, 0, 0, 0, 0, 0, loc->version, layout->generated_from, {}});
  } else if (loc->patch >= 0 && loc->patch != layout->patch) {
    std::string also = layout->also_probed;
    bool probed = ("," + also + ",").find("," + loc->version + ",") != std::string::npos;
    st.layout_basis = probed ? LayoutBasis::ProbedIdentical : LayoutBasis::NotProbed;
  }
  st.version = loc->version;
  st.major = loc->major, st.minor = loc->minor, st.patch = loc->patch;
  st.library = loc->library;
  st.warnings.insert(st.warnings.begin(), loc->warnings.begin(), loc->warnings.end());
  // thread_id is a pthread_t; before 3.11 there is no native_thread_id and
  // the LWP comes from struct pthread via libthread_db's descriptor.
  std::optional<nptl::PthreadMapper> mapper;  // only when a thread has no native_thread_id
  for (auto& t : st.threads) {
    if (t.native_tid || !t.thread_id) continue;
    if (!mapper) mapper.emplace(target);
    t.native_tid = mapper->tid(t.thread_id);
  }
  return st;
}

}  // namespace pyhang::cpython
