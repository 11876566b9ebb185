// The one x86-64 instruction decoder: the length of every instruction gcc
// and clang emit for general-purpose code (legacy prefixes, REX, the
// one-byte map and the 0f, 0f38, 0f3a maps; no VEX/EVEX), with what
// pyhang's code readers look at: prefixes, ModRM fields, RIP-relative
// displacements, branch displacements and immediates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace pyhang::x86_64 {

struct Insn {
  std::size_t len = 0;
  std::uint8_t prefixes = 0;  // legacy prefix bytes before REX and the opcode
  bool lock = false;          // an F0 (lock) prefix among them
  std::uint8_t map = 0;       // 0: one-byte, 1: 0f, 2: 0f38, 3: 0f3a
  std::uint8_t op = 0;
  std::uint8_t rex = 0;
  bool has_modrm = false;
  std::uint8_t mod = 0;
  std::uint8_t ext = 0;       // ModRM.reg without REX.R (the opcode extension of group opcodes)
  std::uint8_t reg = 0;       // ModRM.reg with REX.R
  std::uint8_t rm = 0;        // ModRM.rm with REX.B (a register when mod == 3)
  std::uint8_t rm_low = 0;    // ModRM.rm as encoded (4: SIB follows, 5 with mod 0: RIP-relative)
  bool rip_relative = false;
  std::int64_t disp = 0;      // of a RIP-relative operand
  bool has_rel = false;
  std::int64_t rel = 0;       // branch displacement
  std::size_t imm_size = 0;
  std::uint64_t imm = 0;      // immediate of 4 or 8 bytes, zero-extended
  bool rex_w() const { return rex & 8; }
};

inline constexpr std::size_t kMaxInsnLength = 15;

// The instruction at p (avail bytes readable); nullopt when it is invalid
// in 64-bit mode, VEX/EVEX-encoded, or truncated.
std::optional<Insn> decode(const std::uint8_t* p, std::size_t avail);

// endbr64 (f3 0f 1e fa), which starts functions built with CET.
inline constexpr std::size_t kEndbr64Length = 4;
inline bool is_endbr64(const std::uint8_t* p, std::size_t avail) {
  return avail >= kEndbr64Length && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa;
}

}  // namespace pyhang::x86_64
