// A live process stopped by pyhang itself, without a debugger
// (pyhang/linux/process_stop.hpp): a handle, not a fact.
//
//   ProcessStop.stop(pid, wait_ms=2000) -> ProcessStop
//     .pid, .stopped [tid], .not_stopped [tid], .problem (StopProblem text, "" when stopped),
//     .error (errno), .held_signals [(tid, signal)], .active, .resume(); a context manager
//     that resumes on exit.
// While it is active, Target.registers(tid) answers for each stopped thread, asked from the thread
// that made the stop.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/linux/process_stop.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

void register_stop(py::module_& m) {
  using linux_abi::ProcessStop;
  bind_enum(m, "StopProblem", linux_abi::kStopProblemNames,
            "Why a live process could not be stopped (ProcessStop's 'problem'; '' when it was).");
  py::class_<ProcessStop>(m, "ProcessStop",
                          "Every thread of a live process stopped by PTRACE_SEIZE and PTRACE_INTERRUPT (no signal "
                          "sent), until resume() or the end of a `with` block detaches them; signals that arrived "
                          "meanwhile are delivered then.")
      .def_static(
          "stop",
          [](int pid, unsigned wait_ms) {
            linux_abi::StopLimits limits;
            limits.wait_ms = wait_ms;
            py::gil_scoped_release nogil;
            return ProcessStop::stop(pid, limits);
          },
          py::arg("pid"), py::arg("wait_ms") = linux_abi::StopLimits{}.wait_ms,
          "Stops every thread /proc/PID/task lists (listed again until no thread is new); a thread that has not "
          "stopped within wait_ms is in not_stopped.  problem says why none could be stopped.")
      .def_property_readonly("pid", &ProcessStop::pid)
      .def_property_readonly("stopped", &ProcessStop::stopped)
      .def_property_readonly("not_stopped", &ProcessStop::not_stopped)
      .def_property_readonly("problem", [](const ProcessStop& s) { return std::string(to_string(s.problem())); })
      .def_property_readonly("error", &ProcessStop::error)
      .def_property_readonly("held_signals", &ProcessStop::held_signals)
      .def_property_readonly("active", &ProcessStop::active)
      .def("resume", &ProcessStop::resume, "Detaches every thread: the process runs on (idempotent).")
      .def("__enter__", [](ProcessStop& s) -> ProcessStop& { return s; }, py::return_value_policy::reference)
      .def("__exit__", [](ProcessStop& s, py::args) {
        s.resume();
        return false;
      });
}

}  // namespace pyhang::bindings
