// Stack depths of a code object's instructions (bytecode.hpp).

#include "cpython/bytecode.hpp"

#include <algorithm>

namespace pyhang::cpython::detail {

std::optional<int> OpEffect::at(std::uint32_t arg) const {
  if (!known) return std::nullopt;
  if (table_size > 0) {
    if (arg >= table_size) return std::nullopt;
    return table[arg];
  }
  std::int64_t e = a + std::int64_t{b} * arg + std::int64_t{c} * (arg >> 8);
  for (unsigned k = 0; k < 4; ++k) e += d[k] * ((arg >> k) & 1);
  return static_cast<int>(e);
}

namespace {

constexpr std::size_t kMaxUnits = 1u << 20;   // code units followed (co_code of 2 MB)
constexpr int kMaxDepth = 1 << 16;            // deeper is garbage (co_stacksize is an int, kept small)
constexpr int kMaxPrefixes = 3;               // EXTENDED_ARG before one instruction (32-bit arguments)
constexpr std::uint8_t kMaxNesting = 15;
constexpr std::int32_t kUnseen = -1;
constexpr std::int32_t kConflict = -2;

std::optional<std::uint32_t> varint(std::span<const std::uint8_t> t, std::size_t& at) {
  std::uint32_t value = 0;
  for (int groups = 0; groups < 6; ++groups) {
    if (at >= t.size()) return std::nullopt;
    std::uint8_t b = t[at++];
    value = (value << 6) | (b & 63);
    if (!(b & 64)) return value;
  }
  return std::nullopt;
}

struct Instr {
  std::uint32_t start = 0;   // first unit (its first prefix)
  std::uint32_t at = 0;      // the opcode's unit
  std::uint32_t next = 0;    // the unit after it and its caches
  const OpRow* row = nullptr;
  std::uint8_t op = 0;
  std::uint32_t arg = 0;
};

class Analysis {
 public:
  Analysis(const BytecodeTable& table, std::span<const std::uint8_t> code) : table_(table), code_(code) {}

  StackDepths run(std::span<const std::uint8_t> exceptions) {
    if (code_.size() / 2 > kMaxUnits) return failed(DepthProblem::TooLong, 0);
    decode();
    out_.depth.assign(code_.size() / 2, kUnseen);
    out_.uncertain.assign(code_.size() / 2, 0);
    out_.arg.assign(code_.size() / 2, 0);
    depth_.assign(instrs_.size(), kUnseen);
    nesting_.assign(instrs_.size(), 0);
    by_handler_.assign(instrs_.size(), false);
    mark_handler_targets();
    if (instrs_.empty()) return failed(DepthProblem::NoInstructions, 0);
    const bool value_first = instrs_[0].row && instrs_[0].row->entered_with_value;
    if (!merge(0, value_first ? 1 : 0, 0)) return std::move(out_);
    if (!exceptions.empty()) {
      auto entries = parse_exception_table(exceptions);
      if (!entries) return failed(DepthProblem::BadExceptionTable, 0);
      for (const auto& e : *entries) {
        if (!merge(e.target, e.depth + (e.lasti ? 1 : 0) + 1, 0)) return std::move(out_);
      }
    }
    std::size_t budget = 64 * instrs_.size() + 64;
    while (!work_.empty()) {
      if (budget-- == 0) return failed(DepthProblem::NotSettled, instrs_[work_.back()].at);
      std::size_t i = work_.back();
      work_.pop_back();
      if (!step(i)) return std::move(out_);
    }
    for (std::size_t i = 0; i < instrs_.size(); ++i) {
      for (std::uint32_t u = instrs_[i].start; u <= instrs_[i].at; ++u) {
        out_.depth[u] = depth_[i] == kConflict ? kUnseen : depth_[i];
        out_.uncertain[u] = nesting_[i];
      }
      out_.arg[instrs_[i].at] = instrs_[i].arg;
    }
    return std::move(out_);
  }

 private:
  void fail(DepthProblem why, std::uint32_t unit) {
    out_.problem = why;
    out_.problem_unit = unit;
    out_.depth.assign(out_.depth.size(), kUnseen);
  }

  StackDepths failed(DepthProblem why, std::uint32_t unit) {
    fail(why, unit);
    return std::move(out_);
  }

