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
  std::array<std::uint64_t, kCount> r{};
  std::uint64_t rip() const { return r[16]; }
  std::uint64_t rsp() const { return r[19]; }
  std::uint64_t rdi() const { return r[14]; }
  std::uint64_t rsi() const { return r[13]; }
  std::uint64_t rdx() const { return r[12]; }
  std::uint64_t orig_rax() const { return r[15]; }
  std::uint64_t fs_base() const { return r[21]; }
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
