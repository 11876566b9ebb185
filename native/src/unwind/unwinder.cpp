#include "pyhang/unwind/unwinder.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace pyhang::unwind {

namespace {

constexpr std::size_t kMaxVdsoSize = 64 * 1024;
constexpr Addr kFirstPage = 4096;
constexpr std::uint8_t kRetOpcode = 0xc3;
constexpr std::uint64_t kAtSysinfoEhdr = 33;  // auxv: where the kernel mapped the vDSO

}  // namespace

Regs known_regs(const linux_abi::ParkedRegisters& parked) {
  Regs regs;
  for (std::size_t i = 0; i < Registers::kCount; ++i)
    if (auto number = dwarf_register(kRegisterNames[i]); number && parked.known(i)) regs.r[*number] = parked.regs.r[i];
  return regs;
}

// ------------------------------------------------------------ Unwinder ----

namespace {

// The caller's value of one register under `rule`, and the stack slot it
// was read from, if any.
Failure caller_value(const Rule& rule, int column, const ExprContext& ctx, Addr cfa,
                     std::optional<std::uint64_t>& value, std::optional<Addr>& slot) {
  value.reset();
  slot.reset();
  std::uint64_t v = 0;
  switch (rule.kind) {
    case RuleKind::Unspecified:
      if (column == kRsp) {  // the CFA is, by definition, the caller's rsp
        value = cfa;
        return std::nullopt;
      }
      value = ctx.regs.r[column];  // gcc leaves callee-saved registers it never touches unmentioned
      return std::nullopt;
    case RuleKind::SameValue: value = ctx.regs.r[column]; return std::nullopt;
    case RuleKind::Undefined: return std::nullopt;
    case RuleKind::ValOffset: value = offset_by(cfa, rule.n); return std::nullopt;
    case RuleKind::Register:
      if (Failure f = register_value(ctx.regs, static_cast<std::uint64_t>(rule.n), v)) return f;
      value = v;
      return std::nullopt;
    case RuleKind::ValExpression:
      if (Failure f = evaluate(rule.expr, ctx, cfa, v)) return f;
      value = v;
      return std::nullopt;
    case RuleKind::Offset: slot = offset_by(cfa, rule.n); break;
    case RuleKind::Expression:
      if (Failure f = evaluate(rule.expr, ctx, cfa, v)) return f;
      slot = v;
      break;
  }
  value = ctx.memory.read_value<std::uint64_t>(*slot);
  if (!value) return Stop::Unreadable;
  return std::nullopt;
}

Failure cfa_of(const Row& row, const ExprContext& ctx, std::uint64_t& cfa) {
  switch (row.cfa.kind) {
    case CfaKind::Unset: return Stop::Unsupported;
    case CfaKind::Expression: return evaluate(row.cfa.expr, ctx, std::nullopt, cfa);
    case CfaKind::RegOffset: break;
  }
  std::uint64_t base = 0;
  if (Failure f = register_value(ctx.regs, row.cfa.reg, base)) return f;
  cfa = offset_by(base, row.cfa.offset);
  return std::nullopt;
}

}  // namespace

Unwinder::Unwinder(MemoryReader& memory, const AddressSpace& space, std::string_view executable)
    : memory_(memory), space_(space) {
  for (const LoadedObject& o : space.objects()) {
    if (executable.empty() || o.path != executable || !o.elf) continue;
    if (auto m = o.elf->symbol("main"); m && m->type == STT_FUNC && m->size > 0) {
      main_begin_ = m->value + o.bias;
      main_end_ = main_begin_ + m->size;
    }
    break;
  }
  for (const Mapping& m : space.mappings())
    if (m.path == "[vdso]") {
      load_vdso(m.start, m.end - m.start);
      break;
    }
}

Unwinder::Unwinder(Target& target) : Unwinder(target.memory(), target.space(), target.executable()) {
  // A core lists no [vdso] mapping; its auxiliary vector says where it was.
  if (!vdso_.elf && target.core_file())
    if (auto at = target.core_file()->auxv_value(kAtSysinfoEhdr)) load_vdso(*at, kMaxVdsoSize);
}

