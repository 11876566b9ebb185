// GIVEN CFI bytes written by hand, WHEN their pointers, entries, CFA
// programs and expressions are decoded, THEN the rows are the ones the
// DWARF rules give, and garbage ends with a stop reason, never a guess.
#include <catch2/catch.hpp>

#include <cstring>

#include "support/cfi_bytes.hpp"

using namespace pyhang;
using namespace pyhang::unwind;
using namespace pyhang::testing;

// ---------------------------------------------------------------- encodings --

TEST_CASE("LEB128 decodes 64-bit values and sign-extends; an unterminated one fails", "[unwind]") {
  auto bytes = Buf().uleb(624485).sleb(-123456).uleb(~0ull).sleb(INT64_MIN).b;
  Cursor c(at(bytes));
  CHECK(c.uleb() == 624485);
  CHECK(c.sleb() == -123456);
  CHECK(c.uleb() == ~0ull);
  CHECK(c.sleb() == INT64_MIN);
  CHECK_FALSE(c.failed());
  std::vector<std::uint8_t> endless(12, 0x80);
  Cursor e(at(endless));
  e.uleb();
  CHECK(e.failed());
}

TEST_CASE("every DW_EH_PE format decodes, relative to its own address, .text, data or the function", "[unwind]") {
  auto decode = [](const std::vector<std::uint8_t>& bytes, std::uint8_t enc, Addr addr = 0x1000,
                   PointerBases bases = {0x400000, 0x600000, 0x401000}) {
    Cursor c({bytes, addr});
    auto v = read_encoded(c, enc, bases);
    return std::make_pair(v, c.pos());
  };
  using P = std::pair<std::optional<std::uint64_t>, std::size_t>;
  CHECK(decode(Buf().u64(0x1122334455667788).b, pe::kAbsptr) == P{0x1122334455667788, 8});
  CHECK(decode(Buf().u16(0xfffe).b, pe::kUdata2) == P{0xfffe, 2});
  CHECK(decode(Buf().u16(0xfffe).b, pe::kSdata2) == P{static_cast<std::uint64_t>(-2), 2});
  CHECK(decode(Buf().u32(0xfffffff0).b, pe::kUdata4) == P{0xfffffff0, 4});
  CHECK(decode(Buf().u32(0xfffffff0).b, pe::kSdata4) == P{static_cast<std::uint64_t>(-16), 4});
  CHECK(decode(Buf().u64(7).b, pe::kUdata8) == P{7, 8});
  CHECK(decode(Buf().u64(static_cast<std::uint64_t>(-7)).b, pe::kSdata8) == P{static_cast<std::uint64_t>(-7), 8});
  CHECK(decode(Buf().uleb(300).b, pe::kUleb128) == P{300, 2});
  CHECK(decode(Buf().sleb(-300).b, pe::kSleb128) == P{static_cast<std::uint64_t>(-300), 2});
  // pcrel: the address of the value itself; datarel/textrel/funcrel: the bases.
  CHECK(decode(Buf().u32(static_cast<std::uint32_t>(-0x10)).b, pe::kPcrel | pe::kSdata4) == P{0xff0, 4});
  CHECK(decode(Buf().u32(0x20).b, pe::kDatarel | pe::kSdata4) == P{0x600020, 4});
  CHECK(decode(Buf().u32(0x20).b, pe::kTextrel | pe::kUdata4) == P{0x400020, 4});
  CHECK(decode(Buf().uleb(0x20).b, pe::kFuncrel | pe::kUleb128) == P{0x401020, 1});
  // aligned: an absolute pointer at the next 8-byte boundary (here 5 bytes on)
  auto aligned = Buf().u8(0).u8(0).u8(0).u8(0).u8(0).u64(0xabc).b;
  CHECK(decode(aligned, pe::kAligned, 0x1003) == P{0xabc, 13});
  // omit reads nothing; indirect, an unknown base or format, a missing base: no value
  CHECK(decode(Buf().u32(1).b, pe::kOmit) == P{std::nullopt, 0});
  CHECK_FALSE(decode(Buf().u32(1).b, pe::kIndirect | pe::kPcrel | pe::kSdata4).first);
  CHECK_FALSE(decode(Buf().u32(1).b, 0x05).first);
  CHECK_FALSE(decode(Buf().u32(1).b, 0x60 | pe::kUdata4).first);
  CHECK_FALSE(decode(Buf().u32(1).b, pe::kDatarel | pe::kUdata4, 0x1000, {}).first);
  // truncated: no value, and the cursor says so
  std::vector<std::uint8_t> two = {1, 2};
  Cursor c(at(two));
  CHECK_FALSE(read_encoded(c, pe::kUdata4, {}));
  CHECK(c.failed());
  CHECK(encoded_size(pe::kDatarel | pe::kSdata4) == 4);
  CHECK(encoded_size(pe::kUdata2) == 2);
  CHECK(encoded_size(pe::kAbsptr) == 8);
  CHECK(encoded_size(pe::kUleb128) == 0);
}

