// GIVEN CFI bytes, synthetic ELF objects with stacks, this process and a
// stopped child, WHEN they are unwound, THEN the pcs are the ones gdb lists,
// and garbage ends with a stop reason, never a crash, a hang or a guess.
#include <catch2/catch.hpp>

#include <elf.h>
#include <execinfo.h>
#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "elf_builder.hpp"
#include "pyhang/target.hpp"
#include "pyhang/unwind.hpp"
#include "self_registers.hpp"

using namespace pyhang;
using namespace pyhang::unwind;

namespace {

// DWARF opcodes used below (DWARF 5, sections 6.4.2 and 2.5).
namespace cfa {
constexpr std::uint8_t advance_loc = 0x40, offset = 0x80, restore = 0xc0, nop = 0x00, set_loc = 0x01,
                       advance_loc1 = 0x02, advance_loc2 = 0x03, advance_loc4 = 0x04, offset_extended = 0x05,
                       restore_extended = 0x06, undefined = 0x07, same_value = 0x08, reg = 0x09,
                       remember_state = 0x0a, restore_state = 0x0b, def_cfa = 0x0c, def_cfa_register = 0x0d,
                       def_cfa_offset = 0x0e, def_cfa_expression = 0x0f, expression = 0x10,
                       offset_extended_sf = 0x11, def_cfa_sf = 0x12, def_cfa_offset_sf = 0x13, val_offset = 0x14,
                       val_offset_sf = 0x15, val_expression = 0x16, gnu_args_size = 0x2e,
                       gnu_negative_offset_extended = 0x2f, gnu_window_save = 0x2d;
}  // namespace cfa
namespace op {
constexpr std::uint8_t addr = 0x03, deref = 0x06, const1u = 0x08, const1s = 0x09, const2u = 0x0a, const2s = 0x0b,
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
    testing::put(b, &v, sizeof v);
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
    testing::put(b, s.c_str(), s.size() + 1);
    return *this;
  }
  Buf& add(const std::vector<std::uint8_t>& v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
  Buf& block(const std::vector<std::uint8_t>& v) { return uleb(v.size()).add(v); }
};

Bytes at(const std::vector<std::uint8_t>& v, Addr addr = 0) { return {v, addr}; }

// The CIE program every gcc CIE starts with: CFA = rsp + 8, return address at CFA - 8.
const std::vector<std::uint8_t> kEntryRow = {cfa::def_cfa, 7, 8, cfa::offset | 16, 1};

Cie gcc_cie() {
  Cie c;
  c.code_align = 1;
  c.data_align = -8;
  c.ra_column = kRip;
  c.fde_encoding = pe::kPcrel | pe::kSdata4;
  c.augmentation_data = true;
  return c;
}

// The row at `target` of an FDE at 0x1000..0x2000 with these programs.
Failure row_of(const std::vector<std::uint8_t>& cie_program, const std::vector<std::uint8_t>& fde_program,
               Addr target, Row& row, Cie cie = gcc_cie()) {
  cie.instructions = at(cie_program);
  Fde fde{0x1000, 0x2000, at(fde_program)};
  return find_row(cie, fde, {}, target, row);
}

Regs make_regs(std::initializer_list<std::pair<int, std::uint64_t>> values) {
  Regs r;
  for (auto [n, v] : values) r.r[n] = v;
  return r;
}

// ---- synthetic ELF objects -------------------------------------------------

struct TestCie {
  std::string augmentation = "zR";
  std::vector<std::uint8_t> program = kEntryRow;
};

struct TestFde {
  Addr begin, size;
  std::vector<std::uint8_t> program;
  std::size_t cie = 0;
};

struct TestObject {
  std::vector<TestCie> cies{TestCie{}};
  std::vector<TestFde> fdes;
  std::vector<testing::TestSymbol> symbols;  // in .symtab
  bool hdr = true;                           // PT_GNU_EH_FRAME with a search table
};

// Link-time layout: code in .text, the header, then .eh_frame; one PT_LOAD
// at vaddr 0 maps the whole file.
constexpr Addr kText = 0x1000, kHdr = 0x2000, kEhFrame = 0x2400;

std::vector<std::uint8_t> build_object(const TestObject& spec) {
  Buf eh;
  std::vector<Addr> cie_addr, fde_addr;
  auto finish_entry = [&](Buf& body) {  // length, body, padded with DW_CFA_nop to 8 bytes
    while ((body.b.size() + 4) % 8) body.u8(cfa::nop);
    eh.u32(static_cast<std::uint32_t>(body.b.size())).add(body.b);
  };
  for (const TestCie& c : spec.cies) {
    cie_addr.push_back(kEhFrame + eh.b.size());
    Buf body, aug;
    body.u32(0).u8(1).str(c.augmentation).uleb(1).sleb(-8).u8(16);
    for (char letter : c.augmentation.substr(c.augmentation.empty() ? 0 : 1)) {
      if (letter == 'R') aug.u8(pe::kPcrel | pe::kSdata4);
      if (letter == 'L') aug.u8(pe::kPcrel | pe::kSdata4);
      if (letter == 'P') aug.u8(pe::kUdata8).u64(0x12345678);
    }
    if (!c.augmentation.empty()) body.block(aug.b);
    body.add(c.program);
    finish_entry(body);
  }
  for (const TestFde& f : spec.fdes) {
    const Addr addr = kEhFrame + eh.b.size();
    fde_addr.push_back(addr);
    Buf body;
    body.u32(static_cast<std::uint32_t>(addr + 4 - cie_addr[f.cie]));
    body.u32(static_cast<std::uint32_t>(f.begin - (addr + 8))).u32(static_cast<std::uint32_t>(f.size));
    if (!spec.cies[f.cie].augmentation.empty()) body.uleb(0);
    body.add(f.program);
    finish_entry(body);
  }
  eh.u32(0);

  Buf hdr;
  hdr.u8(1).u8(pe::kPcrel | pe::kSdata4).u8(pe::kUdata4).u8(pe::kDatarel | pe::kSdata4);
  hdr.u32(static_cast<std::uint32_t>(kEhFrame - (kHdr + 4))).u32(static_cast<std::uint32_t>(spec.fdes.size()));
  std::vector<std::size_t> order(spec.fdes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return spec.fdes[a].begin < spec.fdes[b].begin; });
  for (std::size_t i : order)
    hdr.u32(static_cast<std::uint32_t>(spec.fdes[i].begin - kHdr)).u32(static_cast<std::uint32_t>(fde_addr[i] - kHdr));