  void decode() {
    const std::size_t n = code_.size() / 2;
    unit_to_instr_.assign(n, -1);
    for (std::size_t i = 0; i < n;) {
      Instr ins;
      ins.start = static_cast<std::uint32_t>(i);
      std::uint32_t arg = 0;
      int prefixes = 0;
      while (i < n && table_.is_extended_arg(code_[2 * i]) && prefixes <= kMaxPrefixes) {
        arg = (arg | code_[2 * i + 1]) << 8;
        ++i;
        ++prefixes;
      }
      if (i >= n) break;
      ins.at = static_cast<std::uint32_t>(i);
      ins.op = code_[2 * i];
      ins.row = table_.row(ins.op);
      ins.arg = arg | code_[2 * i + 1];
      ins.next = static_cast<std::uint32_t>(i + 1 + (ins.row ? ins.row->caches : 0));
      if (prefixes > kMaxPrefixes) ins.row = nullptr;  // not an instruction CPython writes
      const auto index = static_cast<std::int32_t>(instrs_.size());
      for (std::size_t u = ins.start; u <= ins.at; ++u) unit_to_instr_[u] = index;
      i = ins.next;
      instrs_.push_back(ins);
    }
  }

  // 3.6/3.7: the finally handlers, where the normal way and an exception's jump both lead.
  void mark_handler_targets() {
    finally_target_.assign(instrs_.size(), false);
    for (const Instr& ins : instrs_) {
      if (!ins.row || ins.row->handler_jump != kFinallyHandler) continue;
      auto target = jump_target(ins);
      std::int64_t k = target ? index_at(*target) : -1;
      if (k >= 0) finally_target_[static_cast<std::size_t>(k)] = true;
    }
  }

  // The instruction starting at a unit; -1 when the unit starts none.
  std::int64_t index_at(std::uint64_t unit) const {
    if (unit >= unit_to_instr_.size()) return -1;
    std::int32_t k = unit_to_instr_[unit];
    if (k < 0 || instrs_[static_cast<std::size_t>(k)].start != unit) return -1;
    return k;
  }

  // Adds a way into the instruction at `unit` with the depth (kConflict: a
  // depth not known) it brings.  3.6/3.7: `by_handler`, the way follows an
  // exception's jump somewhere before (and counts less than a normal way
  // where both lead); `exception_edge`, it is that jump itself.
  bool merge(std::uint64_t unit, std::int64_t depth, std::uint8_t nesting, bool by_handler = false,
             bool exception_edge = false) {
    std::int64_t k = index_at(unit);
    if (k < 0) {
      fail(DepthProblem::JumpIntoInstruction, static_cast<std::uint32_t>(unit));
      return false;
    }
    auto i = static_cast<std::size_t>(k);
    if (finally_target_[i]) {
      // a finally handler's body: its depth is the compiler's count of an exception's six values
      nesting = static_cast<std::uint8_t>(std::min<int>(kMaxNesting, nesting + 1));
      if (!exception_edge && depth != kConflict) depth += 5;  // the normal way pushes one value (None)
    }
    if (depth != kConflict && (depth < 0 || depth > kMaxDepth)) {
      fail(DepthProblem::BadDepth, static_cast<std::uint32_t>(unit));
      return false;
    }
    std::int32_t& have = depth_[i];
    std::uint8_t& nest = nesting_[i];
    const auto d = static_cast<std::int32_t>(depth);
    if (d != kConflict && d > out_.max_depth) out_.max_depth = d;
    auto set = [&](std::int32_t to, std::uint8_t n, bool weak) {
      if (to == have && n == nest && weak == by_handler_[i]) return;
      have = to;
      nest = n;
      by_handler_[i] = weak;
      work_.push_back(i);
    };
    const auto more = std::max(nest, nesting);
    if (have == kConflict) return true;
    if (have == kUnseen) {
      set(d, nesting, by_handler);
    } else if (by_handler && !by_handler_[i]) {
      set(have, more, false);     // the normal way's depth holds
    } else if (!by_handler && by_handler_[i]) {
      set(d, more, false);        // the normal way decides
    } else if (have == d) {
      set(have, more, by_handler);
    } else if (table_.facts().one_depth || d == kConflict) {
      set(kConflict, nest, false);  // the compiler gives each instruction one depth: disagreeing paths are not its
    } else {
      // 3.8: a finally body entered by CALL_FINALLY with fewer values than an exception leaves
      set(std::max(have, d), static_cast<std::uint8_t>(std::min<int>(kMaxNesting, more + 1)), by_handler);
    }
    return true;
  }

