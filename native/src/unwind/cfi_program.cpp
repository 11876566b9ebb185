// CFA programs (the rows of the CFI table) and CFI expressions (DWARF 5
// sections 6.4.2 and 2.5), run over bytes that cfi.cpp found.
#include <cstring>
#include <utility>

#include "pyhang/unwind/cfi.hpp"

namespace pyhang::unwind {

namespace {

// Bounds that no real CFI comes near and that keep garbage cheap.
constexpr std::size_t kMaxProgramSteps = 100000;  // CFA instructions in one program
constexpr std::size_t kRememberDepth = 64;        // DW_CFA_remember_state nesting
constexpr std::size_t kExprStack = 64;
constexpr std::size_t kMaxExprSteps = 1000;

// Garbage CFI must not be undefined behaviour: factored offsets and
// address arithmetic wrap.
std::int64_t factored(std::uint64_t value, std::int64_t factor) {
  return static_cast<std::int64_t>(value * static_cast<std::uint64_t>(factor));
}

// A location advanced past the end of the address space is past any target.
Addr advance(Addr loc, std::uint64_t delta, std::uint64_t code_align) {
  Addr step = 0, next = 0;
  if (__builtin_mul_overflow(delta, code_align, &step) || __builtin_add_overflow(loc, step, &next)) return ~Addr{0};
  return next;
}

}  // namespace

// ------------------------------------------------------ CFA programs ----

namespace {

void set_rule(Row& row, std::uint64_t column, RuleKind kind, std::int64_t n = 0,
              std::span<const std::uint8_t> expr = {}) {
  if (column < static_cast<std::uint64_t>(kRegCount)) row.regs[column] = Rule{kind, n, expr};
}

void restore_rule(Row& row, const Row& initial, std::uint64_t column) {
  if (column < static_cast<std::uint64_t>(kRegCount)) row.regs[column] = initial.regs[column];
}

}  // namespace

// The DW_CFA_* opcodes are DWARF 5 section 6.4.2 (and GNU's 0x2e, 0x2f).
// Operands are applied as read; a truncated program fails at the end of the
// loop, and the row is then thrown away by the caller.
Failure execute_cfa(const Bytes& program, const Cie& cie, const PointerBases& bases, Addr target, Addr& loc,
                    const Row& initial, Row& row) {
  Cursor c(program);
  std::vector<Row> remembered;
  const std::int64_t da = cie.data_align;
  for (std::size_t steps = 0; !c.at_end() && loc <= target; ++steps) {
    if (steps == kMaxProgramSteps) return Stop::Unsupported;
    const std::uint8_t op = c.u8();
    const std::uint8_t low = op & 0x3f;
    if ((op & 0xc0) == 0x40) {
      loc = advance(loc, low, cie.code_align);  // advance_loc
    } else if ((op & 0xc0) == 0x80) {
      set_rule(row, low, RuleKind::Offset, factored(c.uleb(), da));  // offset
    } else if ((op & 0xc0) == 0xc0) {
      restore_rule(row, initial, low);  // restore
    } else {
      switch (op) {
        case 0x00: break;  // nop
        case 0x01: {       // set_loc
          const auto to = read_encoded(c, cie.fde_encoding, bases);
          if (!to) return c.failed() ? Stop::Unreadable : Stop::Unsupported;
          loc = *to;
          break;
        }
        case 0x02: loc = advance(loc, c.u8(), cie.code_align); break;   // advance_loc1
        case 0x03: loc = advance(loc, c.u16(), cie.code_align); break;  // advance_loc2
        case 0x04: loc = advance(loc, c.u32(), cie.code_align); break;  // advance_loc4
        case 0x05: {                                                    // offset_extended
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::Offset, factored(c.uleb(), da));
          break;
        }
        case 0x06: restore_rule(row, initial, c.uleb()); break;          // restore_extended
        case 0x07: set_rule(row, c.uleb(), RuleKind::Undefined); break;  // undefined
        case 0x08: set_rule(row, c.uleb(), RuleKind::SameValue); break;  // same_value
        case 0x09: {                                                     // register
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::Register, static_cast<std::int64_t>(c.uleb()));
          break;
        }
        case 0x0a:  // remember_state: every rule, the CFA's included (as gcc and gdb do)
          if (remembered.size() == kRememberDepth) return Stop::Unsupported;
          remembered.push_back(row);
          break;
        case 0x0b:  // restore_state
          if (remembered.empty()) return Stop::Unsupported;
          row = remembered.back();
          remembered.pop_back();
          break;
        case 0x0c: {  // def_cfa
          const auto reg = c.uleb();
          row.cfa = {CfaKind::RegOffset, reg, static_cast<std::int64_t>(c.uleb()), {}};
          break;
        }
        case 0x0d:  // def_cfa_register
          row.cfa.reg = c.uleb();
          row.cfa.kind = CfaKind::RegOffset;
          break;
        case 0x0e:  // def_cfa_offset
          row.cfa.offset = static_cast<std::int64_t>(c.uleb());
          row.cfa.kind = CfaKind::RegOffset;
          break;
        case 0x0f:  // def_cfa_expression
          row.cfa = {CfaKind::Expression, 0, 0, c.take(c.uleb()).data};
          break;
        case 0x10: {  // expression
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::Expression, 0, c.take(c.uleb()).data);
          break;
        }
        case 0x11: {  // offset_extended_sf
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::Offset, factored(static_cast<std::uint64_t>(c.sleb()), da));
          break;
        }
        case 0x12: {  // def_cfa_sf
          const auto reg = c.uleb();
          row.cfa = {CfaKind::RegOffset, reg, factored(static_cast<std::uint64_t>(c.sleb()), da), {}};
          break;
        }
        case 0x13:  // def_cfa_offset_sf
          row.cfa.offset = factored(static_cast<std::uint64_t>(c.sleb()), da);
          row.cfa.kind = CfaKind::RegOffset;
          break;
        case 0x14: {  // val_offset
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::ValOffset, factored(c.uleb(), da));
          break;
        }
        case 0x15: {  // val_offset_sf
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::ValOffset, factored(static_cast<std::uint64_t>(c.sleb()), da));
          break;
        }
        case 0x16: {  // val_expression
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::ValExpression, 0, c.take(c.uleb()).data);
          break;
        }
        case 0x2e: c.uleb(); break;  // GNU_args_size: how much the caller pushed; no rule changes
        case 0x2f: {                 // GNU_negative_offset_extended
          const auto reg = c.uleb();
          set_rule(row, reg, RuleKind::Offset, factored(0 - c.uleb(), da));
          break;
        }
        default: return Stop::Unsupported;  // GNU_window_save (SPARC), vendor opcodes
      }
    }
    if (c.failed()) return Stop::Unreadable;
  }
  if (c.failed()) return Stop::Unreadable;
  return std::nullopt;
}

