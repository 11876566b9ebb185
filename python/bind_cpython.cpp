// CPython state of a target as the records of pyhang.model.python_facts (python/records.hpp): a
// PythonState whose threads' frames are a native sequence (Frames) making each PyFrameFacts when asked for.
#include <pybind11/stl.h>

#include <string>
#include <unordered_map>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/cpython/bytecode.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

// Thousands of frames share a few dozen function and file names: each name
// becomes one Python string per state read.
class FrameConverter {
 public:
  // (function, file, line, entry_frame, end_line, col, end_col) of a frame:
  // one tuple for every frame equal in these, across the threads of the state.
  // A frame that calls C has a key of its own (one per thread at most).
  py::tuple key(const cpython::PyFrame& f) {
    const py::str& function = text(f.function);
    if (f.c_call)
      return py::make_tuple(function, text(f.file), f.line, f.entry_frame, f.end_line, f.col, f.end_col,
                            c_call_key(*f.c_call));
    const py::str& file = text(f.file);
    Key k{function.ptr(), file.ptr(), f.line, f.entry_frame, f.end_line, f.col, f.end_col};
    auto it = tuples_.find(k);
    if (it == tuples_.end())
      it = tuples_.emplace(k, py::make_tuple(function, file, f.line, f.entry_frame, f.end_line, f.col,
                                             f.end_col, py::none())).first;
    return it->second;
  }

  // (type, name, qualname, repr, name_in_code, address) of the C callable a frame calls.
  static py::tuple c_call_key(const cpython::CCall& c) {
    return py::make_tuple(c.type, c.name, c.qualname, c.repr, c.name_in_code, c.callable);
  }

  // One str per name, however many frames carry it.
  const py::str& text(const std::string& s) {
    auto it = texts_.find(s);
    if (it == texts_.end()) it = texts_.emplace(s, py::str(s)).first;
    return it->second;
  }

 private:
  std::unordered_map<std::string, py::str> texts_;
  struct Key {
    PyObject* function;
    PyObject* file;
    int line;
    bool entry;
    int end_line, col, end_col;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::size_t h = std::hash<const void*>()(k.function);
      h = h * 31 + std::hash<const void*>()(k.file);
      h = h * 31 + static_cast<std::size_t>(k.line) * 2 + (k.entry ? 1 : 0);
      h = h * 31 + static_cast<std::size_t>(k.col) * 65537 + static_cast<std::size_t>(k.end_col);
      return h * 31 + static_cast<std::size_t>(k.end_line);
    }
  };
  std::unordered_map<Key, py::tuple, KeyHash> tuples_;
};

// One frame with the names its state shares (the PyFrameFacts table's struct).
struct FrameOf {
  const cpython::PyFrame& f;
  FrameConverter& texts;
};

}  // namespace

PYHANG_RECORD(FrameOf, "pyhang.model.python_facts", "PyFrameFacts",
              PYHANG_FIELD_AS("function", v.texts.text(v.f.function)), PYHANG_FIELD_AS("file", v.texts.text(v.f.file)),
              PYHANG_FIELD_AS("line", v.f.line), PYHANG_FIELD_AS("entry_frame", v.f.entry_frame),
              PYHANG_FIELD_AS("end_line", v.f.end_line), PYHANG_FIELD_AS("col", v.f.col),
              PYHANG_FIELD_AS("end_col", v.f.end_col), PYHANG_FIELD_AS("frame", v.f.frame),
              PYHANG_FIELD_AS("code", v.f.code),
              PYHANG_FIELD_AS("c_call", v.f.c_call ? py::object(FrameConverter::c_call_key(*v.f.c_call)) : py::none()))