// ------------------------------------------------------------- CIEs, FDEs --

TEST_CASE("CIE augmentations: z, R, P skipped whatever its encoding, L, S; FDEs skip their LSDA", "[unwind]") {
  // CIE "zPLR" at 0x100, its FDE at 0x130, in one section.
  Buf cie_body, aug;
  aug.u8(pe::kIndirect | pe::kPcrel | pe::kSdata4).u32(0x1000);  // P: personality through the GOT
  aug.u8(pe::kPcrel | pe::kSdata4);                               // L
  aug.u8(pe::kPcrel | pe::kSdata4);                               // R
  cie_body.u32(0).u8(1).str("zPLR").uleb(1).sleb(-8).u8(16).block(aug.b).add(kEntryRow);
  Buf section;
  section.u32(static_cast<std::uint32_t>(cie_body.b.size())).add(cie_body.b);
  while (section.b.size() < 0x30) section.u8(0);
  const Addr cie_addr = 0x100, fde_addr = 0x130;
  Buf fde_body;
  fde_body.u32(static_cast<std::uint32_t>(fde_addr + 4 - cie_addr));
  fde_body.u32(static_cast<std::uint32_t>(0x5000 - (fde_addr + 8))).u32(0x40);
  fde_body.uleb(4).u32(0xdeadbeef);  // the LSDA pointer, skipped
  fde_body.u8(cfa::advance_loc | 1).u8(cfa::def_cfa_offset).u8(16);
  section.u32(static_cast<std::uint32_t>(fde_body.b.size())).add(fde_body.b).u32(0);
  const Bytes s = at(section.b, cie_addr);

  Entry e;
  REQUIRE_FALSE(read_entry(s, cie_addr, e));
  CHECK(e.is_cie);
  Cie cie;
  REQUIRE_FALSE(parse_cie(e, cie));
  CHECK(cie.fde_encoding == (pe::kPcrel | pe::kSdata4));
  CHECK(cie.augmentation_data);
  CHECK_FALSE(cie.signal_frame);
  CHECK(cie.code_align == 1);
  CHECK(cie.data_align == -8);
  CHECK(cie.ra_column == 16);
  CHECK(std::vector<std::uint8_t>(cie.instructions.data.begin(), cie.instructions.data.begin() + 5) == kEntryRow);

  Entry fe;
  REQUIRE_FALSE(read_entry(s, fde_addr, fe));
  CHECK_FALSE(fe.is_cie);
  CHECK(fe.cie_addr == cie_addr);
  Fde fde;
  REQUIRE_FALSE(parse_fde(fe, cie, {}, fde));
  CHECK(fde.pc_begin == 0x5000);
  CHECK(fde.pc_end == 0x5040);
  REQUIRE(fde.instructions.data.size() >= 3);
  CHECK(fde.instructions.data[0] == (cfa::advance_loc | 1));

  Entry end;
  REQUIRE_FALSE(read_entry(s, fe.next, end));
  CHECK(end.terminator);
}