Failure find_row(const Cie& cie, const Fde& fde, const PointerBases& bases, Addr target, Row& out) {
  out = Row{};
  // As gdb: the CIE's instructions start at the FDE's first address, and
  // the FDE's continue from wherever they left the location.
  Addr loc = fde.pc_begin;
  if (Failure f = execute_cfa(cie.instructions, cie, bases, target, loc, Row{}, out)) return f;
  const Row initial = out;
  return execute_cfa(fde.instructions, cie, bases, target, loc, initial, out);
}

// ---------------------------------------------------- CFI expressions ----

namespace {

class ExprStack {
 public:
  bool push(std::uint64_t v) {
    if (size_ == kExprStack) return false;
    values_[size_++] = v;
    return true;
  }
  bool has(std::size_t n) const { return size_ >= n; }
  std::uint64_t pop() { return values_[--size_]; }
  std::uint64_t& at(std::size_t depth) { return values_[size_ - 1 - depth]; }  // 0: the top

 private:
  std::array<std::uint64_t, kExprStack> values_;
  std::size_t size_ = 0;
};

// DW_OP_and ... DW_OP_ne: both operands popped, the second entry on the left.
// Comparisons and division are signed, as DWARF's generic type is (and gdb's).
std::optional<std::uint64_t> binary(std::uint8_t op, std::uint64_t a, std::uint64_t b) {
  const auto sa = static_cast<std::int64_t>(a), sb = static_cast<std::int64_t>(b);
  switch (op) {
    case 0x1a: return a & b;
    case 0x1b:
      if (b == 0 || (sa == INT64_MIN && sb == -1)) return std::nullopt;
      return static_cast<std::uint64_t>(sa / sb);
    case 0x1c: return a - b;
    case 0x1d: return b == 0 ? std::nullopt : std::optional<std::uint64_t>(a % b);
    case 0x1e: return a * b;
    case 0x21: return a | b;
    case 0x22: return a + b;
    case 0x24: return b >= 64 ? 0 : a << b;
    case 0x25: return b >= 64 ? 0 : a >> b;
    case 0x26: return static_cast<std::uint64_t>(sa >> std::min<std::uint64_t>(b, 63));
    case 0x27: return a ^ b;
    case 0x29: return sa == sb;
    case 0x2a: return sa >= sb;
    case 0x2b: return sa > sb;
    case 0x2c: return sa <= sb;
    case 0x2d: return sa < sb;
    case 0x2e: return sa != sb;
    default: return std::nullopt;
  }
}

bool is_binary(std::uint8_t op) {
  return op == 0x1a || op == 0x1b || op == 0x1c || op == 0x1d || op == 0x1e || op == 0x21 || op == 0x22 ||
         (op >= 0x24 && op <= 0x27) || (op >= 0x29 && op <= 0x2e);
}

}  // namespace

