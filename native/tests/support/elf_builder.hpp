// Builds small ELF images in memory for tests: a shared object with .dynsym
// and .symtab, or a core file with notes and PT_LOAD segments.
#pragma once

#include <elf.h>

#include <cstring>
#include <string>
#include <vector>

namespace pyhang::testing {

inline void put(std::vector<std::uint8_t>& out, const void* p, std::size_t n) {
  auto b = static_cast<const std::uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}
inline void align(std::vector<std::uint8_t>& out, std::size_t a) {
  while (out.size() % a) out.push_back(0);
}

// Writes an x86_64 little-endian ELF header of `type` at the start of `f`
// (which must already hold its bytes), program headers right after it.
inline void write_elf_header(std::vector<std::uint8_t>& f, std::uint16_t type, std::uint16_t phnum,
                             std::uint64_t shoff = 0, std::uint16_t shnum = 0, std::uint16_t shstrndx = 0) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = type;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_shoff = shoff;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = phnum;
  eh.e_shentsize = shnum ? sizeof(Elf64_Shdr) : 0;
  eh.e_shnum = shnum;
  eh.e_shstrndx = shstrndx;
  std::memcpy(f.data(), &eh, sizeof eh);
}

struct TestSymbol {
  std::string name;
  std::uint64_t value, size;
  bool dynamic;
  unsigned char type = STT_FUNC;
};

// ET_DYN with one PT_LOAD (vaddr 0) holding the whole file, .dynsym/.dynstr,
// .symtab/.strtab and a .PyRuntime-style named data section.
inline std::vector<std::uint8_t> build_shared_object(const std::vector<TestSymbol>& syms,
                                                     const std::string& extra_section = "",
                                                     const std::vector<std::uint8_t>& extra_bytes = {}) {
  std::vector<std::uint8_t> f(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), 0);
  auto strtab_for = [&](bool dyn, std::vector<std::uint32_t>& offs) {
    std::string s(1, '\0');
    for (auto& sym : syms) {
      if (sym.dynamic != dyn) continue;
      offs.push_back(s.size());
      s += sym.name + '\0';
    }
    return s;
  };
  std::vector<std::uint32_t> doffs, soffs;
  std::string dynstr = strtab_for(true, doffs), strtab = strtab_for(false, soffs);
  auto symtab_for = [&](bool dyn, std::vector<std::uint32_t>& offs) {
    std::vector<std::uint8_t> t(sizeof(Elf64_Sym), 0);
    std::size_t k = 0;
    for (auto& sym : syms) {
      if (sym.dynamic != dyn) continue;
      Elf64_Sym e{};
      e.st_name = offs[k++];
      e.st_info = ELF64_ST_INFO(STB_GLOBAL, sym.type);
      e.st_shndx = 1;
      e.st_value = sym.value;
      e.st_size = sym.size;
      put(t, &e, sizeof e);
    }
    return t;
  };
  auto dynsym = symtab_for(true, doffs), symtab = symtab_for(false, soffs);
  std::string shstr = std::string("\0", 1) + ".dynsym" + '\0' + ".dynstr" + '\0' + ".symtab" + '\0' + ".strtab" +
                      '\0' + ".shstrtab" + '\0' + extra_section + '\0';
  struct Blob { std::uint32_t name, type; std::uint64_t off, size; };
  std::vector<Blob> blobs;
  auto add = [&](std::uint32_t name, std::uint32_t type, const void* p, std::size_t n) {
    align(f, 8);
    blobs.push_back({name, type, f.size(), n});
    put(f, p, n);
  };
  add(1, SHT_DYNSYM, dynsym.data(), dynsym.size());
  add(9, SHT_STRTAB, dynstr.data(), dynstr.size());
  add(17, SHT_SYMTAB, symtab.data(), symtab.size());
  add(25, SHT_STRTAB, strtab.data(), strtab.size());
  add(33, SHT_STRTAB, shstr.data(), shstr.size());
  if (!extra_section.empty()) add(43, SHT_PROGBITS, extra_bytes.data(), extra_bytes.size());
  align(f, 8);
  std::uint64_t shoff = f.size();
  Elf64_Shdr null{};
  put(f, &null, sizeof null);
  for (auto& b : blobs) {
    Elf64_Shdr sh{};
    sh.sh_name = b.name;
    sh.sh_type = b.type;
    sh.sh_offset = b.off;
    sh.sh_addr = b.off;  // one PT_LOAD at vaddr 0: addresses equal offsets
    sh.sh_size = b.size;
    put(f, &sh, sizeof sh);
  }
  write_elf_header(f, ET_DYN, 1, shoff, static_cast<std::uint16_t>(blobs.size() + 1), 5);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_filesz = ph.p_memsz = f.size();
  ph.p_align = 4096;
  std::memcpy(f.data() + sizeof(Elf64_Ehdr), &ph, sizeof ph);
  return f;
}

