// Synthetic ELF objects with .eh_frame (and .eh_frame_hdr) written by hand,
// for the unwinder's tests and the fuzzers' seeds: CIEs, FDEs with their
// programs, symbols; one PT_LOAD at vaddr 0 maps the whole file.
#pragma once

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "support/cfi_bytes.hpp"
#include "support/elf_builder.hpp"

namespace pyhang::testing {

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
inline constexpr Addr kText = 0x1000, kHdr = 0x2000, kEhFrame = 0x2400;

inline std::vector<std::uint8_t> build_object(const TestObject& spec) {
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
      if (letter == 'R') aug.u8(unwind::pe::kPcrel | unwind::pe::kSdata4);
      if (letter == 'L') aug.u8(unwind::pe::kPcrel | unwind::pe::kSdata4);
      if (letter == 'P') aug.u8(unwind::pe::kUdata8).u64(0x12345678);
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
  hdr.u8(1).u8(unwind::pe::kPcrel | unwind::pe::kSdata4).u8(unwind::pe::kUdata4).u8(unwind::pe::kDatarel | unwind::pe::kSdata4);
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


// Three functions as gcc compiles them.
//   leaf   0x1000-0x1040: push rbx at +4 (CFA rsp+16, rbx at CFA-16)
//   middle 0x1100-0x1180: push rbp at +1, mov rsp,rbp at +4 (CFA rbp+16)
//   outer  0x1200-0x1240: a thread's first function, its return address undefined
inline TestObject three_functions() {
  TestObject o;
  o.fdes = {{0x1000, 0x40, {cfa::advance_loc | 4, cfa::def_cfa_offset, 16, cfa::offset | 3, 2}},
            {0x1100,
             0x80,
             {cfa::advance_loc | 1, cfa::def_cfa_offset, 16, cfa::offset | 6, 2, cfa::advance_loc | 3,
              cfa::def_cfa_register, 6}},
            {0x1200, 0x40, {cfa::undefined, 16}}};
  return o;
}


}  // namespace pyhang::testing