  std::vector<std::uint8_t> f(kEhFrame + eh.b.size(), 0);
  std::copy(hdr.b.begin(), hdr.b.end(), f.begin() + kHdr);
  std::copy(eh.b.begin(), eh.b.end(), f.begin() + kEhFrame);

  struct Section {
    std::string name;
    std::uint32_t type;
    std::uint64_t off, size;
  };
  std::vector<Section> sections = {{".text", SHT_PROGBITS, kText, kHdr - kText},
                                   {".eh_frame_hdr", SHT_PROGBITS, kHdr, hdr.b.size()},
                                   {".eh_frame", SHT_PROGBITS, kEhFrame, eh.b.size()}};
  Buf symtab, strtab;
  symtab.add(std::vector<std::uint8_t>(sizeof(Elf64_Sym), 0));
  strtab.u8(0);
  for (const auto& s : spec.symbols) {
    Elf64_Sym sym{};
    sym.st_name = static_cast<std::uint32_t>(strtab.b.size());
    sym.st_info = ELF64_ST_INFO(STB_GLOBAL, s.type);
    sym.st_shndx = 1;
    sym.st_value = s.value;
    sym.st_size = s.size;
    symtab.fixed(sym);
    strtab.str(s.name);
  }
  auto add_blob = [&](const std::string& name, std::uint32_t type, const std::vector<std::uint8_t>& bytes) {
    testing::align(f, 8);
    sections.push_back({name, type, f.size(), bytes.size()});
    f.insert(f.end(), bytes.begin(), bytes.end());
  };
  add_blob(".symtab", SHT_SYMTAB, symtab.b);
  add_blob(".strtab", SHT_STRTAB, strtab.b);
  Buf shstr;
  shstr.u8(0);
  std::vector<std::uint32_t> names;
  for (auto& s : sections) names.push_back(static_cast<std::uint32_t>(shstr.b.size())), shstr.str(s.name);
  names.push_back(static_cast<std::uint32_t>(shstr.b.size()));
  shstr.str(".shstrtab");
  add_blob(".shstrtab", SHT_STRTAB, shstr.b);
  testing::align(f, 8);
  const std::uint64_t shoff = f.size();
  f.resize(f.size() + sizeof(Elf64_Shdr));  // the null section
  for (std::size_t i = 0; i < sections.size(); ++i) {
    Elf64_Shdr sh{};
    sh.sh_name = names[i];
    sh.sh_type = sections[i].type;
    sh.sh_addr = sections[i].off;
    sh.sh_offset = sections[i].off;
    sh.sh_size = sections[i].size;
    testing::put(f, &sh, sizeof sh);
  }

