// The stack depths CPython's compiler gives a code object's instructions,
// found from its bytes (3.6 - 3.13): what tells which value-stack slot holds
// the callable of a call in progress on versions whose frames do not record
// their stack pointer during a call.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "pyhang/base/names.hpp"

namespace pyhang::cpython {

// Why the code's depths are not known.
enum class DepthProblem : std::uint8_t {
  None,
  NoTable,              // no opcode table for the version
  TooLong,              // more code units than followed
  NoInstructions,
  BadExceptionTable,    // co_exceptiontable is malformed
  NotSettled,           // the depths kept changing (3.6 code whose paths disagree around a loop)
  JumpIntoInstruction,  // a jump to a unit where no instruction starts
  JumpOutside,          // a jump before the code's start
  BadDepth,             // a depth below 0 or absurdly deep
  UnknownOpcode,        // an opcode the version does not have (or an instrumented one)
  UnknownEffect,        // an opcode whose stack effect is not known for its argument
};

inline constexpr std::array<Named<DepthProblem>, 11> kDepthProblemNames{{
    {DepthProblem::None, "none"},
    {DepthProblem::NoTable, "no-table"},
    {DepthProblem::TooLong, "too-long"},
    {DepthProblem::NoInstructions, "no-instructions"},
    {DepthProblem::BadExceptionTable, "bad-exception-table"},
    {DepthProblem::NotSettled, "not-settled"},
    {DepthProblem::JumpIntoInstruction, "jump-into-instruction"},
    {DepthProblem::JumpOutside, "jump-outside"},
    {DepthProblem::BadDepth, "bad-depth"},
    {DepthProblem::UnknownOpcode, "unknown-opcode"},
    {DepthProblem::UnknownEffect, "unknown-effect"},
}};
constexpr std::string_view to_string(DepthProblem p) { return name_in(kDepthProblemNames, p); }

struct CodeStackDepths {
  DepthProblem problem = DepthProblem::None;  // why nothing is known
  std::uint32_t problem_unit = 0;  // the code unit it was found at
  int max_depth = 0;               // the deepest the stack gets: the compiler's co_stacksize
  std::vector<int> depth;          // per code unit where an instruction starts; -1 unknown or uncertain
};

// `code`: the instructions (co_code; 3.11+ co_code_adaptive or co_code),
// `exceptions`: 3.11+ co_exceptiontable, else empty.  minor: 3.<minor>.
CodeStackDepths code_stack_depths(int minor, std::span<const std::uint8_t> code,
                                  std::span<const std::uint8_t> exceptions);

}  // namespace pyhang::cpython