TEST_CASE("a CIE's S marks a signal frame; version 3 has a LEB128 return column; no augmentation means absptr",
          "[unwind]") {
  auto parse = [](const Buf& body) {
    Buf entry;
    entry.u32(static_cast<std::uint32_t>(body.b.size())).add(body.b);
    Entry e;
    Cie cie;
    Failure f = read_entry(at(entry.b), 0, e);
    if (!f) f = parse_cie(e, cie);
    return std::make_pair(f, cie);
  };
  auto [f1, signal] = parse(Buf().u32(0).u8(1).str("zRS").uleb(1).sleb(-8).u8(16).block({0x1b}).add(kEntryRow));
  CHECK_FALSE(f1);
  CHECK(signal.signal_frame);
  auto [f2, v3] = parse(Buf().u32(0).u8(3).str("").uleb(4).sleb(-4).uleb(16).add(kEntryRow));
  CHECK_FALSE(f2);
  CHECK(v3.fde_encoding == pe::kAbsptr);
  CHECK_FALSE(v3.augmentation_data);
  CHECK(v3.code_align == 4);
  CHECK(v3.ra_column == 16);
  // An unknown letter after z: the rest of the data is skipped by its length, as gdb does.
  auto [f3, unknown] = parse(Buf().u32(0).u8(1).str("zRX").uleb(1).sleb(-8).u8(16).block({0x1b, 9, 9}));
  CHECK_FALSE(f3);
  CHECK(unknown.fde_encoding == 0x1b);
  // Without z an augmentation's data cannot be skipped; gcc 2's "eh"; unknown versions.
  CHECK(parse(Buf().u32(0).u8(1).str("xR").uleb(1).sleb(-8).u8(16)).first == Stop::Unsupported);
  CHECK(parse(Buf().u32(0).u8(1).str("eh").u64(0).uleb(1).sleb(-8).u8(16)).first == Stop::Unsupported);
  CHECK(parse(Buf().u32(0).u8(2).str("").uleb(1).sleb(-8).u8(16)).first == Stop::Unsupported);
  // Truncated: the augmentation string or its data runs off the entry.
  CHECK(parse(Buf().u32(0).u8(1).u8('z').u8('R')).first == Stop::Unreadable);
  CHECK(parse(Buf().u32(0).u8(1).str("zR").uleb(1).sleb(-8).u8(16).uleb(9)).first == Stop::Unreadable);
}

TEST_CASE("entries: a zero length ends the section, 64-bit or overlong lengths are refused", "[unwind]") {
  Entry e;
  std::vector<std::uint8_t> zero = {0, 0, 0, 0};
  REQUIRE_FALSE(read_entry(at(zero, 0x10), 0x10, e));
  CHECK(e.terminator);
  CHECK(read_entry(at(Buf().u32(0xffffffff).u64(8).u32(0).b), 0, e) == Stop::Unsupported);
  CHECK(read_entry(at(Buf().u32(100).u32(0).b), 0, e) == Stop::Unreadable);
  CHECK(read_entry(at(zero, 0x10), 0x20, e) == Stop::Unreadable);  // outside the section
  CHECK(read_entry(at(Buf().u32(2).u16(0).b), 0, e) == Stop::Unsupported);
}

// ------------------------------------------------------------ CFA programs --

TEST_CASE("CFA programs: advance_loc in every width applies rows at or below the target only", "[unwind]") {
  const std::vector<std::uint8_t> program = Buf()
                                                .u8(cfa::advance_loc | 1)
                                                .u8(cfa::def_cfa_offset).uleb(16)
                                                .u8(cfa::advance_loc1).u8(0x10)
                                                .u8(cfa::def_cfa_offset).uleb(24)
                                                .u8(cfa::advance_loc2).u16(0x100)
                                                .u8(cfa::def_cfa_offset).uleb(32)
                                                .u8(cfa::advance_loc4).u32(0x10000)
                                                .u8(cfa::def_cfa_offset).uleb(40)
                                                .b;
  auto offset_at = [&](Addr target) {
    Row row;
    REQUIRE_FALSE(row_of(kEntryRow, program, target, row));
    CHECK(row.cfa.kind == CfaKind::RegOffset);
    CHECK(row.cfa.reg == 7);
    return row.cfa.offset;
  };
  CHECK(offset_at(0x1000) == 8);
  CHECK(offset_at(0x1001) == 16);
  CHECK(offset_at(0x1010) == 16);
  CHECK(offset_at(0x1011) == 24);
  CHECK(offset_at(0x1111) == 32);
  CHECK(offset_at(0x11110) == 32);
  CHECK(offset_at(0x11111) == 40);

  SECTION("the code alignment factor scales advances; set_loc jumps to an encoded address") {
    Cie cie = gcc_cie();
    cie.code_align = 4;
    cie.fde_encoding = pe::kUdata8;
    Row row;
    auto p = Buf().u8(cfa::advance_loc | 1).u8(cfa::def_cfa_offset).uleb(16).u8(cfa::set_loc).u64(0x1050);
    p.u8(cfa::def_cfa_offset).uleb(24);
    REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1003, row, cie));
    CHECK(row.cfa.offset == 8);
    REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1004, row, cie));
    CHECK(row.cfa.offset == 16);
    REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1050, row, cie));
    CHECK(row.cfa.offset == 24);
  }
}

