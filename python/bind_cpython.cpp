// CPython state of a target as plain Python dicts and lists.
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
// becomes one Python string, and so does each key, per call.
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

  py::dict frame(const cpython::PyFrame& f) {
    py::dict d;
    d[keys_.function] = text(f.function);
    d[keys_.file] = text(f.file);
    d[keys_.line] = py::int_(f.line);
    d[keys_.entry_frame] = py::bool_(f.entry_frame);
    d[keys_.end_line] = py::int_(f.end_line);
    d[keys_.col] = py::int_(f.col);
    d[keys_.end_col] = py::int_(f.end_col);
    d[keys_.frame] = py::int_(f.frame);
    d[keys_.code] = py::int_(f.code);
    d[keys_.c_call] = f.c_call ? py::object(c_call_key(*f.c_call)) : py::object(py::none());
    return d;
  }

  // (type, name, qualname, repr, name_in_code, address) of the C callable a frame calls.
  static py::tuple c_call_key(const cpython::CCall& c) {
    return py::make_tuple(c.type, c.name, c.qualname, c.repr, c.name_in_code, c.callable);
  }

 private:
  struct Keys {
    py::str function{"function"}, file{"file"}, line{"line"}, entry_frame{"entry_frame"}, frame{"frame"},
        code{"code"}, end_line{"end_line"}, col{"col"}, end_col{"end_col"}, c_call{"c_call"};
  } keys_;
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

  const py::str& text(const std::string& s) {
    auto it = texts_.find(s);
    if (it == texts_.end()) it = texts_.emplace(s, py::str(s)).first;
    return it->second;
  }
};

// A thread's Python frames as a read-only sequence of frame dicts, each dict
// made when it is asked for.  A report walks thousands of frames once or
// twice: made on demand, the dicts of a thread come and go in the same few
// pages of memory instead of all staying alive in the state dict.
class Frames {
 public:
  Frames(std::shared_ptr<const std::vector<cpython::PyFrame>> frames, std::shared_ptr<FrameConverter> conv)
      : frames_(std::move(frames)), conv_(std::move(conv)) {}
  std::size_t size() const { return frames_->size(); }
  py::dict at(std::ptrdiff_t i) const {
    auto n = static_cast<std::ptrdiff_t>(size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("frame index out of range");
    return conv_->frame((*frames_)[static_cast<std::size_t>(i)]);
  }
  py::list slice(const py::slice& sl) const {
    std::size_t start = 0, stop = 0, step = 0, count = 0;
    if (!sl.compute(size(), &start, &stop, &step, &count)) throw py::error_already_set();
    py::list out(count);
    for (std::size_t k = 0; k < count; ++k) out[k] = conv_->frame((*frames_)[start + k * step]);
    return out;
  }
  py::list list() const { return slice(py::slice(0, static_cast<py::ssize_t>(size()), 1)); }
  py::list keys() const {
    py::list out(size());
    for (std::size_t i = 0; i < size(); ++i) out[i] = conv_->key((*frames_)[i]);
    return out;
  }

 private:
  std::shared_ptr<const std::vector<cpython::PyFrame>> frames_;
  std::shared_ptr<FrameConverter> conv_;
};

struct FramesIterator {
  std::shared_ptr<const Frames> frames;
  std::size_t next = 0;
};

}  // namespace

py::dict state_warning_dict(const cpython::StateWarning& w) {
  py::dict wd;
  wd[key("kind")] = std::string(to_string(w.kind));
  wd[key("address")] = w.address;
  wd[key("other")] = w.other;
  wd[key("expected")] = w.expected;
  wd[key("number")] = w.number;
  wd[key("count")] = w.count;
  wd[key("text")] = w.text;
  wd[key("text2")] = w.text2;
  wd[key("text3")] = w.text3;
  if (!w.notes.empty()) {
    py::list notes;
    for (const auto& n : w.notes) notes.append(read_problem(n));
    wd[key("notes")] = std::move(notes);
  }
  if (!w.changes.empty()) {
    py::list changes;
    for (const auto& c : w.changes) {
      py::dict cd;
      cd[key("name")] = c.name;
      cd[key("was")] = c.was;
      cd[key("now")] = c.now;
      changes.append(cd);
    }
    wd[key("changes")] = std::move(changes);
  }
  return wd;
}

PYHANG_RECORD(cpython::ReadStep, "pyhang.model.unread", "ReadStep",
              PYHANG_FIELD(part), PYHANG_FIELD(address), PYHANG_FIELD(name), PYHANG_FIELD(number))
PYHANG_RECORD(cpython::ReadProblem, "pyhang.model.unread", "ReadProblem",
              PYHANG_FIELD(path), PYHANG_FIELD(why), PYHANG_FIELD(number), PYHANG_FIELD(limit), PYHANG_FIELD(at),
              PYHANG_FIELD(name), PYHANG_FIELD(count))

