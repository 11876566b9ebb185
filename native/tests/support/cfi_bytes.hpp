// CFI written by hand for the unwinder's tests: DWARF opcodes, little-endian
// bytes with LEB128, the CIE every gcc object starts with, and the row of
// an FDE's program.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "pyhang/unwind/cfi.hpp"
#include "support/elf_builder.hpp"

namespace pyhang::testing {


// DWARF opcodes used below (DWARF 5, sections 6.4.2 and 2.5).
namespace cfa {
inline constexpr std::uint8_t advance_loc = 0x40, offset = 0x80, restore = 0xc0, nop = 0x00, set_loc = 0x01,
                       advance_loc1 = 0x02, advance_loc2 = 0x03, advance_loc4 = 0x04, offset_extended = 0x05,
                       restore_extended = 0x06, undefined = 0x07, same_value = 0x08, reg = 0x09,
                       remember_state = 0x0a, restore_state = 0x0b, def_cfa = 0x0c, def_cfa_register = 0x0d,
                       def_cfa_offset = 0x0e, def_cfa_expression = 0x0f, expression = 0x10,
                       offset_extended_sf = 0x11, def_cfa_sf = 0x12, def_cfa_offset_sf = 0x13, val_offset = 0x14,
                       val_offset_sf = 0x15, val_expression = 0x16, gnu_args_size = 0x2e,
                       gnu_negative_offset_extended = 0x2f, gnu_window_save = 0x2d;
}  // namespace cfa
namespace op {
inline constexpr std::uint8_t addr = 0x03, deref = 0x06, const1u = 0x08, const1s = 0x09, const2u = 0x0a, const2s = 0x0b,
                       const4u = 0x0c, const4s = 0x0d, const8u = 0x0e, const8s = 0x0f, constu = 0x10, consts = 0x11,
                       dup = 0x12, drop = 0x13, over = 0x14, pick = 0x15, swap = 0x16, rot = 0x17, abs = 0x19,
                       and_ = 0x1a, div = 0x1b, minus = 0x1c, mod = 0x1d, mul = 0x1e, neg = 0x1f, not_ = 0x20,
                       or_ = 0x21, plus = 0x22, plus_uconst = 0x23, shl = 0x24, shr = 0x25, shra = 0x26,
                       xor_ = 0x27, bra = 0x28, eq = 0x29, ge = 0x2a, gt = 0x2b, le = 0x2c, lt = 0x2d, ne = 0x2e,
                       skip = 0x2f, lit0 = 0x30, reg0 = 0x50, breg0 = 0x70, bregx = 0x92, deref_size = 0x94,
                       nop = 0x96;
}  // namespace op

// Little-endian bytes and LEB128, for CFI written by hand.
struct Buf {
  std::vector<std::uint8_t> b;
  template <class T>
  Buf& fixed(T v) {
    put(b, &v, sizeof v);
    return *this;
  }
  Buf& u8(std::uint8_t v) { return fixed(v); }
  Buf& u16(std::uint16_t v) { return fixed(v); }
  Buf& u32(std::uint32_t v) { return fixed(v); }
  Buf& u64(std::uint64_t v) { return fixed(v); }
  Buf& uleb(std::uint64_t v) {
    do {
      std::uint8_t byte = v & 0x7f;
      v >>= 7;
      b.push_back(byte | (v ? 0x80 : 0));
    } while (v);
    return *this;
  }
  Buf& sleb(std::int64_t v) {
    for (bool more = true; more;) {
      std::uint8_t byte = v & 0x7f;
      v >>= 7;
      more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
      b.push_back(byte | (more ? 0x80 : 0));
    }
    return *this;
  }
  Buf& str(const std::string& s) {
    put(b, s.c_str(), s.size() + 1);
    return *this;
  }
  Buf& add(const std::vector<std::uint8_t>& v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
  Buf& block(const std::vector<std::uint8_t>& v) { return uleb(v.size()).add(v); }
};

inline unwind::Bytes at(const std::vector<std::uint8_t>& v, Addr addr = 0) { return {v, addr}; }

// The CIE program every gcc CIE starts with: CFA = rsp + 8, return address at CFA - 8.
inline const std::vector<std::uint8_t> kEntryRow = {cfa::def_cfa, 7, 8, cfa::offset | 16, 1};

inline unwind::Cie gcc_cie() {
  unwind::Cie c;
  c.code_align = 1;
  c.data_align = -8;
  c.ra_column = unwind::kRip;
  c.fde_encoding = unwind::pe::kPcrel | unwind::pe::kSdata4;
  c.augmentation_data = true;
  return c;
}

// The row at `target` of an FDE at 0x1000..0x2000 with these programs.
inline unwind::Failure row_of(const std::vector<std::uint8_t>& cie_program, const std::vector<std::uint8_t>& fde_program,
               Addr target, unwind::Row& row, unwind::Cie cie = gcc_cie()) {
  cie.instructions = at(cie_program);
  unwind::Fde fde{0x1000, 0x2000, at(fde_program)};
  return find_row(cie, fde, {}, target, row);
}

inline unwind::Regs make_regs(std::initializer_list<std::pair<int, std::uint64_t>> values) {
  unwind::Regs r;
  for (auto [n, v] : values) r.r[n] = v;
  return r;
}

}  // namespace pyhang::testing
