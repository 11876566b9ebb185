// .eh_frame CFI from bytes: entries, CIEs, FDEs, CFA programs and CFI
// expressions.  Input: [u64 section address][u64 target offset]
// [u64 rsp][u64 rbp][u16 expression length][expression][.eh_frame bytes].
// The section's own bytes are the memory expressions dereference.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fuzz_input.hpp"
#include "pyhang/unwind/cfi.hpp"

using namespace pyhang;
using namespace pyhang::unwind;

namespace {

void evaluate_row(const Row& row, const ExprContext& ctx) {
  std::uint64_t cfa = 0;
  std::optional<std::uint64_t> push;
  if (row.cfa.kind == CfaKind::Expression) {
    if (!evaluate(row.cfa.expr, ctx, std::nullopt, cfa)) push = cfa;
  } else if (row.cfa.kind == CfaKind::RegOffset) {
    std::uint64_t base = 0;
    if (!register_value(ctx.regs, row.cfa.reg, base)) push = offset_by(base, row.cfa.offset);
  }
  for (const Rule& rule : row.regs) {
    std::uint64_t v = 0;
    if (rule.kind == RuleKind::Expression || rule.kind == RuleKind::ValExpression) evaluate(rule.expr, ctx, push, v);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const Addr section_addr = in.u64();
  const std::uint64_t target_offset = in.u64();
  Regs regs;
  regs.r[kRsp] = in.u64();
  regs.r[kRbp] = in.u64();
  auto expr = in.take(in.u16());
  Bytes section{in.rest(), section_addr};

  ImageReader memory;
  memory.add(section_addr, section.data.data(), section.data.size());
  ExprContext ctx{regs, memory, 0};
  std::uint64_t result = 0;
  evaluate(expr, ctx, regs.r[kRsp], result);

  PointerBases bases;
  bases.text = section_addr;
  bases.data = section_addr;
  std::unordered_map<Addr, Cie> cies;
  Addr at = section_addr;
  for (int i = 0; i < 512; ++i) {
    Entry e;
    if (read_entry(section, at, e) || e.terminator) break;
    if (e.is_cie) {
      Cie c;
      if (!parse_cie(e, c)) cies[e.addr] = c;
    } else if (auto it = cies.find(e.cie_addr); it != cies.end()) {
      Fde fde;
      if (!parse_fde(e, it->second, bases, fde)) {
        const std::uint64_t span = fde.pc_end - fde.pc_begin;
        Row row;
        if (!find_row(it->second, fde, bases, fde.pc_begin + (span ? target_offset % span : 0), row))
          evaluate_row(row, ctx);
      }
    } else {
      Entry ce;
      Cie c;
      if (!read_entry(section, e.cie_addr, ce) && ce.is_cie && !parse_cie(ce, c)) cies[ce.addr] = c;
    }
    if (e.next <= at) break;
    at = e.next;
  }
  return 0;
}