py::object read_problem(const cpython::ReadProblem& p) { return p.empty() ? py::none() : to_py(p); }

namespace {

// `owner` keeps `t` alive for as long as its Frames live.
py::dict thread_dict(const std::shared_ptr<const void>& owner, const cpython::PyThreadInfo& t,
                     const std::shared_ptr<FrameConverter>& conv) {
  py::dict d;
  d[key("tstate")] = t.tstate;
  d[key("interp")] = t.interp;
  d[key("interp_id")] = t.interp_id;
  d[key("thread_id")] = t.thread_id;
  d[key("native_tid")] = opt(t.native_tid);
  d[key("frames")] = Frames(std::shared_ptr<const std::vector<cpython::PyFrame>>(owner, &t.frames), conv);
  d[key("frames_omitted")] = t.frames_omitted;
  d[key("frames_omitted_at")] = t.frames_omitted_at;
  d[key("problem")] = read_problem(t.problem);
  d[key("attached")] = opt(t.attached);
  d[key("holds_gil")] = t.holds_gil;
  return d;
}

py::dict gil_dict(const cpython::GilInfo& g) {
  py::dict d;
  d[key("address")] = g.address;
  d[key("size")] = g.size;
  d[key("locked")] = opt(g.locked);
  d[key("holder_tstate")] = g.holder_tstate;
  d[key("switch_number")] = opt(g.switch_number);
  d[key("interp_id")] = g.interp_id;
  d[key("source")] = g.source;
  py::list ranges;  // [(start, size), ...]: each piece of the GIL (GilInfo::ranges)
  for (const auto& r : g.ranges) ranges.append(py::make_tuple(r.start, r.size));
  d[key("ranges")] = ranges;
  return d;
}

// `owner` keeps `s` alive (the Interpreter it belongs to, or the state itself).
py::dict state_dict(const std::shared_ptr<const void>& owner, const cpython::PythonState& s) {
  py::dict d;
  d[key("status")] = py::str(to_string(s.status));
  d[key("version")] = s.version.empty() ? py::object(py::none()) : py::str(s.version);
  d[key("major")] = s.major;
  d[key("minor")] = s.minor;
  d[key("patch")] = s.patch;
  d[key("library")] = s.library;
  d[key("layout")] = s.layout;
  d[key("layout_basis")] = std::string(to_string(s.layout_basis));
  d[key("layout_debug_offsets")] = s.layout_debug_offsets;
  d[key("free_threaded")] = s.free_threaded;
  d[key("runtime")] = s.runtime;
  d[key("gc_collecting")] = s.gc_collecting ? py::object(py::bool_(*s.gc_collecting)) : py::object(py::none());
  py::list gils, threads;
  for (const auto& g : s.gils) gils.append(gil_dict(g));
  auto conv = std::make_shared<FrameConverter>();
  for (const auto& t : s.threads) threads.append(thread_dict(owner, t, conv));
  d[key("gils")] = gils;
  d[key("threads")] = threads;
  py::list warnings;
  for (const auto& w : s.warnings) warnings.append(state_warning_dict(w));
  d[key("warnings")] = warnings;
  return d;
}

}  // namespace

