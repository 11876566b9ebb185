#include "pyhang/target/elf.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace pyhang {

// ----------------------------------------------------------- FileImage ----

std::shared_ptr<FileImage> FileImage::map(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorReason::CannotOpen, path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorReason::NotRegularFile, path);
  }
  std::shared_ptr<FileImage> img(new FileImage());
  img->path_ = path;
  img->size_ = static_cast<std::uint64_t>(st.st_size);
  if (img->size_ > 0) {
    void* p = ::mmap(nullptr, img->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;  // before close() can change it
      ::close(fd);
      throw Error(ErrorReason::CannotMap, path, err);
    }
    img->data_ = static_cast<const std::uint8_t*>(p);
    img->mapped_ = true;
  }
  ::close(fd);
  return img;
}

std::shared_ptr<FileImage> FileImage::from_bytes(std::vector<std::uint8_t> bytes, std::string name) {
  std::shared_ptr<FileImage> img(new FileImage());
  img->path_ = std::move(name);
  img->owned_ = std::move(bytes);
  img->data_ = img->owned_.data();
  img->size_ = img->owned_.size();
  return img;
}

FileImage::~FileImage() {
  if (mapped_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

std::span<const std::uint8_t> FileImage::bytes(std::uint64_t offset, std::uint64_t n) const {
  if (offset >= size_) return {};
  return {data_ + offset, static_cast<std::size_t>(std::min(n, size_ - offset))};
}

std::size_t FileImage::copy(std::uint64_t offset, void* buf, std::size_t n) const {
  auto b = bytes(offset, n);
  if (!b.empty()) std::memcpy(buf, b.data(), b.size());
  return b.size();
}

// ------------------------------------------------------------- ElfFile ----

namespace {

template <class T>
bool read_struct(const FileImage& img, std::uint64_t offset, T& out) {
  return img.copy(offset, &out, sizeof(T)) == sizeof(T);
}

std::string_view string_at(const FileImage& img, std::uint64_t table_off, std::uint64_t table_size,
                           std::uint64_t index) {
  if (index >= table_size) return {};
  auto b = img.bytes(table_off + index, table_size - index);
  auto nul = std::find(b.begin(), b.end(), 0);
  if (nul == b.end()) return {};
  return {reinterpret_cast<const char*>(b.data()), static_cast<std::size_t>(nul - b.begin())};
}

constexpr std::size_t kMaxSections = 65535;
constexpr std::size_t kMaxSegments = 65535;

}  // namespace

std::shared_ptr<ElfFile> ElfFile::open(const std::string& path) { return from_image(FileImage::map(path)); }

std::shared_ptr<ElfFile> ElfFile::from_image(std::shared_ptr<FileImage> image) {
  std::shared_ptr<ElfFile> elf(new ElfFile(std::move(image)));
  elf->parse();
  return elf;
}

ElfFile::ElfFile(std::shared_ptr<FileImage> image) : image_(std::move(image)) {}

void ElfFile::parse() {
  Elf64_Ehdr eh{};
  if (!read_struct(*image_, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    throw Error(ErrorReason::NotElf, path());
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    throw Error(ErrorReason::UnsupportedElf, path());
  type_ = eh.e_type;
  machine_ = eh.e_machine;

  if (eh.e_phentsize == sizeof(Elf64_Phdr)) {
    for (std::size_t i = 0; i < std::min<std::size_t>(eh.e_phnum, kMaxSegments); ++i) {
      Elf64_Phdr ph{};
      if (!read_struct(*image_, eh.e_phoff + i * sizeof(ph), ph)) break;
      segments_.push_back({ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz});
    }
  }

  if (eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0) {
    std::vector<Elf64_Shdr> shdrs;
    for (std::size_t i = 0; i < std::min<std::size_t>(eh.e_shnum, kMaxSections); ++i) {
      Elf64_Shdr sh{};
      if (!read_struct(*image_, eh.e_shoff + i * sizeof(sh), sh)) break;
      shdrs.push_back(sh);
    }
    const Elf64_Shdr* strtab = eh.e_shstrndx < shdrs.size() ? &shdrs[eh.e_shstrndx] : nullptr;
    for (auto& sh : shdrs) {
      ElfSection s;
      if (strtab) s.name = std::string(string_at(*image_, strtab->sh_offset, strtab->sh_size, sh.sh_name));
      s.type = sh.sh_type;
      s.addr = sh.sh_addr;
      s.offset = sh.sh_offset;
      s.size = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
      sections_.push_back(std::move(s));
    }
    // Symbols: .dynsym first (what a stripped object keeps), then .symtab.
    for (auto& s : sections_)
      if (s.type == SHT_DYNSYM) load_symbols(s, true);
    for (auto& s : sections_)
      if (s.type == SHT_SYMTAB) load_symbols(s, false);
    // SONAME from .dynamic.
    for (auto& s : sections_) {
      if (s.type != SHT_DYNAMIC) continue;
      const ElfSection* dynstr = section(".dynstr");
      if (!dynstr) break;
      for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.size; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d{};
        if (!read_struct(*image_, s.offset + off, d) || d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_SONAME) soname_ = string_at(*image_, dynstr->offset, dynstr->size, d.d_un.d_val);
      }
    }
  }

  std::vector<std::uint32_t> idx(symbols_.size());
  for (std::uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  by_name_ = idx;
  std::stable_sort(by_name_.begin(), by_name_.end(),
                   [&](auto a, auto b) { return symbols_[a].name < symbols_[b].name; });
  for (auto i : idx)
    if (symbols_[i].size > 0 && (symbols_[i].type == STT_FUNC || symbols_[i].type == STT_OBJECT ||
                                 symbols_[i].type == STT_GNU_IFUNC))
      by_addr_.push_back(i);
  std::stable_sort(by_addr_.begin(), by_addr_.end(),
                   [&](auto a, auto b) { return symbols_[a].value < symbols_[b].value; });
}

void ElfFile::load_symbols(const ElfSection& symtab, bool dynamic) {
  if (symtab.size == 0) return;
  // The string table is the section the symbol table links to; find it by
  // its conventional name, which every linker uses.
  const ElfSection* strtab = section(dynamic ? ".dynstr" : ".strtab");
  if (!strtab) return;
  std::size_t count = symtab.size / sizeof(Elf64_Sym);
  for (std::size_t i = 1; i < count; ++i) {
    Elf64_Sym sym{};
    if (!read_struct(*image_, symtab.offset + i * sizeof(sym), sym)) break;
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    auto type = ELF64_ST_TYPE(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE) continue;
    auto name = string_at(*image_, strtab->offset, strtab->size, sym.st_name);
    if (name.empty()) continue;
    symbols_.push_back({name, sym.st_value, sym.st_size, static_cast<std::uint8_t>(type), dynamic});
  }
}

const ElfSection* ElfFile::section(std::string_view name) const {
  for (auto& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<ElfNote> ElfFile::notes() const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> areas;
  for (auto& seg : segments_)
    if (seg.type == PT_NOTE) areas.push_back({seg.offset, seg.filesz});
  if (areas.empty())
    for (auto& s : sections_)
      if (s.type == SHT_NOTE) areas.push_back({s.offset, s.size});
  std::vector<ElfNote> out;
  for (auto [off, size] : areas) {
    auto area = image_->bytes(off, size);
    std::size_t pos = 0;
    while (pos + sizeof(Elf64_Nhdr) <= area.size()) {
      Elf64_Nhdr nh;
      std::memcpy(&nh, area.data() + pos, sizeof(nh));
      pos += sizeof(nh);
      std::size_t name_len = (nh.n_namesz + 3) & ~std::size_t{3};
      std::size_t desc_len = (nh.n_descsz + 3) & ~std::size_t{3};
      if (pos + name_len > area.size() || nh.n_descsz > area.size() - pos - name_len) break;
      ElfNote note;
      std::size_t n = nh.n_namesz > 0 ? nh.n_namesz - 1 : 0;  // without the NUL
      note.name = std::string_view(reinterpret_cast<const char*>(area.data() + pos), n);
      note.type = nh.n_type;
      note.desc = area.subspan(pos + name_len, nh.n_descsz);
      out.push_back(note);
      pos += name_len + desc_len;
    }
  }
  return out;
}

std::optional<ElfSymbol> ElfFile::symbol(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](std::uint32_t i, std::string_view n) { return symbols_[i].name < n; });
  // Equal names: the .dynsym one was inserted first and the sort is stable.
  if (it != by_name_.end() && symbols_[*it].name == name) return symbols_[*it];
  return std::nullopt;
}

std::optional<ElfSymbol> ElfFile::symbol_at(Addr link_addr) const {
  auto it = std::upper_bound(by_addr_.begin(), by_addr_.end(), link_addr,
                             [&](Addr a, std::uint32_t i) { return a < symbols_[i].value; });
  // Walk back over symbols that start at or before addr; a few may nest
  // (aliases), so look at a handful.
  for (int n = 0; it != by_addr_.begin() && n < 8; ++n) {
    --it;
    const auto& s = symbols_[*it];
    if (link_addr < s.value + s.size) return s;
  }
  return std::nullopt;
}

std::string ElfFile::build_id() const {
  for (auto& n : notes()) {
    if (n.type == NT_GNU_BUILD_ID && n.name == "GNU") {
      static const char* hex = "0123456789abcdef";
      std::string out;
      for (auto b : n.desc) {
        out += hex[b >> 4];
        out += hex[b & 15];
      }
      return out;
    }
  }
  return {};
}

Addr ElfFile::load_base_vaddr() const {
  Addr lowest = ~Addr{0};
  for (auto& s : segments_)
    if (s.type == PT_LOAD) lowest = std::min(lowest, s.vaddr);
  return lowest == ~Addr{0} ? 0 : lowest & ~Addr{0xfff};
}

std::size_t ElfFile::read_vaddr(Addr link_addr, void* buf, std::size_t n) const {
  for (auto& s : segments_) {
    if (s.type != PT_LOAD || link_addr < s.vaddr || link_addr >= s.vaddr + s.filesz) continue;
    std::size_t take = std::min<std::uint64_t>(n, s.vaddr + s.filesz - link_addr);
    return image_->copy(s.offset + (link_addr - s.vaddr), buf, take);
  }
  return 0;
}

}  // namespace pyhang
