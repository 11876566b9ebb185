// CPython state of a target as plain Python dicts and lists.
#include <pybind11/stl.h>

#include <string>
#include <unordered_map>

#include "bindings.hpp"
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
  py::dict frame(const cpython::PyFrame& f) {
    py::dict d;
    d[keys_.function] = text(f.function);
    d[keys_.file] = text(f.file);
    d[keys_.line] = py::int_(f.line);
    d[keys_.entry_frame] = py::bool_(f.entry_frame);
    d[keys_.frame] = py::int_(f.frame);
    d[keys_.code] = py::int_(f.code);
    return d;
  }

 private:
  struct Keys {
    py::str function{"function"}, file{"file"}, line{"line"}, entry_frame{"entry_frame"}, frame{"frame"},
        code{"code"};
  } keys_;
  std::unordered_map<std::string, py::str> texts_;

  const py::str& text(const std::string& s) {
    auto it = texts_.find(s);
    if (it == texts_.end()) it = texts_.emplace(s, py::str(s)).first;
    return it->second;
  }
};

py::dict thread_dict(const cpython::PyThreadInfo& t, FrameConverter& conv) {
  py::dict d;
  d["tstate"] = t.tstate;
  d["interp"] = t.interp;
  d["interp_id"] = t.interp_id;
  d["thread_id"] = t.thread_id;
  d["native_tid"] = opt(t.native_tid);
  py::list frames(t.frames.size());
  for (std::size_t i = 0; i < t.frames.size(); ++i) frames[i] = conv.frame(t.frames[i]);
  d["frames"] = frames;
  d["problem"] = t.problem.empty() ? py::object(py::none()) : py::str(t.problem);
  d["attached"] = opt(t.attached);
  d["holds_gil"] = t.holds_gil;
  return d;
}

py::dict gil_dict(const cpython::GilInfo& g) {
  py::dict d;
  d["address"] = g.address;
  d["size"] = g.size;
  d["locked"] = opt(g.locked);
  d["holder_tstate"] = g.holder_tstate;
  d["switch_number"] = opt(g.switch_number);
  d["interp_id"] = g.interp_id;
  d["source"] = g.source;
  py::list ranges;  // [(start, size), ...]: each piece of the GIL (GilInfo::ranges)
  for (const auto& r : g.ranges) ranges.append(py::make_tuple(r.start, r.size));
  d["ranges"] = ranges;
  return d;
}

py::dict state_dict(const cpython::PythonState& s) {
  py::dict d;
  d["status"] = py::str(to_string(s.status));
  d["version"] = s.version.empty() ? py::object(py::none()) : py::str(s.version);
  d["major"] = s.major;
  d["minor"] = s.minor;
  d["patch"] = s.patch;
  d["library"] = s.library;
  d["layout"] = s.layout;
  d["runtime"] = s.runtime;
  py::list gils, threads;
  for (const auto& g : s.gils) gils.append(gil_dict(g));
  FrameConverter conv;
  for (const auto& t : s.threads) threads.append(thread_dict(t, conv));
  d["gils"] = gils;
  d["threads"] = threads;
  d["warnings"] = s.warnings;
  return d;
}

}  // namespace

void register_cpython(py::module_& m) {
  bind_enum(m, "Status", cpython::kStatusNames, "What was found of the interpreter (python_state()['status']).");
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
      .def("state", [](const cpython::Interpreter& i) { return state_dict(i.state()); },
           "The same dict as python_state(target) (a new dict each call).")
      .def_property_readonly("status", [](const cpython::Interpreter& i) { return i.state().status; })
      .def_property_readonly("target", &cpython::Interpreter::shared_target);
  m.def(
      "python_state",
      [](Target& target, bool frames, std::size_t max_frames) {
        cpython::Options opts;
        opts.frames = frames;
        opts.max_frames = max_frames;
        cpython::PythonState s;
        {
          py::gil_scoped_release nogil;  // a callback target takes it back to read
          s = cpython::inspect(target, opts);
        }
        return state_dict(s);
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