void register_cpython(py::module_& m) {
  py::class_<Frames, std::shared_ptr<Frames>>(
      m, "Frames",
      "A thread's Python frames (python_state()['threads'][i]['frames']), innermost first: a read-only "
      "sequence of frame dicts {function, file, line, entry_frame, end_line, col, end_col, frame, code, c_call}, each made when asked for.")
      .def("__len__", &Frames::size)
      .def("__bool__", [](const Frames& f) { return f.size() > 0; })
      .def("__getitem__", &Frames::at, py::arg("index"))
      .def("__getitem__", &Frames::slice, py::arg("slice"))
      .def("__iter__", [](const std::shared_ptr<Frames>& f) { return FramesIterator{f, 0}; })
      .def("__eq__", [](const Frames& f, const py::object& other) { return f.list().equal(other); })
      .def("list", &Frames::list, "Every frame dict, as a list.")
      .def("keys", &Frames::keys,
           "(function, file, line, entry_frame, end_line, col, end_col, c_call) of every frame: one tuple object for all "
           "the frames equal in these, across the threads of the state.");
  py::class_<FramesIterator>(m, "FramesIterator")
      .def("__iter__", [](FramesIterator& it) -> FramesIterator& { return it; })
      .def("__next__", [](FramesIterator& it) {
        if (it.next >= it.frames->size()) throw py::stop_iteration();
        return it.frames->at(static_cast<std::ptrdiff_t>(it.next++));
      });

  bind_enum(m, "Status", cpython::kStatusNames, "What was found of the interpreter (python_state()['status']).");
  bind_enum(m, "ReadPart", cpython::kReadPartNames,
            "One step on the way to what a CPython reader could not read (a problem's 'path' parts).");
  bind_enum(m, "ReadWhy", cpython::kReadWhyNames, "Why a CPython reader could not read something (a problem's 'why').");
  bind_enum(m, "LayoutBasis", cpython::kLayoutBasisNames,
            "How the layout table an interpreter was read with relates to its release (python_state()['layout_basis']).");
  bind_enum(m, "StateProblem", cpython::kStateProblemNames,
            "What about the interpreter's state could not be read or trusted (python_state()['warnings'][i]['kind']: "
            "{kind, address, other, expected, number, count, text, text2, text3, and for gil-statics-undecoded notes: "
            "[ReadProblem]}, worded by pyhang.render).");
  py::class_<cpython::Interpreter, std::shared_ptr<cpython::Interpreter>>(
      m, "Interpreter",
      "The target's CPython interpreter, located and read once with its effective layout; pass it to "
      "PythonLocks, fork_facts and python_value so that they do not read it again.")
      .def(py::init([](std::shared_ptr<Target> target, bool frames, std::size_t max_frames) {
             cpython::Options opts;
             opts.frames = frames;
             opts.max_frames = max_frames;
             py::gil_scoped_release nogil;  // a callback target takes it back to read
             return std::make_shared<cpython::Interpreter>(std::move(target), opts);
           }),
           py::arg("target"), py::arg("frames") = true, py::arg("max_frames") = 10000)
      .def("state", [](const std::shared_ptr<cpython::Interpreter>& i) { return state_dict(i, i->state()); },
           "The same dict as python_state(target) (a new dict each call).")
      .def_property_readonly("status", [](const cpython::Interpreter& i) { return i.state().status; })
      .def_property_readonly("target", &cpython::Interpreter::shared_target);
  m.def(
      "code_stack_depths",
      [](int minor, py::bytes code, py::bytes exceptions) {
        std::string c = code, e = exceptions;
        auto bytes = [](const std::string& s) {
          return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
        };
        cpython::CodeStackDepths d = cpython::code_stack_depths(minor, bytes(c), bytes(e));
        py::dict out;
        out[key("problem")] = d.problem == cpython::DepthProblem::None ? std::string() : std::string(to_string(d.problem));
        out[key("problem_unit")] = d.problem_unit;
        out[key("max_depth")] = d.max_depth;
        out[key("depth")] = d.depth;
        return out;
      },
      py::arg("minor"), py::arg("code"), py::arg("exceptions") = py::bytes(),
      "{problem, problem_unit, max_depth, depth: [per code unit]}: the stack depth CPython 3.<minor>'s compiler "
      "gives each instruction of `code` (co_code bytes; 3.11+ with its co_exceptiontable), -1 where unknown or "
      "uncertain; max_depth is the co_stacksize the code should have; problem: why nothing is known (a kind: "
      "'unknown-opcode', 'not-settled', ...; '' when the code was followed) and the code unit it was found at.");
  m.def(
      "state_moves",
      [](const cpython::Interpreter& first, const cpython::Interpreter& again) {
        cpython::StateMoves moves = cpython::state_moves(first.state(), again.state());
        py::dict d;
        d[key("moved")] = moves.moved;
        d[key("gil_moved")] = moves.gil_moved;
        return d;
      },
      py::arg("first"), py::arg("again"),
      "{moved: [native TID], gil_moved: bool} between two reads of a process that ran: the threads of `first` "
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
        return state_dict(s, *s);
      },
      py::arg("target"), py::arg("frames") = true, py::arg("max_frames") = 10000,
      "The CPython interpreter of the target: version, GIL(s), threads with Python frames (innermost first), "
      "warnings.  Never raises on bad target memory; see 'status' and 'warnings'.");
  m.def(
      "gil_for_wait_address",
      [](py::dict state, Addr address) -> py::object {
        // Rebuild the spans of each GIL dict and ask the native check.
        cpython::PythonState s;
        std::vector<py::dict> dicts;
        for (auto item : state["gils"]) {
          auto d = item.cast<py::dict>();
          cpython::GilInfo g;
          g.address = d["address"].cast<Addr>();
          g.size = d["size"].cast<std::uint64_t>();
          if (d.contains("ranges"))
            for (auto r : d["ranges"]) {
              auto pair = r.cast<py::sequence>();
              g.ranges.push_back({pair[0].cast<Addr>(), pair[1].cast<std::uint64_t>()});
            }
          s.gils.push_back(std::move(g));
          dicts.push_back(d);
        }
        const cpython::GilInfo* g = cpython::gil_for_wait_address(s, address);
        if (!g) return py::none();
        return dicts[static_cast<std::size_t>(g - s.gils.data())];
      },
      py::arg("state"), py::arg("address"),
      "The GIL dict of python_state() that a futex/cond/mutex address belongs to, or None.");
}

}  // namespace pyhang::bindings
