// Python values as text and the locals of a frame (pyhang/cpython/values.hpp,
// pyhang/cpython/locals.hpp), as the records of pyhang.model.python_values
// (python/records.hpp; the tables below):
//
//   values = PythonValues(interpreter, depth=3, items=10, str_chars=200, output=1024, reads=512)
//   values.render(address) -> LocalValue: its address, type, repr, complete, problem (no name, no kind)
//   values.frame_locals(frame, code) -> FrameLocals: locals [LocalValue], f_locals, globals, builtins, problem
//       a local's kind: "argument" | "local" | "cell" | "free" | "f_locals" (model.kinds.LocalKind)
//   values.lookup(dict, name) -> address of dict[name] (str key), or None
// Addresses are ints (None when 0); problem: what could not be read, a model.unread.ReadProblem
// (read_problem), None when all was read.  Never raises on bad target memory.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/cpython/locals.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/cpython/values.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

// One local of a frame and its value rendered: the same record as a value rendered alone, named.
struct RenderedLocal {
  const cpython::FrameLocal& local;
  const cpython::RenderedValue& value;
};
// A frame's locals, each with its value rendered (values[i] is locals[i]'s).
struct RenderedLocals {
  const cpython::FrameLocals& locals;
  const std::vector<cpython::RenderedValue>& values;
};

}  // namespace

PYHANG_RECORD(cpython::RenderedValue, "pyhang.model.python_values", "LocalValue",
              PYHANG_FIELD_AS("address", addr(v.address)), PYHANG_FIELD(type), PYHANG_FIELD(repr),
              PYHANG_FIELD(complete), PYHANG_FIELD_AS("problem", read_problem(v.problem)))
PYHANG_RECORD(RenderedLocal, "pyhang.model.python_values", "LocalValue",
              PYHANG_FIELD_AS("name", v.local.name), PYHANG_FIELD_AS("kind", v.local.kind),
              PYHANG_FIELD_AS("address", addr(v.value.address)), PYHANG_FIELD_AS("type", v.value.type),
              PYHANG_FIELD_AS("repr", v.value.repr), PYHANG_FIELD_AS("complete", v.value.complete),
              PYHANG_FIELD_AS("problem", read_problem(v.value.problem)))

namespace {

py::object rendered_locals(const RenderedLocals& v) {
  py::list out(v.locals.locals.size());
  for (std::size_t i = 0; i < v.locals.locals.size(); ++i)
    out[i] = to_py(RenderedLocal{v.locals.locals[i], v.values[i]});
  return std::move(out);
}

}  // namespace

PYHANG_RECORD(RenderedLocals, "pyhang.model.python_values", "FrameLocals",
              PYHANG_FIELD_AS("locals", rendered_locals(v)), PYHANG_FIELD_AS("f_locals", addr(v.locals.f_locals)),
              PYHANG_FIELD_AS("globals", addr(v.locals.globals)), PYHANG_FIELD_AS("builtins", addr(v.locals.builtins)),
              PYHANG_FIELD_AS("problem", read_problem(v.locals.problem)))

namespace {

class PythonValues {
 public:
  PythonValues(std::shared_ptr<cpython::Interpreter> interp, const cpython::ValueLimits& limits)
      : interp_(std::move(interp)),
        renderer_(interp_->target().memory(), interp_->state(), limits),
        objects_(interp_->target().memory(), interp_->state()) {}

  py::object render(Addr a) {
    cpython::RenderedValue v;
    {
      py::gil_scoped_release nogil;  // a callback target takes it back to read
      v = renderer_.render(a);
    }
    return to_py(v);
  }

  py::object frame_locals(Addr frame, Addr code) {
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
    return to_py(RenderedLocals{fl, values});
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
  bind_enum(m, "LocalKind", cpython::kLocalKindNames,
            "Where a frame's local lives (a LocalValue's kind: frame_locals().locals).");
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
           "A model.python_values.LocalValue without name or kind: the value at address as text, bounded.")
      .def("frame_locals", &PythonValues::frame_locals, py::arg("frame"), py::arg("code"),
           "A model.python_values.FrameLocals: the locals of the frame (a frame dict's 'frame' and 'code'), each "
           "rendered.")
      .def("lookup", &PythonValues::lookup, py::arg("dict"), py::arg("name"),
           "The address of dict[name] for a str key, or None.");
}

}  // namespace pyhang::bindings
