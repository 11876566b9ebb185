// System call arguments in target memory (pyhang/linux/syscall_args.hpp).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/linux/syscall_args.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

py::object duration(const std::optional<linux_abi::Duration>& d) {
  return d ? py::object(py::make_tuple(d->seconds, d->nanoseconds)) : py::none();
}

}  // namespace

void register_syscall_args(py::module_& m) {
  m.def(
      "read_pollfds",
      [](Target& t, Addr address, std::uint64_t count) -> py::object {
        auto fds = linux_abi::read_pollfds(t.memory(), address, count);
        if (!fds) return py::none();
        py::list out;
        for (const auto& p : *fds) out.append(py::make_tuple(p.fd, p.events));
        return out;
      },
      py::arg("target"), py::arg("address"), py::arg("count"),
      "poll/ppoll's pollfd array: [(fd, events)] (at most 4096), or None when it cannot be read.");
  m.def(
      "read_fd_set",
      [](Target& t, Addr address, std::uint64_t nfds) { return opt(linux_abi::read_fd_set(t.memory(), address, nfds)); },
      py::arg("target"), py::arg("address"), py::arg("nfds"),
      "select/pselect6's fd_set: the fds set below nfds, or None.");
  m.def(
      "read_timespec", [](Target& t, Addr address) { return duration(linux_abi::read_timespec(t.memory(), address)); },
      py::arg("target"), py::arg("address"), "A struct timespec: (seconds, nanoseconds), or None.");
  m.def(
      "read_timeval", [](Target& t, Addr address) { return duration(linux_abi::read_timeval(t.memory(), address)); },
      py::arg("target"), py::arg("address"), "A struct timeval: (seconds, nanoseconds), or None.");
  m.def(
      "read_flock",
      [](Target& t, Addr address) -> py::object {
        auto r = linux_abi::read_flock(t.memory(), address);
        if (!r) return py::none();
        return py::make_tuple(r->type, r->whence, r->start, r->length, r->pid);
      },
      py::arg("target"), py::arg("address"),
      "A struct flock (fcntl F_SETLKW / F_OFD_SETLKW): (type, whence, start, length, pid), or None.");
}

}  // namespace pyhang::bindings