TEST_CASE("CFA programs: offset rules in every form are factored by the data alignment", "[unwind]") {
  auto p = Buf()
               .u8(cfa::offset | 3).uleb(2)
               .u8(cfa::offset_extended).uleb(12).uleb(3)
               .u8(cfa::offset_extended_sf).uleb(13).sleb(-4)
               .u8(cfa::gnu_negative_offset_extended).uleb(14).uleb(5)
               .u8(cfa::val_offset).uleb(15).uleb(1)
               .u8(cfa::val_offset_sf).uleb(6).sleb(2)
               .u8(cfa::offset_extended).uleb(40).uleb(1);  // xmm: read and dropped
  Row row;
  REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1000, row));
  auto is = [&](int reg, RuleKind kind, std::int64_t n) { return row.regs[reg].kind == kind && row.regs[reg].n == n; };
  CHECK(is(3, RuleKind::Offset, -16));
  CHECK(is(12, RuleKind::Offset, -24));
  CHECK(is(13, RuleKind::Offset, 32));
  CHECK(is(14, RuleKind::Offset, 40));
  CHECK(is(15, RuleKind::ValOffset, -8));
  CHECK(is(6, RuleKind::ValOffset, -16));
  CHECK(is(16, RuleKind::Offset, -8));  // from the CIE
}

TEST_CASE("CFA programs: restore brings back the CIE's rule; undefined, same_value and register", "[unwind]") {
  const auto cie_program = Buf().add(kEntryRow).u8(cfa::offset | 6).uleb(2).b;
  auto p = Buf()
               .u8(cfa::same_value).uleb(6)
               .u8(cfa::offset | 3).uleb(3)
               .u8(cfa::undefined).uleb(16)
               .u8(cfa::reg).uleb(12).uleb(13)
               .u8(cfa::advance_loc | 1)
               .u8(cfa::restore | 6)
               .u8(cfa::restore_extended).uleb(3)
               .u8(cfa::restore_extended).uleb(16);
  Row row;
  REQUIRE_FALSE(row_of(cie_program, p.b, 0x1000, row));
  CHECK(row.regs[6].kind == RuleKind::SameValue);
  CHECK(row.regs[3].kind == RuleKind::Offset);
  CHECK(row.regs[16].kind == RuleKind::Undefined);
  CHECK((row.regs[12].kind == RuleKind::Register && row.regs[12].n == 13));
  REQUIRE_FALSE(row_of(cie_program, p.b, 0x1001, row));
  CHECK((row.regs[6].kind == RuleKind::Offset && row.regs[6].n == -16));
  CHECK(row.regs[3].kind == RuleKind::Unspecified);
  CHECK((row.regs[16].kind == RuleKind::Offset && row.regs[16].n == -8));
}

TEST_CASE("CFA programs: remember_state and restore_state save every rule, the CFA's included", "[unwind]") {
  // gcc's epilogue in the middle of a function: after the ret the prologue's rules hold again.
  auto p = Buf()
               .u8(cfa::def_cfa_offset).uleb(16)
               .u8(cfa::offset | 6).uleb(2)
               .u8(cfa::advance_loc | 4)
               .u8(cfa::remember_state)
               .u8(cfa::def_cfa_offset).uleb(8)
               .u8(cfa::restore | 6)
               .u8(cfa::advance_loc | 1)
               .u8(cfa::restore_state);
  Row row;
  REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1004, row));
  CHECK(row.cfa.offset == 8);
  CHECK(row.regs[6].kind == RuleKind::Unspecified);
  REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1005, row));
  CHECK(row.cfa.offset == 16);
  CHECK((row.regs[6].kind == RuleKind::Offset && row.regs[6].n == -16));
}