Failure evaluate(std::span<const std::uint8_t> expr, const ExprContext& ctx, std::optional<std::uint64_t> push,
                 std::uint64_t& result) {
  ExprStack s;
  if (push) s.push(*push);
  Cursor c({expr, 0});
  for (std::size_t steps = 0; !c.at_end(); ++steps) {
    if (steps == kMaxExprSteps) return Stop::Unsupported;
    const std::uint8_t op = c.u8();
    std::optional<std::uint64_t> value;  // what the operation pushes, if anything
    if (op >= 0x30 && op <= 0x4f) {      // lit0..lit31
      value = op - 0x30;
    } else if ((op >= 0x70 && op <= 0x8f) || op == 0x92) {  // breg0..breg31, bregx
      const std::uint64_t reg = op == 0x92 ? c.uleb() : op - 0x70u;
      const std::int64_t offset = c.sleb();
      std::uint64_t v = 0;
      if (Failure f = register_value(ctx.regs, reg, v)) return f;
      value = offset_by(v, offset);
    } else if (is_binary(op)) {
      if (!s.has(2)) return Stop::Unsupported;
      const std::uint64_t b = s.pop(), a = s.pop();
      value = binary(op, a, b);
      if (!value) return Stop::Unsupported;  // division by zero
    } else {
      switch (op) {
        case 0x03: value = c.u64() + ctx.bias; break;  // addr: link-time, relocated as gdb does
        case 0x06:                                     // deref
        case 0x94: {                                   // deref_size
          const std::size_t size = op == 0x06 ? 8 : c.u8();
          if (!s.has(1) || size == 0 || size > 8) return Stop::Unsupported;
          std::uint64_t v = 0;
          if (!ctx.memory.read(s.pop(), &v, size)) return Stop::Unreadable;
          value = v;
          break;
        }
        case 0x08: value = c.u8(); break;
        case 0x09: value = static_cast<std::uint64_t>(static_cast<std::int8_t>(c.u8())); break;
        case 0x0a: value = c.u16(); break;
        case 0x0b: value = static_cast<std::uint64_t>(static_cast<std::int16_t>(c.u16())); break;
        case 0x0c: value = c.u32(); break;
        case 0x0d: value = static_cast<std::uint64_t>(static_cast<std::int32_t>(c.u32())); break;
        case 0x0e:
        case 0x0f: value = c.u64(); break;
        case 0x10: value = c.uleb(); break;
        case 0x11: value = static_cast<std::uint64_t>(c.sleb()); break;
        case 0x12:  // dup
          if (!s.has(1)) return Stop::Unsupported;
          value = s.at(0);
          break;
        case 0x13:  // drop
          if (!s.has(1)) return Stop::Unsupported;
          s.pop();
          break;
        case 0x14:  // over
          if (!s.has(2)) return Stop::Unsupported;
          value = s.at(1);
          break;
        case 0x15: {  // pick
          const std::size_t index = c.u8();
          if (!s.has(index + 1)) return Stop::Unsupported;
          value = s.at(index);
          break;
        }
        case 0x16:  // swap
          if (!s.has(2)) return Stop::Unsupported;
          std::swap(s.at(0), s.at(1));
          break;
        case 0x17: {  // rot: the top becomes the third entry
          if (!s.has(3)) return Stop::Unsupported;
          const std::uint64_t top = s.at(0);
          s.at(0) = s.at(1);
          s.at(1) = s.at(2);
          s.at(2) = top;
          break;
        }
        case 0x19:  // abs
          if (!s.has(1)) return Stop::Unsupported;
          if (static_cast<std::int64_t>(s.at(0)) < 0) s.at(0) = 0 - s.at(0);
          break;
        case 0x1f:  // neg
          if (!s.has(1)) return Stop::Unsupported;
          s.at(0) = 0 - s.at(0);
          break;
        case 0x20:  // not
          if (!s.has(1)) return Stop::Unsupported;
          s.at(0) = ~s.at(0);
          break;
        case 0x23:  // plus_uconst
          if (!s.has(1)) return Stop::Unsupported;
          s.at(0) += c.uleb();
          break;
        case 0x28:    // bra
        case 0x2f: {  // skip
          const auto delta = static_cast<std::int16_t>(c.u16());
          bool jump = true;
          if (op == 0x28) {
            if (!s.has(1)) return Stop::Unsupported;
            jump = s.pop() != 0;
          }
          const auto to = static_cast<std::int64_t>(c.pos()) + delta;
          if (c.failed() || to < 0 || to > static_cast<std::int64_t>(expr.size())) return Stop::Unsupported;
          if (jump) c.seek(static_cast<std::size_t>(to));
          break;
        }
        case 0x96: break;                   // nop
        default: return Stop::Unsupported;  // regN (a location, not a value), TLS, typed and entry-value operations
      }
    }
    if (c.failed()) return Stop::Unreadable;
    if (value && !s.push(*value)) return Stop::Unsupported;
  }
  if (!s.has(1)) return Stop::Unsupported;
  result = s.at(0);
  return std::nullopt;
}

}  // namespace pyhang::unwind