  bool step(std::size_t i) {
    const Instr& ins = instrs_[i];
    const std::int32_t d = depth_[i];
    if (!ins.row) {
      fail(DepthProblem::UnknownOpcode, ins.at);
      return false;
    }
    const OpRow& r = *ins.row;
    int nesting = nesting_[i] + r.finally_nesting;
    auto nest = static_cast<std::uint8_t>(std::clamp(nesting, 0, int{kMaxNesting}));
    const bool weak = by_handler_[i];
    if (r.falls) {
      auto e = r.next.at(ins.arg);
      if (!e) return unknown_effect(ins);
      if (!merge(ins.next, d == kConflict ? kConflict : std::int64_t{d} + *e, nest, weak)) return false;
    }
    if (r.flow != kNext) {
      auto e = r.jump.at(ins.arg);
      if (!e) return unknown_effect(ins);
      auto target = jump_target(ins);
      if (!target) {
        fail(DepthProblem::JumpOutside, ins.at);
        return false;
      }
      const bool exception = r.handler_jump != kNoHandler;
      if (!merge(*target, d == kConflict ? kConflict : std::int64_t{d} + *e, nest, weak || exception, exception)) {
        return false;
      }
    }
    return true;
  }

  bool unknown_effect(const Instr& ins) {
    fail(DepthProblem::UnknownEffect, ins.at);
    return false;
  }

  std::optional<std::uint64_t> jump_target(const Instr& ins) const {
    // a jump's argument counts bytes (<= 3.9) or code units
    const int per = table_.facts().jump_arg_bytes;
    if (per == 1 && ins.arg % 2) return std::nullopt;
    const std::uint64_t units = per == 1 ? ins.arg / 2 : ins.arg;
    const std::uint64_t after = std::uint64_t{ins.at} + 1 + ins.row->caches;
    switch (ins.row->flow) {
      case kJumpRel: return after + units;
      case kJumpBack: return units <= after ? std::optional<std::uint64_t>(after - units) : std::nullopt;
      case kJumpAbs: return units;
      case kNext: break;
    }
    return std::nullopt;
  }

  const BytecodeTable& table_;
  std::span<const std::uint8_t> code_;
  std::vector<Instr> instrs_;
  std::vector<std::int32_t> unit_to_instr_;
  std::vector<std::int32_t> depth_;
  std::vector<std::uint8_t> nesting_;
  std::vector<bool> by_handler_;      // 3.6/3.7: its depth came by way of exceptions' jumps only
  std::vector<bool> finally_target_;  // 3.6/3.7: a finally handler
  std::vector<std::size_t> work_;
  StackDepths out_;
};

}  // namespace

std::optional<std::vector<ExceptionEntry>> parse_exception_table(std::span<const std::uint8_t> table) {
  std::vector<ExceptionEntry> out;
  std::size_t at = 0;
  while (at < table.size()) {
    auto start = varint(table, at);
    auto length = varint(table, at);
    auto target = varint(table, at);
    auto depth_lasti = varint(table, at);
    if (!start || !length || !target || !depth_lasti) return std::nullopt;
    ExceptionEntry e;
    e.start = *start;
    e.end = *start + *length;
    e.target = *target;
    e.depth = static_cast<int>(*depth_lasti >> 1);
    e.lasti = *depth_lasti & 1;
    out.push_back(e);
  }
  return out;
}

StackDepths analyse_stack_depths(const BytecodeTable& table, std::span<const std::uint8_t> code,
                                 std::span<const std::uint8_t> exceptions) {
  return Analysis(table, code).run(exceptions);
}

std::optional<InstructionDepth> depth_at(const BytecodeTable& table, std::span<const std::uint8_t> code,
                                         const StackDepths& depths, std::size_t unit) {
  if (depths.problem != DepthProblem::None || unit >= depths.depth.size() || 2 * unit + 1 >= code.size()) return std::nullopt;
  const OpRow* row = table.row(code[2 * unit]);
  if (!row || table.is_extended_arg(code[2 * unit])) return std::nullopt;
  if (depths.depth[unit] < 0 || depths.uncertain[unit] != 0) return std::nullopt;
  return InstructionDepth{row, depths.arg[unit], depths.depth[unit]};
}

}  // namespace pyhang::cpython::detail

namespace pyhang::cpython {

CodeStackDepths code_stack_depths(int minor, std::span<const std::uint8_t> code,
                                  std::span<const std::uint8_t> exceptions) {
  CodeStackDepths out;
  const detail::BytecodeTable* table = detail::bytecode_table(minor);
  if (!table) {
    out.problem = DepthProblem::NoTable;
    return out;
  }
  detail::StackDepths d = detail::analyse_stack_depths(*table, code, exceptions);
  out.problem = d.problem;
  out.problem_unit = d.problem_unit;
  out.max_depth = d.max_depth;
  out.depth.resize(d.depth.size());
  for (std::size_t u = 0; u < d.depth.size(); ++u) out.depth[u] = d.uncertain[u] ? -1 : d.depth[u];
  return out;
}

}  // namespace pyhang::cpython
