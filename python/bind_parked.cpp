// What a target nobody stopped gives: each thread's frame 0 registers from
// the kernel's record (pyhang/linux/syscall_record.hpp), each thread's
// struct pthread from glibc's lists (pyhang/glibc/thread_list.hpp), and
// reads that notice memory changing under them (pyhang/target/memory.hpp).
// The records cross as pyhang.model.waits' (python/records.hpp; the tables below):
//
//   parked_registers(target, tid, fs_base=None) -> ParkedRegisters | None
//   thread_descriptors(target)                  -> ThreadDescriptors (problem: ThreadListIssue | None)
//   read_stable(target, address, size)          -> (state, bytes | None, reads)
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/glibc/thread_list.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

// A thread's record as the kernel gave it: its state, and the registers known of it ({name: int}, a container).
struct ParkedAnswer {
  linux_abi::ParkState state;
  py::object registers;
};

// Why the walk of glibc's lists stopped early, or could not start: None when it did neither.
py::object issue_or_none(const glibc::ThreadListIssue& i);

}  // namespace

PYHANG_RECORD(glibc::ThreadListIssue, "pyhang.model.waits", "ThreadListIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(library), PYHANG_FIELD(head), PYHANG_FIELD(head_address),
              PYHANG_FIELD(step), PYHANG_FIELD(entry), PYHANG_FIELD(pthread), PYHANG_FIELD(value),
              PYHANG_FIELD(expected), PYHANG_FIELD(number))
PYHANG_RECORD(glibc::ThreadList, "pyhang.model.waits", "ThreadDescriptors",
              PYHANG_FIELD_AS("threads", py::cast(v.threads)), PYHANG_FIELD(without_tid),
              PYHANG_FIELD_AS("problem", issue_or_none(v.problem)))
PYHANG_RECORD(ParkedAnswer, "pyhang.model.waits", "ParkedRegisters", PYHANG_FIELD(state), PYHANG_FIELD(registers))

namespace {

py::object issue_or_none(const glibc::ThreadListIssue& i) { return i ? to_py(i) : py::none(); }

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
        return to_py(ParkedAnswer{parked->state, std::move(regs)});
      },
      py::arg("target"), py::arg("tid"), py::arg("fs_base") = py::none(),
      "A ParkedRegisters record (state, registers) of a thread of a live target nobody stopped, from /proc/PID/task/TID/syscall (no "
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
        return to_py(list);
      },
      py::arg("target"),
      "A ThreadDescriptors record (threads: {tid: struct pthread address (the thread's fs_base)}, without_tid, "
      "problem) from glibc's lists of threads (_dl_stack_used, _dl_stack_user) in target memory; problem says why "
      "the walk stopped early or could not start (a ThreadListIssue: kind and the addresses it is about; None: "
      "complete).  A live target that ran since the last read needs "
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
