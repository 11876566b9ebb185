// ELF files from bytes: headers, sections, segments, notes, symbols and the
// .eh_frame lookup of CfiTable (.eh_frame_hdr's search table or the index).
#include <cstdint>
#include <vector>

#include "fuzz_input.hpp"
#include "pyhang/target/elf.hpp"
#include "pyhang/unwind/cfi.hpp"

using namespace pyhang;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::shared_ptr<ElfFile> elf;
  try {
    elf = ElfFile::from_image(FileImage::from_bytes({data, data + size}, "fuzz.so"));
  } catch (const Error&) {
    return 0;  // not an ELF file pyhang reads: refused, as it must be
  }
  for (const ElfSection& s : elf->sections()) elf->section(s.name);
  for (const ElfNote& n : elf->notes()) (void)n.desc.size();
  (void)elf->build_id();
  (void)elf->soname();
  (void)elf->has_debug_info();
  for (const char* name : {"main", "_PyRuntime", "Py_Version", "gnu_get_libc_version", ""}) {
    if (auto sym = elf->symbol(name)) elf->symbol_at(sym->value);
  }
  std::uint8_t buf[64];
  unwind::CfiTable cfi(elf);
  for (const ElfSegment& seg : elf->segments()) {
    elf->read_vaddr(seg.vaddr, buf, sizeof buf);
    elf->read_vaddr(seg.vaddr + seg.memsz - 8, buf, sizeof buf);
    elf->symbol_at(seg.vaddr + seg.memsz / 2);
    if (seg.type != 1 /* PT_LOAD */) continue;
    for (Addr pc : {seg.vaddr, seg.vaddr + 0x10, seg.vaddr + seg.memsz / 2, seg.vaddr + seg.memsz - 1}) {
      unwind::Fde fde;
      const unwind::Cie* cie = nullptr;
      if (cfi.find(pc, fde, cie) || !cie) continue;
      unwind::Row row;
      unwind::find_row(*cie, fde, cfi.bases(), pc, row);
    }
  }
  (void)elf->load_base_vaddr();
  return 0;
}