TEST_CASE("CFA programs: def_cfa in every form, and the expression rules keep their bytes", "[unwind]") {
  Row row;
  REQUIRE_FALSE(row_of({}, Buf().u8(cfa::def_cfa).uleb(6).uleb(16).b, 0x1000, row));
  CHECK((row.cfa.kind == CfaKind::RegOffset && row.cfa.reg == 6 && row.cfa.offset == 16));
  REQUIRE_FALSE(row_of(kEntryRow, Buf().u8(cfa::def_cfa_register).uleb(6).b, 0x1000, row));
  CHECK((row.cfa.reg == 6 && row.cfa.offset == 8));
  REQUIRE_FALSE(row_of(kEntryRow, Buf().u8(cfa::def_cfa_sf).uleb(6).sleb(-2).b, 0x1000, row));
  CHECK((row.cfa.reg == 6 && row.cfa.offset == 16));
  REQUIRE_FALSE(row_of(kEntryRow, Buf().u8(cfa::def_cfa_offset_sf).sleb(-3).b, 0x1000, row));
  CHECK((row.cfa.reg == 7 && row.cfa.offset == 24));
  REQUIRE_FALSE(row_of({}, {}, 0x1000, row));
  CHECK(row.cfa.kind == CfaKind::Unset);  // nothing defined it: gdb refuses such a frame too

  const std::vector<std::uint8_t> e1 = {op::breg0 + 7, 8}, e2 = {op::breg0 + 7, 16}, e3 = {op::lit0 + 1};
  auto p = Buf().u8(cfa::def_cfa_expression).block(e1).u8(cfa::expression).uleb(3).block(e2);
  p.u8(cfa::val_expression).uleb(12).block(e3).u8(cfa::gnu_args_size).uleb(32).u8(cfa::nop);
  REQUIRE_FALSE(row_of(kEntryRow, p.b, 0x1000, row));
  CHECK(row.cfa.kind == CfaKind::Expression);
  CHECK(std::vector<std::uint8_t>(row.cfa.expr.begin(), row.cfa.expr.end()) == e1);
  CHECK(row.regs[3].kind == RuleKind::Expression);
  CHECK(std::vector<std::uint8_t>(row.regs[3].expr.begin(), row.regs[3].expr.end()) == e2);
  CHECK(row.regs[12].kind == RuleKind::ValExpression);
  // def_cfa_offset after an expression CFA makes it register-based again, as in gdb.
  REQUIRE_FALSE(row_of(kEntryRow, Buf().add(p.b).u8(cfa::def_cfa_offset).uleb(8).b, 0x1000, row));
  CHECK(row.cfa.kind == CfaKind::RegOffset);
}

TEST_CASE("CFA programs: unknown opcodes, truncated operands and unbalanced state stop, never guess", "[unwind]") {
  Row row;
  CHECK(row_of(kEntryRow, {cfa::gnu_window_save}, 0x1000, row) == Stop::Unsupported);
  CHECK(row_of(kEntryRow, {0x1c}, 0x1000, row) == Stop::Unsupported);
  CHECK(row_of(kEntryRow, {cfa::offset_extended, 3}, 0x1000, row) == Stop::Unreadable);
  CHECK(row_of(kEntryRow, {cfa::def_cfa_expression, 10, op::lit0}, 0x1000, row) == Stop::Unreadable);
  CHECK(row_of(kEntryRow, {cfa::advance_loc2, 1}, 0x2000, row) == Stop::Unreadable);
  CHECK(row_of(kEntryRow, {cfa::restore_state}, 0x1000, row) == Stop::Unsupported);
  CHECK(row_of(kEntryRow, std::vector<std::uint8_t>(100, cfa::remember_state), 0x1000, row) == Stop::Unsupported);
  // A truncated instruction past the target is never reached.
  CHECK_FALSE(row_of(kEntryRow, {cfa::advance_loc | 8, cfa::offset_extended, 3}, 0x1000, row));
}

// ------------------------------------------------------------ expressions --

TEST_CASE("expressions: glibc's PLT CFA adds 8 once the pc is past the push in a 16-byte stub", "[unwind]") {
  ImageReader memory;
  for (std::uint8_t threshold : {11, 10}) {
    const std::vector<std::uint8_t> plt = {op::breg0 + 7, 8,      op::breg0 + 16, 0,          op::lit0 + 15, op::and_,
                                           static_cast<std::uint8_t>(op::lit0 + threshold), op::ge, op::lit0 + 3,
                                           op::shl, op::plus};
    const Addr stub = 0x401020, rsp = 0x7ffd0000;
    for (Addr pc = stub; pc < stub + 16; ++pc) {
      const Regs regs = make_regs({{kRsp, rsp}, {kRip, pc}});
      std::uint64_t cfa = 0;
      REQUIRE_FALSE(evaluate(plt, {regs, memory}, std::nullopt, cfa));
      CHECK(cfa == rsp + ((pc - stub) >= threshold ? 16 : 8));
    }
  }
}

