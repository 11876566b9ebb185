#include "pyhang/arch/x86_64/registers.hpp"

#include <utility>

namespace pyhang::x86_64 {

std::optional<int> dwarf_register(std::string_view name) {
  static constexpr std::pair<std::string_view, int> kNames[] = {
      {"rax", 0}, {"rdx", 1},  {"rcx", 2},  {"rbx", 3},  {"rsi", 4},  {"rdi", 5},  {"rbp", 6},  {"rsp", 7}, {"r8", 8},
      {"r9", 9},  {"r10", 10}, {"r11", 11}, {"r12", 12}, {"r13", 13}, {"r14", 14}, {"r15", 15}, {"rip", 16}};
  for (auto& [n, number] : kNames)
    if (n == name) return number;
  return std::nullopt;
}

}  // namespace pyhang::x86_64
