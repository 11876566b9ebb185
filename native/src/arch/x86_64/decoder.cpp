#include "pyhang/arch/x86_64/decoder.hpp"

#include <algorithm>
#include <cstring>

namespace pyhang::x86_64 {

std::optional<Insn> decode(const std::uint8_t* p, std::size_t avail) {
  avail = std::min<std::size_t>(avail, kMaxInsnLength);
  Insn in;
  std::size_t i = 0;
  bool opsize = false, addr32 = false;
  for (; i < avail; ++i) {
    std::uint8_t b = p[i];
    if (b == 0x66) opsize = true;
    else if (b == 0x67) addr32 = true;
    else if (b == 0xf0) in.lock = true;
    else if (b != 0xf0 && b != 0xf2 && b != 0xf3 && b != 0x2e && b != 0x36 && b != 0x3e && b != 0x26 &&
             b != 0x64 && b != 0x65)
      break;
  }
  in.prefixes = static_cast<std::uint8_t>(i);
  if (i < avail && (p[i] & 0xf0) == 0x40) in.rex = p[i++];
  if (i >= avail) return std::nullopt;
  std::uint8_t op = p[i++];
  std::size_t imm = 0, rel = 0;
  bool modrm = false;
  const std::size_t imm_z = opsize ? 2 : 4;  // Iz
  if (op == 0x0f) {
    if (i >= avail) return std::nullopt;
    std::uint8_t op2 = p[i++];
    if (op2 == 0x38 || op2 == 0x3a) {
      if (i >= avail) return std::nullopt;
      in.map = op2 == 0x38 ? 2 : 3;
      in.op = p[i++];
      modrm = true;
      imm = op2 == 0x3a ? 1 : 0;
    } else {
      in.map = 1;
      in.op = op2;
      if ((op2 >= 0x80 && op2 <= 0x8f)) rel = 4;  // jcc rel32
      else if (op2 == 0x05 || op2 == 0x06 || op2 == 0x07 || op2 == 0x08 || op2 == 0x09 || op2 == 0x0b ||
               op2 == 0x0e || (op2 >= 0x30 && op2 <= 0x37) || op2 == 0x77 || op2 == 0xa0 || op2 == 0xa1 ||
               op2 == 0xa2 || op2 == 0xa8 || op2 == 0xa9 || op2 == 0xaa || (op2 >= 0xc8 && op2 <= 0xcf))
        modrm = false;
      else modrm = true;
      if ((op2 >= 0x70 && op2 <= 0x73) || op2 == 0xa4 || op2 == 0xac || op2 == 0xba || op2 == 0xc2 ||
          op2 == 0xc4 || op2 == 0xc5 || op2 == 0xc6 || op2 == 0x0f)
        imm = 1;
    }
  } else {
    in.map = 0;
    in.op = op;
    switch (op) {
      // invalid in 64-bit mode, or VEX/EVEX which this decoder does not handle
      case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e: case 0x1f: case 0x27: case 0x2f:
      case 0x37: case 0x3f: case 0x60: case 0x61: case 0x62: case 0x82: case 0x9a: case 0xc4: case 0xc5:
      case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
        return std::nullopt;
      default: break;
    }
    if (op < 0x40) {
      switch (op & 7) {
        case 0: case 1: case 2: case 3: modrm = true; break;
        case 4: imm = 1; break;
        case 5: imm = imm_z; break;
        default: break;
      }
    } else if (op >= 0x70 && op <= 0x7f) rel = 1;
    else if (op >= 0xb0 && op <= 0xb7) imm = 1;
    else if (op >= 0xb8 && op <= 0xbf) imm = in.rex_w() ? 8 : imm_z;
    else if (op >= 0xd8 && op <= 0xdf) modrm = true;  // x87
    else switch (op) {
      case 0x63: case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8a: case 0x8b:
      case 0x8c: case 0x8d: case 0x8e: case 0x8f: case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xfe:
      case 0xff:
        modrm = true; break;
      case 0x69: case 0x81: case 0xc7: modrm = true; imm = imm_z; break;
      case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6: modrm = true; imm = 1; break;
      case 0xf6: case 0xf7: modrm = true; break;  // immediate depends on ModRM.reg
      case 0x68: imm = imm_z; break;
      case 0x6a: case 0xa8: case 0xcd: case 0xe4: case 0xe5: case 0xe6: case 0xe7: imm = 1; break;
      case 0xa9: imm = imm_z; break;
      case 0xa0: case 0xa1: case 0xa2: case 0xa3: imm = addr32 ? 4 : 8; break;  // moffs
      case 0xc2: case 0xca: imm = 2; break;
      case 0xc8: imm = 3; break;
      case 0xe0: case 0xe1: case 0xe2: case 0xe3: case 0xeb: rel = 1; break;
      case 0xe8: case 0xe9: rel = 4; break;
      default: break;  // no operand bytes
    }
  }
  if (modrm) {
    if (i >= avail) return std::nullopt;
    std::uint8_t m = p[i++];
    in.has_modrm = true;
    in.mod = m >> 6;
    in.ext = (m >> 3) & 7;
    in.reg = static_cast<std::uint8_t>(in.ext | ((in.rex & 4) ? 8 : 0));
    in.rm_low = m & 7;
    in.rm = static_cast<std::uint8_t>(in.rm_low | ((in.rex & 1) ? 8 : 0));
    std::size_t disp = 0;
    if (in.mod != 3) {
      if ((m & 7) == 4) {
        if (i >= avail) return std::nullopt;
        std::uint8_t sib = p[i++];
        if (in.mod == 0 && (sib & 7) == 5) disp = 4;
      }
      if (in.mod == 0 && (m & 7) == 5) {
        disp = 4;
        in.rip_relative = true;
      }
      if (in.mod == 1) disp = 1;
      if (in.mod == 2) disp = 4;
    }
    if (i + disp > avail) return std::nullopt;
    if (in.rip_relative) {
      std::int32_t d;
      std::memcpy(&d, p + i, 4);
      in.disp = d;
    }
    i += disp;
    if (in.map == 0 && (op == 0xf6 || op == 0xf7) && in.ext <= 1) imm = op == 0xf6 ? 1 : imm_z;
  }
  if (rel) {
    if (i + rel > avail) return std::nullopt;
    if (rel == 1) in.rel = static_cast<std::int8_t>(p[i]);
    else {
      std::int32_t d;
      std::memcpy(&d, p + i, 4);
      in.rel = d;
    }
    in.has_rel = true;
    i += rel;
  }
  if (i + imm > avail) return std::nullopt;
  in.imm_size = imm;
  if (imm == 4 || imm == 8) std::memcpy(&in.imm, p + i, imm);
  in.len = i + imm;
  return in;
}

}  // namespace pyhang::x86_64