TEST_CASE("expressions: constants, stack, arithmetic, signed comparisons, branches and memory", "[unwind]") {
  ImageReader memory;
  memory.add(0x5000, Buf().u64(0x1122334455667788).b);
  const Regs regs = make_regs({{kRsp, 0x7000}, {3, 5}});
  auto eval = [&](const Buf& e, std::optional<std::uint64_t> push = std::nullopt, Addr bias = 0) {
    std::uint64_t v = 0;
    Failure f = evaluate(e.b, {regs, memory, bias}, push, v);
    return f ? std::optional<std::uint64_t>() : std::optional<std::uint64_t>(v);
  };
  using V = std::optional<std::uint64_t>;
  CHECK(eval(Buf().u8(op::const1u).u8(200)) == V(200));
  CHECK(eval(Buf().u8(op::const1s).u8(0xff)) == V(~0ull));
  CHECK(eval(Buf().u8(op::const2u).u16(60000)) == V(60000));
  CHECK(eval(Buf().u8(op::const2s).u16(0xfffe)) == V(static_cast<std::uint64_t>(-2)));
  CHECK(eval(Buf().u8(op::const4u).u32(4000000000u)) == V(4000000000u));
  CHECK(eval(Buf().u8(op::const4s).u32(0xfffffffd)) == V(static_cast<std::uint64_t>(-3)));
  CHECK(eval(Buf().u8(op::const8u).u64(1ull << 40)) == V(1ull << 40));
  CHECK(eval(Buf().u8(op::const8s).u64(~0ull)) == V(~0ull));
  CHECK(eval(Buf().u8(op::constu).uleb(1000)) == V(1000));
  CHECK(eval(Buf().u8(op::consts).sleb(-1000)) == V(static_cast<std::uint64_t>(-1000)));
  CHECK(eval(Buf().u8(op::lit0 + 7).u8(op::lit0 + 3).u8(op::minus)) == V(4));
  CHECK(eval(Buf().u8(op::lit0 + 7).u8(op::lit0 + 3).u8(op::mul)) == V(21));
  CHECK(eval(Buf().u8(op::consts).sleb(-7).u8(op::lit0 + 2).u8(op::div)) == V(static_cast<std::uint64_t>(-3)));
  CHECK(eval(Buf().u8(op::lit0 + 7).u8(op::lit0 + 3).u8(op::mod)) == V(1));
  CHECK(eval(Buf().u8(op::lit0 + 6).u8(op::lit0 + 3).u8(op::and_)) == V(2));
  CHECK(eval(Buf().u8(op::lit0 + 6).u8(op::lit0 + 3).u8(op::or_)) == V(7));
  CHECK(eval(Buf().u8(op::lit0 + 6).u8(op::lit0 + 3).u8(op::xor_)) == V(5));
  CHECK(eval(Buf().u8(op::consts).sleb(-16).u8(op::lit0 + 2).u8(op::shr)) == V(~0ull >> 2 & ~3ull));
  CHECK(eval(Buf().u8(op::consts).sleb(-16).u8(op::lit0 + 2).u8(op::shra)) == V(static_cast<std::uint64_t>(-4)));
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::const1u).u8(70).u8(op::shl)) == V(0));
  CHECK(eval(Buf().u8(op::lit0 + 5).u8(op::neg)) == V(static_cast<std::uint64_t>(-5)));
  CHECK(eval(Buf().u8(op::consts).sleb(-5).u8(op::abs)) == V(5));
  CHECK(eval(Buf().u8(op::lit0).u8(op::not_)) == V(~0ull));
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::plus_uconst).uleb(300)) == V(301));
  // Comparisons are signed: -1 < 1.
  CHECK(eval(Buf().u8(op::consts).sleb(-1).u8(op::lit0 + 1).u8(op::lt)) == V(1));
  CHECK(eval(Buf().u8(op::consts).sleb(-1).u8(op::lit0 + 1).u8(op::gt)) == V(0));
  CHECK(eval(Buf().u8(op::lit0 + 2).u8(op::lit0 + 2).u8(op::le)) == V(1));
  CHECK(eval(Buf().u8(op::lit0 + 2).u8(op::lit0 + 2).u8(op::eq)) == V(1));
  CHECK(eval(Buf().u8(op::lit0 + 2).u8(op::lit0 + 2).u8(op::ne)) == V(0));
  // Stack operations.
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::lit0 + 2).u8(op::swap).u8(op::minus)) == V(1));
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::lit0 + 2).u8(op::over).u8(op::plus).u8(op::plus)) == V(4));
  CHECK(eval(Buf().u8(op::lit0 + 9).u8(op::lit0 + 1).u8(op::lit0 + 2).u8(op::pick).u8(2)) == V(9));
  CHECK(eval(Buf().u8(op::lit0 + 4).u8(op::dup).u8(op::mul)) == V(16));
  CHECK(eval(Buf().u8(op::lit0 + 4).u8(op::lit0 + 5).u8(op::drop)) == V(4));
  // rot: 1 2 3 -> 3 1 2 (the top becomes the third entry)
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::lit0 + 2).u8(op::lit0 + 3).u8(op::rot)) == V(2));
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::lit0 + 2).u8(op::lit0 + 3).u8(op::rot).u8(op::drop).u8(op::drop)) ==
        V(3));
  // Branches: skip over a lit, bra taken on non-zero only.
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::skip).u16(1).u8(op::lit0 + 2)) == V(1));
  CHECK(eval(Buf().u8(op::lit0 + 7).u8(op::lit0 + 1).u8(op::bra).u16(1).u8(op::lit0 + 2)) == V(7));
  CHECK(eval(Buf().u8(op::lit0 + 7).u8(op::lit0).u8(op::bra).u16(1).u8(op::lit0 + 2)) == V(2));
  // Registers, the pushed CFA, memory and link-time addresses.
  CHECK(eval(Buf().u8(op::breg0 + 7).sleb(-8)) == V(0x6ff8));
  CHECK(eval(Buf().u8(op::bregx).uleb(3).sleb(10)) == V(15));
  CHECK(eval(Buf().u8(op::plus_uconst).uleb(16), 0x100) == V(0x110));
  CHECK(eval(Buf().u8(op::constu).uleb(0x5000).u8(op::deref)) == V(0x1122334455667788));
  CHECK(eval(Buf().u8(op::constu).uleb(0x5000).u8(op::deref_size).u8(2)) == V(0x7788));
  CHECK(eval(Buf().u8(op::addr).u64(0x1000), std::nullopt, 0x7f0000000000) == V(0x7f0000001000));
  CHECK(eval(Buf().u8(op::lit0 + 1).u8(op::nop)) == V(1));
}

