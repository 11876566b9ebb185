// The depth of a frame's value stack at one of its instructions, found from
// the code alone as CPython's compiler counts it (3.6 - 3.13, whose frames do
// not record their stack pointer while they call).
//
// The compiler gives every instruction one stack depth, whichever way it is
// reached; the analysis follows the code from its first instruction (and,
// 3.11+, from each exception handler at the depth the exception table gives)
// with each opcode's stack effect, falling through and jumping.  Where the
// paths into an instruction disagree, its depth is not known: 3.9+ code never
// does this, so the instruction and all it reaches are left unknown.  3.6 -
// 3.8 enter a `finally` body with one value (or a return address) normally and
// six by an exception; the compiler counts six, and the analysis does too but
// marks the body uncertain up to the END_FINALLY that levels the stack again
// (3.6/3.7, whose normal way in pushes one None: that depth plus five, so that
// the END_FINALLY leaves the depth the normal path continues with).
// The tables of each version's opcodes are generated from its own `dis` and
// `opcode` modules (layouts/bytecode_generated.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "pyhang/cpython/bytecode.hpp"

namespace pyhang::cpython::detail {

enum OpFlow : std::uint8_t {
  kNext,      // no jump
  kJumpRel,   // forward by its argument, from the instruction after it (and its caches)
  kJumpBack,  // back by its argument, likewise (3.11+ JUMP_BACKWARD...)
  kJumpAbs,   // to the offset its argument gives (<= 3.10)
};

enum HandlerJump : std::uint8_t {
  kNoHandler,
  kExceptHandler,   // SETUP_EXCEPT: only an exception goes there
  kFinallyHandler,  // SETUP_FINALLY, SETUP_WITH...: the normal way goes there too, with one value pushed
};

// A stack effect: a + b*arg + c*(arg >> 8) + sum(d[k] * bit k of arg), or,
// when table_size > 0, table[arg] for arguments below table_size only.
struct OpEffect {
  std::int16_t a = 0, b = 0, c = 0;
  std::array<std::int8_t, 4> d{};
  std::uint8_t table_size = 0;
  std::array<std::int8_t, 16> table{};
  bool known = true;

  std::optional<int> at(std::uint32_t arg) const;
};

inline constexpr OpEffect kUnknownEffect{0, 0, 0, {}, 0, {}, false};

struct OpRow {
  std::uint8_t op = 0;
  std::uint8_t caches = 0;       // inline cache units after the instruction (3.11+)
  OpFlow flow = kNext;
  bool falls = true;             // the next instruction runs after it (not a return, raise, jump)
  std::int8_t call_base = -1;    // a call: it has `call_base - effect` inputs; -1: not a call
  bool null_first = false;       // a call whose deepest input may be NULL, the callable above it
  std::int8_t finally_nesting = 0;  // 3.6 - 3.8: +1 begins a finally body the analysis cannot count, -1 ends one
  bool entered_with_value = false;  // code starting with it begins with one value on the stack (3.10 GEN_START)
  HandlerJump handler_jump = kNoHandler;  // 3.6/3.7: its jump is taken by an exception
  OpEffect next, jump;           // stack effect falling through, jumping
};

struct OpAlias {
  std::uint8_t op, base;         // a specialized opcode (3.11+) and the one it stands for
};

// What a version's code is like beyond its opcodes.
struct BytecodeFacts {
  int minor = 0;
  int extended_arg = 0;     // the EXTENDED_ARG opcode
  int jump_arg_bytes = 2;   // bytes a jump's argument counts (1 before 3.10, then code units of 2)
  bool one_depth = true;    // the compiler gives each instruction one depth (3.9+)
};

class BytecodeTable {
 public:
  template <std::size_t N, std::size_t M>
  BytecodeTable(const BytecodeFacts& facts, const OpRow (&rows)[N], const OpAlias (&aliases)[M])
      : facts_(facts) {
    for (const auto& r : rows) rows_[r.op] = &r;
    for (const auto& a : aliases) {
      if (a.op != a.base) rows_[a.op] = rows_[a.base];
    }
  }
  // The row of an opcode as the code holds it (specialized or not); null when unknown.
  const OpRow* row(std::uint8_t op) const { return rows_[op]; }
  int minor() const { return facts_.minor; }
  const BytecodeFacts& facts() const { return facts_; }
  bool is_extended_arg(std::uint8_t op) const {
    const OpRow* r = rows_[op];
    return r && r->op == facts_.extended_arg;
  }

 private:
  BytecodeFacts facts_;
  std::array<const OpRow*, 256> rows_{};
};

// The table of CPython 3.<minor>; null for versions without one.
const BytecodeTable* bytecode_table(int minor);

// One entry of a 3.11+ exception table, in code units.
struct ExceptionEntry {
  std::uint32_t start = 0, end = 0, target = 0;
  int depth = 0;
  bool lasti = false;
};

// The entries of a co_exceptiontable; nullopt when it is malformed.
std::optional<std::vector<ExceptionEntry>> parse_exception_table(std::span<const std::uint8_t> table);

// The instruction at a code unit and the stack depth before it runs.
struct InstructionDepth {
  const OpRow* row = nullptr;    // its (base) opcode's row
  std::uint32_t arg = 0;         // with EXTENDED_ARG prefixes
  int depth = 0;
};

struct StackDepths {
  DepthProblem problem = DepthProblem::None;  // why nothing is known
  std::uint32_t problem_unit = 0;
  int max_depth = 0;             // the deepest the stack gets (the compiler's co_stacksize)
  // per code unit where an instruction (or its first prefix) starts: -1 unknown
  std::vector<std::int32_t> depth;
  std::vector<std::uint8_t> uncertain;  // 3.6 - 3.8: inside a finally body, by nesting
  std::vector<std::uint32_t> arg;       // the instruction's argument, at the unit of its opcode
};

// Follows the code (`code`: the instructions, 2 bytes a unit; `exceptions`:
// 3.11+ co_exceptiontable, else empty).  Bounded by the code's size.
StackDepths analyse_stack_depths(const BytecodeTable& table, std::span<const std::uint8_t> code,
                                 std::span<const std::uint8_t> exceptions);

// The instruction at code unit `unit` (its opcode, past any prefix) with the
// depth before it, when the depth is known and certain; `depths` is the
// analysis of `code`.
std::optional<InstructionDepth> depth_at(const BytecodeTable& table, std::span<const std::uint8_t> code,
                                         const StackDepths& depths, std::size_t unit);

}  // namespace pyhang::cpython::detail