  testing::write_elf_header(f, ET_DYN, spec.hdr ? 2 : 1, shoff, static_cast<std::uint16_t>(sections.size() + 1),
                            static_cast<std::uint16_t>(sections.size()));
  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R | PF_X;
  load.p_filesz = load.p_memsz = f.size();
  load.p_align = 4096;
  std::memcpy(f.data() + sizeof(Elf64_Ehdr), &load, sizeof load);
  Elf64_Phdr eh_frame_hdr{};
  eh_frame_hdr.p_type = PT_GNU_EH_FRAME;
  eh_frame_hdr.p_flags = PF_R;
  eh_frame_hdr.p_offset = eh_frame_hdr.p_vaddr = kHdr;
  eh_frame_hdr.p_filesz = eh_frame_hdr.p_memsz = hdr.b.size();
  if (spec.hdr) std::memcpy(f.data() + sizeof(Elf64_Ehdr) + sizeof load, &eh_frame_hdr, sizeof eh_frame_hdr);
  return f;
}

// An object written to a file and mapped at kBase, with a stack at
// kStack; the unwinder reads both through one ImageReader.
struct Process {
  static constexpr Addr kBase = 0x7f0000000000;
  static constexpr Addr kStack = 0x7ffd00000000;
  std::filesystem::path path;
  std::vector<std::uint8_t> stack = std::vector<std::uint8_t>(0x1000, 0);
  std::vector<std::pair<Addr, std::vector<std::uint8_t>>> code;  // target memory besides the stack
  std::unique_ptr<AddressSpace> space;

  explicit Process(const std::vector<std::uint8_t>& object, const std::string& name = "obj") {
    path = std::filesystem::temp_directory_path() /
           ("pyhang-unwind-" + name + "-" + std::to_string(::getpid()) + ".so");
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(object.data()), object.size());
    space = std::make_unique<AddressSpace>(
        std::vector<Mapping>{{kBase, kBase + ((object.size() + 0xfff) & ~std::size_t{0xfff}), 0, "r-xp", path}});
  }
  ~Process() { std::filesystem::remove(path); }
  void put(Addr addr, std::uint64_t v) { std::memcpy(&stack.at(addr - kStack), &v, 8); }
  Result unwind(const Regs& regs, std::size_t max = 64, bool as_executable = false) {
    ImageReader memory;
    memory.add(kStack, stack);
    for (auto& [addr, bytes] : code) memory.add(addr, bytes);
    Unwinder u(memory, *space, as_executable ? path.string() : std::string());
    return u.unwind(regs, max);
  }
};

constexpr Addr B = Process::kBase, S = Process::kStack;

// Three functions as gcc compiles them.
//   leaf   0x1000-0x1040: push rbx at +4 (CFA rsp+16, rbx at CFA-16)
//   middle 0x1100-0x1180: push rbp at +1, mov rsp,rbp at +4 (CFA rbp+16)
//   outer  0x1200-0x1240: a thread's first function, its return address undefined
TestObject three_functions() {
  TestObject o;
  o.fdes = {{0x1000, 0x40, {cfa::advance_loc | 4, cfa::def_cfa_offset, 16, cfa::offset | 3, 2}},
            {0x1100,
             0x80,
             {cfa::advance_loc | 1, cfa::def_cfa_offset, 16, cfa::offset | 6, 2, cfa::advance_loc | 3,
              cfa::def_cfa_register, 6}},
            {0x1200, 0x40, {cfa::undefined, 16}}};
  return o;
}

