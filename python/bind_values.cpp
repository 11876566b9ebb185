// Python values as text and the locals of a frame (pyhang/cpython/values.hpp,
// pyhang/cpython/locals.hpp).
//
//   values = PythonValues(interpreter, depth=3, items=10, str_chars=200, output=1024, reads=512)
//   values.render(address) -> {address, type, repr, complete, problem}
//   values.frame_locals(frame, code) -> {locals: [{name, kind, address, type, repr, complete, problem}],
//                                        f_locals, globals, builtins, problem}
//       kind: "argument" | "local" | "cell" | "free" | "f_locals"
//   values.lookup(dict, name) -> address of dict[name] (str key), or None
// Addresses are ints (None when 0); problem: what could not be read, a ReadProblem's data
// (read_problem; model.unread), None when all was read.  Never raises
// on bad target memory.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/cpython/locals.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/cpython/values.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {


py::dict value_dict(const cpython::RenderedValue& v) {
  py::dict d;
  d["address"] = addr(v.address);
  d["type"] = v.type;
  d["repr"] = v.repr;
  d["complete"] = v.complete;
  d["problem"] = read_problem(v.problem);
  return d;
}

class PythonValues {
 public:
  PythonValues(std::shared_ptr<cpython::Interpreter> interp, const cpython::ValueLimits& limits)
      : interp_(std::move(interp)),
        renderer_(interp_->target().memory(), interp_->state(), limits),
        objects_(interp_->target().memory(), interp_->state()) {}

  py::dict render(Addr a) {
    cpython::RenderedValue v;
    {
      py::gil_scoped_release nogil;  // a callback target takes it back to read
      v = renderer_.render(a);
    }
    return value_dict(v);
  }

  py::dict frame_locals(Addr frame, Addr code) {
    cpython::FrameLocals fl;
    std::vector<cpython::RenderedValue> values;
    {
      py::gil_scoped_release nogil;
      cpython::PyFrame f;
      f.frame = frame;
      f.code = code;
      fl = cpython::frame_locals(interp_->target().memory(), interp_->state(), f);
      for (const auto& l : fl.locals) values.push_back(renderer_.render(l.value));
    }
    py::list locals;
    for (std::size_t i = 0; i < fl.locals.size(); ++i) {
      py::dict d = value_dict(values[i]);
      d["name"] = fl.locals[i].name;
      d["kind"] = std::string(to_string(fl.locals[i].kind));
      locals.append(d);
    }
    py::dict d;
    d["locals"] = locals;
    d["f_locals"] = addr(fl.f_locals);
    d["globals"] = addr(fl.globals);
    d["builtins"] = addr(fl.builtins);
    d["problem"] = read_problem(fl.problem);
    return d;
  }

  py::object lookup(Addr dict, const std::string& name) {
    Addr v;
    {
      py::gil_scoped_release nogil;
      v = objects_.dict_get(dict, name);
    }
    return addr(v);
  }

  bool ok() const { return renderer_.ok(); }

 private:
  std::shared_ptr<cpython::Interpreter> interp_;
  cpython::ValueRenderer renderer_;
  cpython::PyObjects objects_;
};

}  // namespace

void register_values(py::module_& m) {
  bind_enum(m, "LocalKind", cpython::kLocalKindNames, "Where a frame's local lives (frame_locals()['locals'][i]['kind']).");
  py::class_<PythonValues>(m, "PythonValues",
                           "Python values of the target as text, and the locals of its frames, read with the "
                           "layouts of an Interpreter.")
      .def(py::init([](std::shared_ptr<cpython::Interpreter> interp, std::size_t depth, std::size_t items,
                       std::size_t str_chars, std::size_t output, std::size_t reads) {
             cpython::ValueLimits lim;
             lim.depth = depth;
             lim.items = items;
             lim.str_chars = str_chars;
             lim.output = output;
             lim.reads = reads;
             return std::make_unique<PythonValues>(std::move(interp), lim);
           }),
           py::arg("interpreter"), py::arg("depth") = 3, py::arg("items") = 10, py::arg("str_chars") = 200,
           py::arg("output") = 1024, py::arg("reads") = 512)
      .def_property_readonly("ok", &PythonValues::ok)
      .def("render", &PythonValues::render, py::arg("address"),
           "{address, type, repr, complete, problem}: the value at address as text, bounded.")
      .def("frame_locals", &PythonValues::frame_locals, py::arg("frame"), py::arg("code"),
           "The locals of the frame (a frame dict's 'frame' and 'code'), each rendered.")
      .def("lookup", &PythonValues::lookup, py::arg("dict"), py::arg("name"),
           "The address of dict[name] for a str key, or None.");
}

}  // namespace pyhang::bindings
