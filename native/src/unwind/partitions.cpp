#include "pyhang/unwind/partitions.hpp"

#include <algorithm>

#include "pyhang/arch/x86_64/decoder.hpp"
#include "pyhang/target/elf.hpp"
#include "pyhang/unwind/cfi.hpp"

namespace pyhang::unwind {

namespace {

// The target of a direct jmp or jcc (not a call), or nullopt.
std::optional<Addr> jump_target(const x86_64::Insn& insn, Addr at) {
  if (!insn.has_rel) return std::nullopt;
  const bool jmp = insn.map == 0 && (insn.op == 0xe9 || insn.op == 0xeb);
  const bool jcc = (insn.map == 0 && insn.op >= 0x70 && insn.op <= 0x7f) ||
                   (insn.map == 1 && insn.op >= 0x80 && insn.op <= 0x8f);
  if (!jmp && !jcc) return std::nullopt;
  return at + insn.len + static_cast<Addr>(insn.rel);
}

}  // namespace

std::vector<CodeRange> split_partitions(const std::shared_ptr<const ElfFile>& elf, Addr link_pc) {
  std::vector<CodeRange> out;
  if (!elf) return out;
  CfiTable cfi(elf);
  Fde fde;
  const Cie* cie = nullptr;
  if (cfi.find(link_pc, fde, cie) || fde.pc_end <= fde.pc_begin) return out;
  const CodeRange self{fde.pc_begin, fde.pc_end};
  std::vector<std::uint8_t> code(std::min<std::size_t>(self.end - self.begin, kMaxScan));
  code.resize(elf->read_vaddr(self.begin, code.data(), code.size()));
  for (std::size_t p = 0; p < code.size();) {
    auto insn = x86_64::decode(code.data() + p, code.size() - p);
    if (!insn || insn->len == 0) break;
    const Addr at = self.begin + p;
    p += insn->len;
    auto target = jump_target(*insn, at);
    if (!target || (*target >= self.begin && *target < self.end)) continue;
    bool known = false;
    for (const auto& r : out) known |= *target >= r.begin && *target < r.end;
    if (known) continue;
    Fde other;
    if (cfi.find(*target, other, cie) || other.pc_begin == *target) continue;  // no CFI, or a tail call
    out.push_back({other.pc_begin, other.pc_end});
  }
  return out;
}

}  // namespace pyhang::unwind