// The stack of leaf (pc 0x1010) <- middle (returns to 0x1120) <- outer
// (returns to 0x1210).
void three_frames(Process& p, Regs& regs) {
  p.put(S + 0x100, 0x1234);         // leaf: the caller's rbx
  p.put(S + 0x108, B + 0x1120);     // leaf: return address into middle
  p.put(S + 0x200, S + 0x300);      // middle: the caller's rbp
  p.put(S + 0x208, B + 0x1210);     // middle: return address into outer
  regs = make_regs({{kRip, B + 0x1010}, {kRsp, S + 0x100}, {kRbp, S + 0x200}, {3, 0x99}});
}

}  // namespace

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
  CHECK(fail(Buf().u8(op::breg0 + 3).sleb(0)) == Stop::Unreadable);  // rbx is not known
  CHECK(fail(Buf().u8(op::lit0 + 1).u8(op::deref)) == Stop::Unreadable);
  CHECK(fail(Buf().u8(op::const4u).u16(1)) == Stop::Unreadable);  // truncated
}

// ---------------------------------------------------------- whole unwinds --

TEST_CASE("three synthetic frames unwind to the outermost, through .eh_frame_hdr or the .eh_frame index",
          "[unwind]") {
  TestObject spec = three_functions();
  const bool hdr = GENERATE(true, false);
  spec.hdr = hdr;
  Process p(build_object(spec), hdr ? "hdr" : "nohdr");
  REQUIRE(p.space->objects().size() == 1);
  CfiTable table(p.space->objects()[0].elf);
  CHECK(table.has_search_table() == hdr);
  Regs regs;
  three_frames(p, regs);

  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, B + 0x1210});
  CHECK(r.stop == Stop::End);

  r = p.unwind(regs, 2);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
  CHECK(r.stop == Stop::Depth);
  CHECK(p.unwind(regs, 0).stop == Stop::Depth);

  // Frame 0 just before the push: the return address is still at rsp.
  regs.r[kRip] = B + 0x1002;
  regs.r[kRsp] = S + 0x108;
  r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1002, B + 0x1120, B + 0x1210});
}

TEST_CASE("a caller that ends in a call which never returns is found from pc - 1", "[unwind]") {
  // middle ends with its call (the return address is the first byte after
  // it); the next function starts there with CFI that would end the unwind.
  TestObject spec = three_functions();
  spec.fdes[1].size = 0x20;
  spec.fdes.push_back({0x1120, 0x20, {cfa::undefined, 16}});
  Process p(build_object(spec));
  Regs regs;
  three_frames(p, regs);
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, B + 0x1210});
  CHECK(r.stop == Stop::End);
}

TEST_CASE("a signal trampoline (S) restores the interrupted frame, which is looked up at its pc", "[unwind]") {
  // Like glibc's __restore_rt: the FDE starts one byte before the address
  // the handler returns to; every register comes from the sigcontext on the
  // stack through DW_CFA_expression, the CFA from the saved rsp.
  TestObject spec = three_functions();
  spec.cies.push_back({"zRS", {}});
  const std::uint8_t oRSP = 0xa0, oRBP = 0x78, oRIP = 0xa8;
  auto at_rsp = [](std::uint8_t off) { return Buf().u8(op::breg0 + 7).sleb(off).b; };
  auto tramp = Buf().u8(cfa::def_cfa_expression).block(Buf().add(at_rsp(oRSP)).u8(op::deref).b);
  tramp.u8(cfa::expression).uleb(6).block(at_rsp(oRBP));
  tramp.u8(cfa::expression).uleb(7).block(at_rsp(oRSP));
  tramp.u8(cfa::expression).uleb(16).block(at_rsp(oRIP));
  spec.fdes.push_back({0x12ff, 0x11, tramp.b, 1});
  // The interrupted function starts exactly at the interrupted pc: pc - 1
  // would find nothing.
  spec.fdes.push_back({0x1400, 0x40, {}});
  Process p(build_object(spec));
  // frame 0: leaf, called by the kernel with the trampoline as return address
  p.put(S + 0x500, 0x1234);
  p.put(S + 0x508, B + 0x1300);
  // the sigcontext at the trampoline's rsp (S + 0x510); the interrupted
  // stack lies below the handler's, as on an alternate signal stack
  p.put(S + 0x510 + oRSP, S + 0x040);
  p.put(S + 0x510 + oRBP, S + 0x777);
  p.put(S + 0x510 + oRIP, B + 0x1400);
  p.put(S + 0x040, B + 0x1210);  // the interrupted function's return address into outer
  Regs regs = make_regs({{kRip, B + 0x1010}, {kRsp, S + 0x500}});
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1300, B + 0x1400, B + 0x1210});
  CHECK(r.stop == Stop::End);
}

