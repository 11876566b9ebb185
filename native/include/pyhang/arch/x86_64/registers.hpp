// x86_64 registers: the general registers as Linux gives them (struct
// user_regs_struct: NT_PRSTATUS in cores, PTRACE_GETREGS live) with their
// names, and the DWARF numbering the CFI unwinder uses.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pyhang {

// x86_64 general registers in the order of struct user_regs_struct.
struct Registers {
  static constexpr std::size_t kCount = 27;
  // Indices in r of the registers pyhang reads by name.
  static constexpr std::size_t kRbp = 4, kRbx = 5, kR10 = 7, kR9 = 8, kR8 = 9, kRdx = 12, kRsi = 13, kRdi = 14,
                               kOrigRax = 15, kRip = 16, kRsp = 19, kFsBase = 21;
  std::array<std::uint64_t, kCount> r{};
  std::uint64_t rip() const { return r[kRip]; }
  std::uint64_t rsp() const { return r[kRsp]; }
  std::uint64_t rdi() const { return r[kRdi]; }
  std::uint64_t rsi() const { return r[kRsi]; }
  std::uint64_t rdx() const { return r[kRdx]; }
  std::uint64_t orig_rax() const { return r[kOrigRax]; }
  std::uint64_t fs_base() const { return r[kFsBase]; }
};

// Names of the registers in Registers' (user_regs_struct) order.
inline constexpr const char* kRegisterNames[Registers::kCount] = {
    "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi",
    "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"};

}  // namespace pyhang

namespace pyhang::x86_64 {

// DWARF register numbers of x86_64 (System V psABI): 0 rax, 1 rdx, 2 rcx,
// 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address (rip).
inline constexpr int kDwarfRbp = 6;
inline constexpr int kDwarfRsp = 7;
inline constexpr int kDwarfRip = 16;
inline constexpr int kDwarfRegCount = 17;

// The DWARF number of a user_regs_struct register name ("rip", "r12");
// nullopt for the others (eflags, fs_base, ...).
std::optional<int> dwarf_register(std::string_view name);

}  // namespace pyhang::x86_64