namespace {

// A thread's Python frames as a read-only sequence of PyFrameFacts, each
// record made when it is asked for.  A report walks thousands of frames once
// or twice, most through their keys alone: made on demand, the records of a
// thread come and go in the same few pages of memory instead of all staying
// alive in the state.
class Frames {
 public:
  Frames(std::shared_ptr<const std::vector<cpython::PyFrame>> frames, std::shared_ptr<FrameConverter> conv)
      : frames_(std::move(frames)), conv_(std::move(conv)) {}
  std::size_t size() const { return frames_->size(); }
  py::object at(std::ptrdiff_t i) const {
    auto n = static_cast<std::ptrdiff_t>(size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("frame index out of range");
    return record((*frames_)[static_cast<std::size_t>(i)]);
  }
  py::list slice(const py::slice& sl) const {
    std::size_t start = 0, stop = 0, step = 0, count = 0;
    if (!sl.compute(size(), &start, &stop, &step, &count)) throw py::error_already_set();
    py::list out(count);
    for (std::size_t k = 0; k < count; ++k) out[k] = record((*frames_)[start + k * step]);
    return out;
  }
  py::list list() const { return slice(py::slice(0, static_cast<py::ssize_t>(size()), 1)); }
  py::list keys() const {
    py::list out(size());
    for (std::size_t i = 0; i < size(); ++i) out[i] = conv_->key((*frames_)[i]);
    return out;
  }

 private:
  py::object record(const cpython::PyFrame& f) const { return to_py(FrameOf{f, *conv_}); }
  std::shared_ptr<const std::vector<cpython::PyFrame>> frames_;
  std::shared_ptr<FrameConverter> conv_;
};

struct FramesIterator {
  std::shared_ptr<const Frames> frames;
  std::size_t next = 0;
};

}  // namespace

PYHANG_RECORD(cpython::ReadStep, "pyhang.model.unread", "ReadStep",
              PYHANG_FIELD(part), PYHANG_FIELD(address), PYHANG_FIELD(name), PYHANG_FIELD(number))
PYHANG_RECORD(cpython::ReadProblem, "pyhang.model.unread", "ReadProblem",
              PYHANG_FIELD(path), PYHANG_FIELD(why), PYHANG_FIELD(number), PYHANG_FIELD(limit), PYHANG_FIELD(at),
              PYHANG_FIELD(name), PYHANG_FIELD(count))

py::object read_problem(const cpython::ReadProblem& p) { return p.empty() ? py::none() : to_py(p); }

PYHANG_RECORD(cpython::FieldChange, "pyhang.model.warning_facts", "FieldChange",
              PYHANG_FIELD(name), PYHANG_FIELD(was), PYHANG_FIELD(now))
PYHANG_RECORD(cpython::StateWarning, "pyhang.model.warning_facts", "StateIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(address), PYHANG_FIELD(other), PYHANG_FIELD(expected),
              PYHANG_FIELD(number), PYHANG_FIELD(count), PYHANG_FIELD(text), PYHANG_FIELD(text2), PYHANG_FIELD(text3),
              PYHANG_FIELD(notes), PYHANG_FIELD(changes))

py::object state_warning(const cpython::StateWarning& w) { return to_py(w); }

namespace {

// One thread state, its frames kept alive by `owner` (the Interpreter, or the state itself) for as long as
// its Frames live, their names shared through `conv` across the threads of the state.
struct ThreadOf {
  const std::shared_ptr<const void>& owner;
  const cpython::PyThreadInfo& t;
  const std::shared_ptr<FrameConverter>& conv;
};

// The state, kept alive by `owner`.
struct StateOf {
  std::shared_ptr<const void> owner;
  const cpython::PythonState& s;
};

py::object frames_of(const ThreadOf& v) {
  return py::cast(Frames(std::shared_ptr<const std::vector<cpython::PyFrame>>(v.owner, &v.t.frames), v.conv));
}

// [(start, size)] of each piece of a GIL (GilInfo::ranges).
py::object ranges_of(const cpython::GilInfo& g) {
  py::list out;
  for (const auto& r : g.ranges) out.append(py::make_tuple(r.start, r.size));
  return std::move(out);
}

}  // namespace

PYHANG_RECORD(ThreadOf, "pyhang.model.python_facts", "PyThreadFacts",
              PYHANG_FIELD_AS("tstate", v.t.tstate), PYHANG_FIELD_AS("interp", v.t.interp),
              PYHANG_FIELD_AS("interp_id", v.t.interp_id), PYHANG_FIELD_AS("thread_id", v.t.thread_id),
              PYHANG_FIELD_AS("native_tid", v.t.native_tid), PYHANG_FIELD_AS("frames", frames_of(v)),
              PYHANG_FIELD_AS("frames_omitted", v.t.frames_omitted),
              PYHANG_FIELD_AS("frames_omitted_at", v.t.frames_omitted_at),
              PYHANG_FIELD_AS("problem", read_problem(v.t.problem)), PYHANG_FIELD_AS("attached", v.t.attached),
              PYHANG_FIELD_AS("holds_gil", v.t.holds_gil))
PYHANG_RECORD(cpython::GilInfo, "pyhang.model.python_facts", "GilFacts",
              PYHANG_FIELD(address), PYHANG_FIELD(size), PYHANG_FIELD(locked), PYHANG_FIELD(holder_tstate),
              PYHANG_FIELD(switch_number), PYHANG_FIELD(interp_id), PYHANG_FIELD(source),
              PYHANG_FIELD_AS("ranges", ranges_of(v)))
namespace {

py::object threads_of(const StateOf& v) {
  auto conv = std::make_shared<FrameConverter>();
  py::list out(v.s.threads.size());
  for (std::size_t i = 0; i < v.s.threads.size(); ++i) out[i] = to_py(ThreadOf{v.owner, v.s.threads[i], conv});
  return std::move(out);
}

}  // namespace

PYHANG_RECORD(StateOf, "pyhang.model.python_facts", "PythonState",
              PYHANG_FIELD_AS("status", v.s.status),
              PYHANG_FIELD_AS("version", v.s.version.empty() ? py::none() : to_py(v.s.version)),
              PYHANG_FIELD_AS("major", v.s.major), PYHANG_FIELD_AS("minor", v.s.minor),
              PYHANG_FIELD_AS("patch", v.s.patch), PYHANG_FIELD_AS("library", v.s.library),
              PYHANG_FIELD_AS("layout", v.s.layout), PYHANG_FIELD_AS("layout_basis", v.s.layout_basis),
              PYHANG_FIELD_AS("layout_debug_offsets", v.s.layout_debug_offsets),
              PYHANG_FIELD_AS("free_threaded", v.s.free_threaded), PYHANG_FIELD_AS("runtime", v.s.runtime),
              PYHANG_FIELD_AS("gc_collecting", v.s.gc_collecting), PYHANG_FIELD_AS("gils", v.s.gils),
              PYHANG_FIELD_AS("threads", threads_of(v)), PYHANG_FIELD_AS("warnings", v.s.warnings))
PYHANG_RECORD(cpython::StateMoves, "pyhang.model.python_facts", "StateMoves",
              PYHANG_FIELD(moved), PYHANG_FIELD(gil_moved))
PYHANG_RECORD(cpython::CodeStackDepths, "pyhang.model.python_facts", "CodeStackDepths",
              PYHANG_FIELD_AS("problem", v.problem == cpython::DepthProblem::None ? std::string_view()
                                                                                   : to_string(v.problem)),
              PYHANG_FIELD(problem_unit), PYHANG_FIELD(max_depth), PYHANG_FIELD(depth))

void register_cpython(py::module_& m) {
  py::class_<Frames, std::shared_ptr<Frames>>(
      m, "Frames",
      "A thread's Python frames (python_state().threads[i].frames), innermost first: a read-only "
      "sequence of PyFrameFacts, each made when asked for (a collections.abc.Sequence).")
      .def("__len__", &Frames::size)
      .def("__bool__", [](const Frames& f) { return f.size() > 0; })
      .def("__getitem__", &Frames::at, py::arg("index"))
      .def("__getitem__", &Frames::slice, py::arg("slice"))
      .def("__iter__", [](const std::shared_ptr<Frames>& f) { return FramesIterator{f, 0}; })
      .def("__eq__", [](const Frames& f, const py::object& other) { return f.list().equal(other); })
      .def("list", &Frames::list, "Every frame's record, as a list.")
      .def("keys", &Frames::keys,
           "(function, file, line, entry_frame, end_line, col, end_col, c_call) of every frame: one tuple object for all "
           "the frames equal in these, across the threads of the state.");
  // (a Sequence to the model: to_data and isinstance take it as the list it stands for)
  py::module_::import("collections.abc").attr("Sequence").attr("register")(m.attr("Frames"));
  py::class_<FramesIterator>(m, "FramesIterator")
      .def("__iter__", [](FramesIterator& it) -> FramesIterator& { return it; })
      .def("__next__", [](FramesIterator& it) {
        if (it.next >= it.frames->size()) throw py::stop_iteration();
        return it.frames->at(static_cast<std::ptrdiff_t>(it.next++));
      });

  bind_enum(m, "Status", cpython::kStatusNames, "What was found of the interpreter (python_state().status).");
  bind_enum(m, "ReadPart", cpython::kReadPartNames,
            "One step on the way to what a CPython reader could not read (a problem's 'path' parts).");
  bind_enum(m, "ReadWhy", cpython::kReadWhyNames, "Why a CPython reader could not read something (a problem's 'why').");
  bind_enum(m, "LayoutBasis", cpython::kLayoutBasisNames,
            "How the layout table an interpreter was read with relates to its release (python_state().layout_basis).");
  bind_enum(m, "StateProblem", cpython::kStateProblemNames,
            "What about the interpreter's state could not be read or trusted (python_state().warnings[i].kind: "
            "a StateIssue, worded by pyhang.render).");
  py::class_<cpython::Interpreter, std::shared_ptr<cpython::Interpreter>>(
      m, "Interpreter",
      "The target's CPython interpreter, located and read once with its effective layout; pass it to "
      "PythonLocks, fork_facts and python_value so that they do not read it again.")
      .def(py::init([](std::shared_ptr<Target> target, bool frames, std::size_t max_frames, bool digest_frames) {
             cpython::Options opts;
             opts.frames = frames;
             opts.max_frames = max_frames;
             opts.digest_frames = digest_frames;
             py::gil_scoped_release nogil;  // a callback target takes it back to read
             return std::make_shared<cpython::Interpreter>(std::move(target), opts);
           }),
           py::arg("target"), py::arg("frames") = true, py::arg("max_frames") = 10000,
           py::arg("digest_frames") = false,
           "digest_frames: keep each thread's frames only as a digest, for a read only compared with another "
           "(state_moves); its state() then has no frames.")
      .def("state", [](const std::shared_ptr<cpython::Interpreter>& i) { return to_py(StateOf{i, i->state()}); },
           "The same PythonState as python_state(target) (a new record each call).")
      .def_property_readonly("status", [](const cpython::Interpreter& i) { return i.state().status; })
      .def_property_readonly("target", &cpython::Interpreter::shared_target);
  m.def(
      "code_stack_depths",
      [](int minor, py::bytes code, py::bytes exceptions) {
        std::string c = code, e = exceptions;
        auto bytes = [](const std::string& s) {
          return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
        };
        return to_py(cpython::code_stack_depths(minor, bytes(c), bytes(e)));
      },
      py::arg("minor"), py::arg("code"), py::arg("exceptions") = py::bytes(),
      "CodeStackDepths {problem, problem_unit, max_depth, depth: [per code unit]}: the stack depth CPython 3.<minor>'s compiler "
      "gives each instruction of `code` (co_code bytes; 3.11+ with its co_exceptiontable), -1 where unknown or "
      "uncertain; max_depth is the co_stacksize the code should have; problem: why nothing is known (a kind: "
      "'unknown-opcode', 'not-settled', ...; '' when the code was followed) and the code unit it was found at.");
  m.def(
      "state_moves",
      [](const cpython::Interpreter& first, const cpython::Interpreter& again) {
        return to_py(cpython::state_moves(first.state(), again.state()));
      },
      py::arg("first"), py::arg("again"),
      "StateMoves {moved: [native TID], gil_moved: bool} between two reads of a process that ran: the threads of `first` "
      "whose Python frames differ in function, file, line or entry in `again` (or that `again` lacks), and "
      "whether who holds a GIL differs (each GIL's address, locked, holder, and the threads that hold one).");
  m.def(
      "python_state",
      [](Target& target, bool frames, std::size_t max_frames) {
        cpython::Options opts;
        opts.frames = frames;
        opts.max_frames = max_frames;
        auto s = std::make_shared<cpython::PythonState>();
        {
          py::gil_scoped_release nogil;  // a callback target takes it back to read
          *s = cpython::inspect(target, opts);
        }
        return to_py(StateOf{s, *s});
      },
      py::arg("target"), py::arg("frames") = true, py::arg("max_frames") = 10000,
      "The CPython interpreter of the target (a PythonState): version, GIL(s), threads with Python frames "
      "(innermost first), warnings.  Never raises on bad target memory; see 'status' and 'warnings'.");
}

}  // namespace pyhang::bindings