TEST_CASE("the unwind ends after the executable's main, as gdb's backtrace past-main off", "[unwind]") {
  TestObject spec = three_functions();
  spec.symbols.push_back({"main", 0x1100, 0x80, false});
  Process p(build_object(spec));
  Regs regs;
  three_frames(p, regs);
  Result r = p.unwind(regs, 64, /*as_executable=*/true);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
  CHECK(r.stop == Stop::End);
  // main of a shared library is nobody's main.
  CHECK(p.unwind(regs, 64, false).pcs.size() == 3);
}

TEST_CASE("frame 0 on a ret takes its return address from rsp, whatever the CFI says, as gdb", "[unwind]") {
  TestObject spec = three_functions();
  Process p(build_object(spec));
  Regs regs;
  three_frames(p, regs);
  // pc in leaf after its push by the CFI, but the instruction there is a ret:
  // the push was undone already.
  p.code.push_back({B + 0x1010, {0xc3}});
  regs.r[kRsp] = S + 0x108;
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, B + 0x1210});
}

TEST_CASE("a zero return address after a normal frame ends the unwind with it; one in page 0 is a bad frame",
          "[unwind]") {
  Process p(build_object(three_functions()));
  Regs regs;
  three_frames(p, regs);
  p.put(S + 0x208, 0);
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, 0});
  CHECK(r.stop == Stop::End);
  p.put(S + 0x208, 0x10);
  r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
  CHECK(r.stop == Stop::BadFrame);
}

TEST_CASE("stacks that loop or go down, and pcs without CFI, stop with what is certain", "[unwind]") {
  Process p(build_object(three_functions()));
  Regs regs;
  three_frames(p, regs);
  SECTION("middle's saved rbp points at itself and returns into middle: a cycle") {
    p.put(S + 0x200, S + 0x200);
    p.put(S + 0x208, B + 0x1120);
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
    CHECK(r.stop == Stop::BadFrame);
  }
  SECTION("a caller's CFA below its callee's") {
    regs.r[kRbp] = S + 0x010;  // middle's CFA would be S + 0x20, below leaf's S + 0x110
    p.put(S + 0x010, S + 0x300);
    p.put(S + 0x018, B + 0x1210);
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010});
    CHECK(r.stop == Stop::BadFrame);
  }
  SECTION("a return address outside any object is listed, then no-cfi") {
    p.put(S + 0x208, 0x500000);
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, 0x500000});
    CHECK(r.stop == Stop::NoCfi);
  }
  SECTION("a frame 0 in an object gap, with no pc, or with an unreadable stack") {
    regs.r[kRip] = B + 0x1800;
    CHECK(p.unwind(regs).stop == Stop::NoCfi);
    regs.r[kRip].reset();
    CHECK(p.unwind(regs).stop == Stop::Unreadable);
    regs.r[kRip] = B + 0x1010;
    regs.r[kRsp] = 0x1000000;
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010});
    CHECK(r.stop == Stop::Unreadable);
  }
  SECTION("a CFA register that is not known") {
    regs.r[kRbp].reset();  // leaf does not save rbp: middle's CFA needs it
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010});
    CHECK(r.stop == Stop::Unreadable);
  }
}