struct CoreSegment {
  std::uint64_t vaddr;
  std::vector<std::uint8_t> bytes;  // may be shorter than memsz (omitted)
  std::uint64_t memsz;
};

struct CoreSpec {
  int pid = 4242;
  int ppid = 4200;
  std::string fname = "python3";
  std::vector<std::pair<int, std::uint64_t>> threads;  // tid, rip
  struct File { std::uint64_t start, end, offset; std::string path; };
  std::vector<File> files;
  std::vector<CoreSegment> segments;
  std::vector<std::uint64_t> auxv;
};

inline void add_note(std::vector<std::uint8_t>& notes, const char* name, std::uint32_t type,
                     const std::vector<std::uint8_t>& desc) {
  Elf64_Nhdr nh{static_cast<Elf64_Word>(std::strlen(name) + 1), static_cast<Elf64_Word>(desc.size()), type};
  put(notes, &nh, sizeof nh);
  put(notes, name, nh.n_namesz);
  align(notes, 4);
  put(notes, desc.data(), desc.size());
  align(notes, 4);
}

inline std::vector<std::uint8_t> build_core(const CoreSpec& spec) {
  std::vector<std::uint8_t> notes;
  std::vector<std::uint8_t> psinfo(136, 0);
  std::memcpy(&psinfo[24], &spec.pid, 4);
  std::memcpy(&psinfo[28], &spec.ppid, 4);
  std::memcpy(&psinfo[40], spec.fname.data(), std::min<std::size_t>(spec.fname.size(), 15));
  add_note(notes, "CORE", NT_PRPSINFO, psinfo);
  for (auto [tid, rip] : spec.threads) {
    std::vector<std::uint8_t> st(336, 0);
    std::memcpy(&st[32], &tid, 4);
    std::memcpy(&st[112 + 16 * 8], &rip, 8);
    add_note(notes, "CORE", NT_PRSTATUS, st);
  }
  if (!spec.files.empty()) {
    std::vector<std::uint8_t> d;
    std::uint64_t count = spec.files.size(), page = 4096;
    put(d, &count, 8);
    put(d, &page, 8);
    for (auto& fm : spec.files) {
      std::uint64_t pg = fm.offset / 4096;
      put(d, &fm.start, 8);
      put(d, &fm.end, 8);
      put(d, &pg, 8);
    }
    for (auto& fm : spec.files) put(d, fm.path.c_str(), fm.path.size() + 1);
    add_note(notes, "CORE", 0x46494c45, d);
  }
  if (!spec.auxv.empty()) {
    std::vector<std::uint8_t> d;
    put(d, spec.auxv.data(), spec.auxv.size() * 8);
    add_note(notes, "CORE", NT_AUXV, d);
  }
  std::size_t nph = 1 + spec.segments.size();
  std::vector<std::uint8_t> f(sizeof(Elf64_Ehdr) + nph * sizeof(Elf64_Phdr), 0);
  std::uint64_t notes_off = f.size();
  put(f, notes.data(), notes.size());
  std::vector<std::uint64_t> seg_off;
  for (auto& s : spec.segments) {
    align(f, 4096);
    seg_off.push_back(f.size());
    put(f, s.bytes.data(), s.bytes.size());
  }
  write_elf_header(f, ET_CORE, static_cast<std::uint16_t>(nph));
  Elf64_Phdr note{};
  note.p_type = PT_NOTE;
  note.p_offset = notes_off;
  note.p_filesz = notes.size();
  std::memcpy(f.data() + sizeof(Elf64_Ehdr), &note, sizeof note);
  for (std::size_t i = 0; i < spec.segments.size(); ++i) {
    Elf64_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_offset = seg_off[i];
    ph.p_vaddr = spec.segments[i].vaddr;
    ph.p_filesz = spec.segments[i].bytes.size();
    ph.p_memsz = spec.segments[i].memsz;
    std::memcpy(f.data() + sizeof(Elf64_Ehdr) + (i + 1) * sizeof ph, &ph, sizeof ph);
  }
  return f;
}

}  // namespace pyhang::testing
