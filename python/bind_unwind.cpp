// The native unwinder: a thread's top native frame pcs from its frame 0
// registers, without gdb's frame machinery.
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.hpp"
#include "pyhang/unwind/unwinder.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

// user_regs_struct names to DWARF numbers; names the unwinder has no use
// for (eflags, fs_base, ...) are ignored, None means unknown.
unwind::Regs regs_from_dict(const py::dict& registers) {
  unwind::Regs regs;
  for (auto [key, value] : registers) {
    if (!py::isinstance<py::str>(key) || value.is_none()) continue;
    auto number = unwind::dwarf_register(key.cast<std::string>());
    if (!number) continue;
    if (!PyLong_Check(value.ptr())) throw py::type_error("register " + key.cast<std::string>() + " is not an int");
    // gdb gives negative values for registers with the top bit set.
    regs.r[*number] = PyLong_AsUnsignedLongLongMask(value.ptr());
  }
  return regs;
}

}  // namespace

void register_unwind(py::module_& m) {
  bind_enum(m, "Stop", unwind::kStopNames, "Why a native unwind stopped (the second item of Unwinder.unwind()).");
  py::class_<unwind::Unwinder>(m, "Unwinder",
                               "Unwinds threads of one target from .eh_frame CFI, as gdb's unwinder would; keeps "
                               "each object's parsed CFI, so make one per target and reuse it.")
      .def(py::init([](const std::shared_ptr<Target>& target) { return std::make_unique<unwind::Unwinder>(*target); }),
           py::arg("target"), py::keep_alive<1, 2>())
      .def(
          "unwind",
          [](unwind::Unwinder& u, const py::dict& registers, std::size_t max_frames) {
            const unwind::Regs regs = regs_from_dict(registers);
            unwind::Result r;
            {
              py::gil_scoped_release nogil;  // a callback target takes it back to read
              r = u.unwind(regs, max_frames);
            }
            return py::make_tuple(py::cast(r.pcs), py::str(std::string(unwind::stop_name(r.stop))));
          },
          py::arg("registers"), py::arg("max_frames"),
          "(pcs, stop) from frame 0's registers {name: int}: pcs innermost first (frame 0's rip, then return "
          "addresses, as gdb.Frame.pc()), stop one of 'end', 'depth' (trust the pcs), 'no-cfi', 'unreadable', "
          "'unsupported', 'bad-frame', 'register-unknown' (a rule needs a register not given nor saved by a "
          "callee: frame pointers with only rsp and rip known) (the pcs are a correct prefix; ask gdb for the rest).");
}

}  // namespace pyhang::bindings