TEST_CASE("garbage CFI and garbage stacks end with a stop reason, never a crash or a hang", "[unwind]") {
  const std::vector<std::uint8_t> good = build_object(three_functions());
  std::mt19937_64 rng(12345);
  const Stop valid[] = {Stop::End, Stop::Depth, Stop::NoCfi, Stop::Unreadable, Stop::Unsupported, Stop::BadFrame};
  for (int round = 0; round < 150; ++round) {
    std::vector<std::uint8_t> bytes = good;
    // Mutate the CFI (header and .eh_frame), or the whole of it at random.
    const std::size_t end = std::min<std::size_t>(bytes.size(), kEhFrame + 0x100);
    const int flips = round < 100 ? 1 + static_cast<int>(rng() % 8) : 400;
    for (int i = 0; i < flips; ++i) bytes[kHdr + rng() % (end - kHdr)] = static_cast<std::uint8_t>(rng());
    Process p(bytes, "garbage");
    for (std::size_t i = 0; i < p.stack.size(); i += 8) {
      const std::uint64_t kinds[] = {rng(), B + 0x1000 + rng() % 0x300, S + rng() % 0x1000, 0};
      p.put(S + i, kinds[rng() % 4]);
    }
    const Regs regs = make_regs({{kRip, B + 0x1000 + rng() % 0x300},
                                 {kRsp, S + rng() % 0x1000},
                                 {kRbp, S + rng() % 0x1000},
                                 {3, rng()}});
    Result r = p.unwind(regs, 32);
    CHECK(r.pcs.size() <= 32);
    CHECK(std::find(std::begin(valid), std::end(valid), r.stop) != std::end(valid));
  }
}

// ------------------------------------------------------------ real stacks --

namespace {

// This function's registers at the instruction after the asm, unwound
// while its frame is live, next to glibc's backtrace() (libgcc's unwinder).
struct SelfUnwind {
  Result ours;
  std::vector<Addr> libgcc;
};

__attribute__((noipa)) SelfUnwind unwind_self(Unwinder& u) {
  Regs regs;
  PYHANG_CAPTURE_REGS(regs);
  SelfUnwind out;
  out.ours = u.unwind(regs, 64);
  void* frames[64];
  const int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) out.libgcc.push_back(reinterpret_cast<Addr>(frames[i]));
  return out;
}

}  // namespace

extern "C" {
// A call chain for the child below; noipa keeps each a real, separate frame.
__attribute__((noipa)) int pyhang_unwind_test_level3(int fd) {
  const char c = 'r';
  if (write(fd, &c, 1) != 1) return -1;
  pause();
  return 3;
}
__attribute__((noipa)) int pyhang_unwind_test_level2(int fd) { return pyhang_unwind_test_level3(fd) + 2; }
__attribute__((noipa)) int pyhang_unwind_test_level1(int fd) { return pyhang_unwind_test_level2(fd) + 1; }
}

TEST_CASE("this process's own stack unwinds as libgcc's unwinder sees it, and ends at main", "[unwind]") {
  std::shared_ptr<Target> target;
  try {
    target = Target::live(::getpid());
  } catch (const std::exception& e) {
    WARN("Target::live unavailable: " << e.what());
    return;
  }
  Unwinder u(*target);
  const SelfUnwind s = unwind_self(u);
  INFO("stop " << stop_name(s.ours.stop));
  CHECK(s.ours.stop == Stop::End);
  REQUIRE(s.ours.pcs.size() >= 4);
  // backtrace()'s first entries are return addresses in unwind_self (and in
  // an interceptor, under a sanitizer); from unwind_self's caller on, both
  // lists are the same return addresses.
  auto from = std::find(s.libgcc.begin(), s.libgcc.end(), s.ours.pcs[1]);
  REQUIRE(from != s.libgcc.end());
  REQUIRE(from - s.libgcc.begin() <= 2);
  const std::vector<Addr> libgcc(from, s.libgcc.end());
  const std::size_t n = std::min(s.ours.pcs.size() - 1, libgcc.size());
  for (std::size_t i = 0; i < n; ++i) {
    INFO("frame " << i + 1);
    CHECK(s.ours.pcs[i + 1] == libgcc[i]);
  }
  CHECK(target->space().symbolize(s.ours.pcs.back() - 1).function == "main");
}

