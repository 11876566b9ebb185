// Frame 0's registers of a thread nobody stopped: what the kernel records of
// a blocked thread in /proc/PID/task/TID/syscall, read without ptrace, so
// the target never stops.
//
// The record (fs/proc/base.c proc_pid_syscall, from the registers the kernel
// saved on entry to the kernel) is one line:
//   "NR ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 SP PC"  blocked in system call NR
//   "-1 SP PC"                               blocked, not in a system call
//                                            (a page fault, a stop signal)
//   "running"                                on a CPU or runnable: nothing
// The numbers are decimal NR, then hexadecimal (0x...) values.
//
// Known from a call's record, in user_regs_struct names:
//   orig_rax  the call number NR
//   rdi rsi rdx r10 r8 r9  its six arguments (the kernel's argument order;
//             they still hold these values: the kernel returns to user
//             space with only rax, rcx and r11 changed)
//   rsp rip   the stack pointer and pc (the instruction after `syscall`)
//   fs_base   only when the caller supplies it: the thread's struct pthread,
//             from glibc's thread lists (pyhang/glibc/thread_list.hpp)
// Absent, always: rax (the return value, not yet known), rcx and r11
// (clobbered by `syscall`), rbx rbp r12 r13 r14 r15 (callee-saved: the
// record does not have them, and a frame-0 unwind that needs one must stop,
// never guess), eflags, the segment registers and gs_base.
// A "-1 SP PC" record gives rsp and rip only.
//
// A record is a snapshot: the thread may wake and run on the moment after.
// A thread reading its own record sees the read(2) it is making.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pyhang/arch/x86_64/registers.hpp"
#include "pyhang/base/names.hpp"
#include "pyhang/base/types.hpp"

namespace pyhang::linux_abi {

enum class ParkState : std::uint8_t {
  InCall,    // blocked in a system call: number, arguments, rsp, rip
  Blocked,   // blocked but not in a system call ("-1 SP PC"): rsp, rip
  Running,   // running or runnable: no registers
  Gone,        // no such thread (it exited)
  Unreadable,  // the record cannot be read (permission: ptrace access mode is required)
  Garbled,     // a record of a form this reader does not know: no registers
};
inline constexpr std::array<Named<ParkState>, 6> kParkStateNames{{
    {ParkState::InCall, "in-call"},
    {ParkState::Blocked, "blocked"},
    {ParkState::Running, "running"},
    {ParkState::Gone, "gone"},
    {ParkState::Unreadable, "unreadable"},
    {ParkState::Garbled, "garbled"},
}};
constexpr std::string_view to_string(ParkState s) { return name_in(kParkStateNames, s); }

// Registers of which only some are known.
struct ParkedRegisters {
  ParkState state = ParkState::Gone;
  Registers regs;          // a register not known holds 0: never use it, ask known()
  std::uint32_t mask = 0;  // bit i set: regs.r[i] is known (Registers' order)

  bool known(std::size_t i) const { return i < Registers::kCount && (mask >> i) & 1u; }
  std::optional<std::uint64_t> get(std::size_t i) const {
    return known(i) ? std::optional<std::uint64_t>(regs.r[i]) : std::nullopt;
  }
  void set(std::size_t i, std::uint64_t value) {
    regs.r[i] = value;
    mask |= 1u << i;
  }
  // The call number of an InCall record.
  std::optional<std::uint64_t> call() const { return get(Registers::kOrigRax); }
};
static_assert(Registers::kCount <= 32, "ParkedRegisters::mask holds one bit per register");

// One record's text (what the file holds).
ParkedRegisters parse_syscall_record(std::string_view text);

// The record of thread `tid` of process `pid`: Gone when the thread does
// not exist, Unreadable when the file cannot be read.
ParkedRegisters read_syscall_record(int pid, int tid);

}  // namespace pyhang::linux_abi
