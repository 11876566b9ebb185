// What a target nobody stopped gives: each thread's frame 0 registers from
// the kernel's record (pyhang/linux/syscall_record.hpp), each thread's
// struct pthread from glibc's lists (pyhang/glibc/thread_list.hpp), and
// reads that notice memory changing under them (pyhang/target/memory.hpp).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/glibc/thread_list.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

// Why the walk of glibc's lists stopped early, or could not start: None when it did neither.
py::object thread_list_issue_dict(const glibc::ThreadListIssue& i) {
  if (!i) return py::none();
  py::dict d;
  d[key("kind")] = py::str(to_string(i.kind));
  d[key("library")] = i.library;
  d[key("head")] = i.head;
  d[key("head_address")] = i.head_address;
  d[key("step")] = i.step;
  d[key("entry")] = i.entry;
  d[key("pthread")] = i.pthread;
  d[key("value")] = i.value;
  d[key("expected")] = i.expected;
  d[key("number")] = i.number;
  return d;
}

}  // namespace

void register_parked(py::module_& m) {
  bind_enum(m, "ThreadListProblem", glibc::kThreadListProblemNames,
            "Why glibc's lists of threads were not found or not walked to the end (thread_descriptors()' 'problem').");
  bind_enum(m, "ParkState", linux_abi::kParkStateNames,
            "What the kernel records of a thread (the 'state' of parked_registers()).");
  bind_enum(m, "Stability", kStabilityNames, "Whether memory held still while read (read_stable()).");
  m.def(
      "parked_registers",
      [](Target& t, int tid, std::optional<Addr> fs_base) -> py::object {
        auto parked = t.parked_registers(tid);
        if (!parked) return py::none();
        if (fs_base && (parked->state == linux_abi::ParkState::InCall || parked->state == linux_abi::ParkState::Blocked))
          parked->set(Registers::kFsBase, *fs_base);
        py::dict regs;
        for (std::size_t i = 0; i < Registers::kCount; ++i)
          if (parked->known(i)) regs[key(kRegisterNames[i])] = parked->regs.r[i];
        py::dict d;
        d[key("state")] = std::string(to_string(parked->state));
        d[key("registers")] = regs;
        return d;
      },
      py::arg("target"), py::arg("tid"), py::arg("fs_base") = py::none(),
      "{state, registers} of a thread of a live target nobody stopped, from /proc/PID/task/TID/syscall (no "
      "ptrace): state a ParkState text; registers {name: int} holds only the known ones (in a call: orig_rax, "
      "rdi, rsi, rdx, r10, r8, r9, rsp, rip; 'blocked': rsp, rip; else none), plus fs_base when given for a "
      "thread that has registers.  Callee-saved registers are never present.  None for a core or callback target.");
  m.def(
      "thread_descriptors",
      [](Target& t) {
        glibc::ThreadList list;
        {
          py::gil_scoped_release nogil;
          list = glibc::thread_list(t);
        }
        py::dict d;
        d[key("threads")] = list.threads;
        d[key("without_tid")] = list.without_tid;
        d[key("problem")] = thread_list_issue_dict(list.problem);
        return d;
      },
      py::arg("target"),
      "{threads: {tid: struct pthread address (the thread's fs_base)}, without_tid, problem} from glibc's "
      "lists of threads (_dl_stack_used, _dl_stack_user) in target memory; problem says why the walk stopped "
      "early or could not start (a dict: kind and the addresses it is about; None: complete).  A live target that ran since the last read needs "
      "invalidate() first.");
  m.def(
      "read_stable",
      [](Target& t, Addr address, std::size_t size, unsigned max_reads) {
        StableRead r = read_stable(t.memory(), address, size, max_reads);
        py::object bytes = r.state == Stability::Stable
                               ? py::object(py::bytes(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()))
                               : py::object(py::none());
        return py::make_tuple(std::string(to_string(r.state)), bytes, r.reads);
      },
      py::arg("target"), py::arg("address"), py::arg("size"), py::arg("max_reads") = kStableReads,
      "(state, bytes or None, reads): the range read (uncached) until two reads in a row agree, at most "
      "max_reads times; state 'stable' (bytes), 'unstable' (it kept changing) or 'unreadable'.");
}

}  // namespace pyhang::bindings