TEST_CASE("a frame in the vDSO, which has no file on disk, unwinds by the CFI read from memory", "[unwind]") {
  std::shared_ptr<Target> target;
  try {
    target = Target::live(::getpid());
  } catch (const std::exception& e) {
    WARN("Target::live unavailable: " << e.what());
    return;
  }
  const Mapping* vdso = nullptr;
  for (const Mapping& m : target->space().mappings())
    if (m.path == "[vdso]") vdso = &m;
  const auto main_addr = target->space().symbol_address("main");
  if (!vdso || !main_addr) {
    WARN("no [vdso] mapping or no main symbol");
    return;
  }
  auto image = target->memory().read_bytes(vdso->start, vdso->end - vdso->start);
  auto elf = ElfFile::from_image(FileImage::from_bytes(image, "vdso"));
  const auto entry = elf->symbol("__vdso_clock_gettime");
  REQUIRE(entry);
  // Frame 0 on the function's first instruction, called from main: the
  // return address is at rsp.
  std::uint64_t stack[4] = {*main_addr + 1, 0, 0, 0};
  const Regs regs = make_regs({{kRip, vdso->start + entry->value - elf->load_base_vaddr()},
                               {kRsp, reinterpret_cast<Addr>(&stack[0])}});
  Unwinder u(*target);
  const Result r = u.unwind(regs, 8);
  CHECK(r.pcs == std::vector<Addr>{*regs.r[kRip], *main_addr + 1});
  CHECK(r.stop == Stop::End);  // main ends it
}

TEST_CASE("a stopped child blocked in pause() unwinds through its noinline callers", "[unwind]") {
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(pipefd[0]);
    pyhang_unwind_test_level1(pipefd[1]);
    _exit(0);
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{pid};
  close(pipefd[1]);
  pollfd pf{pipefd[0], POLLIN, 0};
  REQUIRE(poll(&pf, 1, 10000) == 1);
  char c;
  REQUIRE(read(pipefd[0], &c, 1) == 1);
  close(pipefd[0]);
  // Wait until it sleeps in pause (system call 34), not on its way there.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::string nr; nr != "34" && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::ifstream("/proc/" + std::to_string(pid) + "/syscall") >> nr;
  }
  if (ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) {
    WARN("ptrace not permitted: " << std::strerror(errno));
    return;
  }
  REQUIRE(ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSTOPPED(status));
  user_regs_struct ur{};
  REQUIRE(ptrace(PTRACE_GETREGS, pid, nullptr, &ur) == 0);

  auto target = Target::live(pid);
  Unwinder u(*target);
  const Regs regs = make_regs({{kRip, ur.rip}, {kRsp, ur.rsp}, {kRbp, ur.rbp}, {3, ur.rbx}, {12, ur.r12},
                               {13, ur.r13}, {14, ur.r14}, {15, ur.r15}, {0, ur.rax}, {1, ur.rdx},
                               {2, ur.rcx}, {4, ur.rsi}, {5, ur.rdi}});
  const Result r = u.unwind(regs, 64);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < r.pcs.size(); ++i) {
    auto s = target->space().symbolize(i == 0 ? r.pcs[i] : r.pcs[i] - 1);
    names.push_back(s.function.empty() ? std::string(s.object ? s.object->basename() : "?") : s.function);
  }
  std::string all;
  for (auto& n : names) all += n + " ";
  INFO(all << "| stop " << stop_name(r.stop));
  CHECK((r.stop == Stop::End || r.stop == Stop::Depth));
  auto level3 = std::find(names.begin(), names.end(), "pyhang_unwind_test_level3");
  REQUIRE(level3 != names.end());
  REQUIRE(names.end() - level3 >= 3);
  CHECK(level3[1] == "pyhang_unwind_test_level2");
  CHECK(level3[2] == "pyhang_unwind_test_level1");
  const LoadedObject* libc = target->space().object_at(r.pcs[0]);
  REQUIRE(libc);
  CHECK(libc->basename().substr(0, 7) == "libc.so");
  ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
}