// The vDSO has no file on disk: its ELF image is read from the target, as
// gdb does.
void Unwinder::load_vdso(Addr start, std::size_t size) {
  std::vector<std::uint8_t> bytes(std::min(size, kMaxVdsoSize));
  bytes.resize(memory_.read_partial(start, bytes.data(), bytes.size()));
  if (bytes.size() < sizeof(Elf64_Ehdr)) return;
  const Addr end = start + bytes.size();
  try {
    auto elf = ElfFile::from_image(FileImage::from_bytes(std::move(bytes), "[vdso]"));
    vdso_.path = "[vdso]";
    vdso_.start = start;
    vdso_.end = end;
    vdso_.bias = start - elf->load_base_vaddr();
    vdso_.elf = std::move(elf);
  } catch (const std::exception&) {
    // not an ELF image: frames in it have no CFI
  }
}

const LoadedObject* Unwinder::object_at(Addr addr) const {
  if (vdso_.elf && addr >= vdso_.start && addr < vdso_.end) return &vdso_;
  return space_.object_at(addr);
}

CfiTable& Unwinder::table_for(const LoadedObject& object) {
  std::unique_ptr<CfiTable>& table = tables_[&object];
  if (!table) table = std::make_unique<CfiTable>(object.elf);
  return *table;
}

Failure Unwinder::row_at(Addr addr, Located& out) {
  // The threads of a pool stop at the same few addresses; CFI never changes.
  auto [it, added] = rows_.try_emplace(addr);
  if (added) it->second.first = find_row_at(addr, it->second.second);
  out = it->second.second;
  return it->second.first;
}

Failure Unwinder::find_row_at(Addr addr, Located& out) {
  const LoadedObject* object = object_at(addr);
  if (!object || !object->elf) return Stop::NoCfi;
  CfiTable& table = table_for(*object);
  const Addr link = addr - object->bias;
  Fde fde;
  const Cie* cie = nullptr;
  if (Failure f = table.find(link, fde, cie)) return f;
  if (cie->ra_column != static_cast<std::uint64_t>(kRip)) return Stop::Unsupported;
  if (Failure f = find_row(*cie, fde, table.bases(), link, out.row)) return f;
  out.kind = cie->signal_frame ? Kind::Signal : Kind::Normal;
  out.lookup = addr;
  out.bias = object->bias;
  return std::nullopt;
}

Failure Unwinder::locate(const Regs& regs, std::size_t level, Kind callee, Located& out) {
  const Addr pc = *regs.r[kRip];
  if (level == 0) {
    // gdb unwinds a frame 0 stopped on a `ret` with its epilogue unwinder,
    // ahead of any CFI: the return address is at rsp.
    if (auto byte = memory_.read_value<std::uint8_t>(pc); byte && *byte == kRetOpcode) {
      out.row = Row{};
      out.row.cfa = {CfaKind::RegOffset, kRsp, 8, {}};
      out.row.regs[kRip] = {RuleKind::Offset, -8, {}};
      out.kind = Kind::Normal;
      out.lookup = pc;
      out.bias = 0;
      return std::nullopt;
    }
    return row_at(pc, out);
  }
  // An interrupted frame resumes at pc itself.
  if (callee == Kind::Signal) return row_at(pc, out);
  // A return address can follow a call that never returns, at the very end
  // of the caller: look up the call (pc - 1), as gdb does.  A signal
  // trampoline ('S' in its CIE) is looked up at pc itself: the kernel put
  // that address on the stack, no call did.
  const Failure f = row_at(pc - 1, out);
  if (!f && out.kind == Kind::Normal) return std::nullopt;
  if (f && *f != Stop::NoCfi) return f;
  const Failure g = row_at(pc, out);
  if (!g && out.kind == Kind::Signal) return std::nullopt;
  return g && *g != Stop::NoCfi ? g : Failure(Stop::NoCfi);
}

