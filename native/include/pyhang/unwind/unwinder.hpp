// Native stack unwinding for x86_64 Linux from the .eh_frame CFI of the ELF
// files on disk: given frame 0's registers of one thread, the pcs of its top
// frames exactly as gdb's own unwinder lists them (gdb.Frame.pc(): frame 0's
// rip, then return addresses), without gdb's frame machinery.  Machine
// frames only: gdb's INLINE_FRAME and TAILCALL_FRAME entries are built from
// debug info (libc6-dbg gives libc's futex waits tail-call frames) and have
// no counterpart on the stack.
//
// gdb's rules followed: a caller is looked up at pc - 1 (its call), a frame
// after a signal trampoline at pc; frame 0 on a `ret` is unwound from rsp
// (gdb's epilogue unwinder); the unwind ends after `main` of the executable,
// at an undefined return address, and at a zero pc after a normal frame.
//
// The CFI it reads is decoded by pyhang/unwind/cfi.hpp.
//
// Garbage CFI or stack never throws, crashes or loops: every failure is a
// Stop reason, returned with the pcs gathered before it.
//
// Frame 0's registers may be partial (a thread nobody stopped gives rsp and
// rip only: pyhang/linux/syscall_record.hpp): registers not known stay
// unknown in every caller frame unless a frame saved them on the stack, and
// a rule that needs one stops with RegisterUnknown; rules that need only
// the CFA (rsp + N) and stack slots carry on, as in glibc's system call
// wrappers and code built without frame pointers.  The pcs returned
// are always a prefix of gdb's list; wherever gdb could disagree, the
// unwinder stops with a reason other than End/Depth and the caller asks gdb.
#pragma once

#include <cstddef>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pyhang/target/memory.hpp"
#include "pyhang/target/target.hpp"
#include "pyhang/unwind/cfi.hpp"

namespace pyhang::unwind {

struct Result {
  std::vector<Addr> pcs;  // frame 0's rip first, then return addresses
  Stop stop = Stop::End;
};

// Frame 0's registers of a thread nobody stopped, by DWARF number: the
// known ones only (rsp, rip and the argument registers), the rest unknown.
Regs known_regs(const linux_abi::ParkedRegisters& parked);

// ---------------------------------------------------------- unwinder ----

// Unwinds threads of one target; it keeps each object's parsed CFI, so make
// one per target and reuse it for every thread.  Not thread-safe.
class Unwinder {
 public:
  static constexpr std::size_t kMaxFrames = 4096;

  // `executable` is the program's path as mapped: gdb does not unwind past
  // its `main` (backtrace past-main is off by default), nor does this.
  Unwinder(MemoryReader& memory, const AddressSpace& space, std::string_view executable = {});
  explicit Unwinder(Target& target);  // also finds a core's vDSO from its auxv

  // The pcs of the top max_frames frames (at most kMaxFrames) from frame 0's
  // registers, and why unwinding stopped.
  Result unwind(const Regs& frame0, std::size_t max_frames);

 private:
  enum class Kind : std::uint8_t { Sentinel, Normal, Signal };
  struct Located {
    Row row;
    Kind kind = Kind::Normal;
    Addr lookup = 0;  // the address the CFI was looked up with (pc or pc - 1)
    Addr bias = 0;
  };
  Failure locate(const Regs& regs, std::size_t level, Kind callee, Located& out);
  Failure row_at(Addr addr, Located& out);  // find_row_at, remembered for each address
  Failure find_row_at(Addr addr, Located& out);
  const LoadedObject* object_at(Addr addr) const;
  CfiTable& table_for(const LoadedObject& object);
  void load_vdso(Addr start, std::size_t size);

  MemoryReader& memory_;
  const AddressSpace& space_;
  Addr main_begin_ = 0, main_end_ = 0;  // the executable's main, runtime addresses
  LoadedObject vdso_;                   // read from memory: no file on disk
  std::unordered_map<const LoadedObject*, std::unique_ptr<CfiTable>> tables_;
  std::unordered_map<Addr, std::pair<Failure, Located>> rows_;
};

}  // namespace pyhang::unwind