TEST_CASE("expressions: underflow, overflow, loops, unknown registers and unreadable memory fail", "[unwind]") {
  ImageReader memory;
  const Regs regs = make_regs({{kRsp, 0x7000}});
  auto fail = [&](const Buf& e) {
    std::uint64_t v = 0;
    return evaluate(e.b, {regs, memory}, std::nullopt, v);
  };
  CHECK(fail(Buf()) == Stop::Unsupported);                   // an empty stack has no result
  CHECK(fail(Buf().u8(op::plus)) == Stop::Unsupported);      // underflow
  CHECK(fail(Buf().add(std::vector<std::uint8_t>(65, op::lit0))) == Stop::Unsupported);  // overflow
  CHECK(fail(Buf().u8(op::skip).u16(static_cast<std::uint16_t>(-3))) == Stop::Unsupported);  // a loop, bounded
  CHECK(fail(Buf().u8(op::skip).u16(100)) == Stop::Unsupported);  // a jump out of the expression
  CHECK(fail(Buf().u8(op::lit0 + 1).u8(op::lit0).u8(op::div)) == Stop::Unsupported);
  CHECK(fail(Buf().u8(op::reg0)) == Stop::Unsupported);  // a location, not a value
  CHECK(fail(Buf().u8(op::bregx).uleb(17).sleb(0)) == Stop::Unsupported);
  CHECK(fail(Buf().u8(op::breg0 + 3).sleb(0)) == Stop::RegisterUnknown);  // rbx is not known
  CHECK(fail(Buf().u8(op::lit0 + 1).u8(op::deref)) == Stop::Unreadable);
  CHECK(fail(Buf().u8(op::const4u).u16(1)) == Stop::Unreadable);  // truncated
}