// gdb lists a frame once it has the frame's identity (its CFA), and stops
// after it when the frame is main, when its return address is undefined,
// when two normal frames save their return address in one slot, or when a
// normal frame's return address is 0.  Each check below is that check, or a
// stricter one: stopping early is always safe, the caller asks gdb then.
Result Unwinder::unwind(const Regs& frame0, std::size_t max_frames) {
  Result out;
  max_frames = std::min(max_frames, kMaxFrames);
  if (max_frames == 0) {
    out.stop = Stop::Depth;
    return out;
  }
  if (!frame0.r[kRip]) {
    out.stop = Stop::RegisterUnknown;
    return out;
  }
  auto stop = [&out](Stop why) {
    out.stop = why;
    return std::move(out);
  };
  out.pcs.push_back(*frame0.r[kRip]);  // gdb always lists frame 0
  if (max_frames == 1) return stop(Stop::Depth);

  Regs regs = frame0;
  Kind callee = Kind::Sentinel;
  std::optional<Addr> callee_ra_slot;
  std::vector<Addr> cfas;  // of the frames listed
  for (std::size_t level = 0;; ++level) {
    const Addr pc = *regs.r[kRip];
    Located here;
    if (Failure f = locate(regs, level, callee, here)) {
      // gdb lists a frame without CFI too (its prologue analyser always
      // gives one an identity), then unwinds it by heuristics.
      if (*f == Stop::NoCfi && level > 0) out.pcs.push_back(pc);
      return stop(*f);
    }
    const ExprContext ctx{regs, memory_, here.bias};
    std::uint64_t cfa = 0;
    if (Failure f = cfa_of(here.row, ctx, cfa)) return stop(*f);
    if (level > 0) {
      // A normal frame's CFA is above its normal callee's; a CFA seen
      // before is a cycle (gdb compares CFA and function; the CFA alone is
      // stricter).
      const bool both_normal = here.kind == Kind::Normal && callee == Kind::Normal;
      if ((both_normal && cfa <= cfas.back()) || std::find(cfas.begin(), cfas.end(), cfa) != cfas.end())
        return stop(Stop::BadFrame);
      out.pcs.push_back(pc);
      if (out.pcs.size() == max_frames) return stop(Stop::Depth);
    }
    cfas.push_back(cfa);
    if (here.kind == Kind::Normal && here.lookup >= main_begin_ && here.lookup < main_end_) return stop(Stop::End);

    const Rule& ra = here.row.regs[kRip];
    if (ra.kind == RuleKind::Undefined) return stop(Stop::End);  // _start, clone3's child: the outermost frame
    if (ra.kind == RuleKind::Unspecified || ra.kind == RuleKind::SameValue) return stop(Stop::BadFrame);
    if (ra.kind == RuleKind::Register) return stop(Stop::Unsupported);
    Regs caller;
    std::optional<Addr> ra_slot;
    if (Failure f = caller_value(ra, kRip, ctx, cfa, caller.r[kRip], ra_slot)) return stop(*f);
    if (level > 0 && here.kind == Kind::Normal && callee == Kind::Normal && ra_slot && ra_slot == callee_ra_slot)
      return stop(Stop::BadFrame);
    // Other registers fail quietly: only a rule that needs one fails.
    for (int column = 0; column < kRip; ++column) {
      std::optional<Addr> slot;
      if (caller_value(here.row.regs[column], column, ctx, cfa, caller.r[column], slot)) caller.r[column].reset();
    }
    const Addr caller_pc = *caller.r[kRip];
    if (caller_pc == 0) {
      // gdb lists a zero pc and stops after it when it follows a normal
      // frame; after a signal frame it would go on by heuristics.
      out.pcs.push_back(0);
      return stop(here.kind == Kind::Normal ? Stop::End : Stop::NoCfi);
    }
    if (caller_pc < kFirstPage) return stop(Stop::BadFrame);
    regs = caller;
    callee = here.kind;
    callee_ra_slot = ra_slot;
  }
}

}  // namespace pyhang::unwind
