// ELF files as the target maps them: sections, program headers, notes and
// symbols from .dynsym and .symtab.  The file is mapped, never read whole,
// and every offset taken from it is bounds-checked.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pyhang/target/memory.hpp"

namespace pyhang {

struct ElfSymbol {
  std::string_view name;
  Addr value = 0;          // link-time address
  std::uint64_t size = 0;
  std::uint8_t type = 0;   // STT_*
  bool from_dynsym = false;
};

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;
  Addr addr = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct ElfSegment {
  std::uint32_t type = 0;
  std::uint32_t flags = 0;
  std::uint64_t offset = 0;
  Addr vaddr = 0;
  std::uint64_t filesz = 0;
  std::uint64_t memsz = 0;
};

struct ElfNote {
  std::string_view name;
  std::uint32_t type = 0;
  std::span<const std::uint8_t> desc;
};

// Bytes of a file: mapped (open) or owned (from_bytes, for tests).
class FileImage {
 public:
  static std::shared_ptr<FileImage> map(const std::string& path);  // throws Error
  static std::shared_ptr<FileImage> from_bytes(std::vector<std::uint8_t> bytes, std::string name);
  ~FileImage();
  FileImage(const FileImage&) = delete;
  FileImage& operator=(const FileImage&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  // The bytes [offset, offset+n) clipped to the file; empty when outside.
  std::span<const std::uint8_t> bytes(std::uint64_t offset, std::uint64_t n) const;
  std::size_t copy(std::uint64_t offset, void* buf, std::size_t n) const;

 private:
  FileImage() = default;
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
  bool mapped_ = false;
  std::vector<std::uint8_t> owned_;
};

class ElfFile {
 public:
  // Throws Error when the file is missing or not a 64-bit little-endian ELF.
  static std::shared_ptr<ElfFile> open(const std::string& path);
  static std::shared_ptr<ElfFile> from_image(std::shared_ptr<FileImage> image);

  const std::string& path() const { return image_->path(); }
  const FileImage& image() const { return *image_; }
  std::uint16_t type() const { return type_; }  // ET_EXEC, ET_DYN, ET_CORE
  std::uint16_t machine() const { return machine_; }

  std::span<const ElfSegment> segments() const { return segments_; }
  std::span<const ElfSection> sections() const { return sections_; }
  const ElfSection* section(std::string_view name) const;
  std::vector<ElfNote> notes() const;  // from PT_NOTE segments, else SHT_NOTE sections

  // Symbol by name: .dynsym first, then .symtab.
  std::optional<ElfSymbol> symbol(std::string_view name) const;
  // The function or object symbol whose [value, value+size) holds addr
  // (link-time address); nullopt when none does.
  std::optional<ElfSymbol> symbol_at(Addr link_addr) const;
  std::size_t symbol_count() const { return by_addr_.size(); }

  std::string_view soname() const { return soname_; }
  std::string build_id() const;  // hex, empty when absent
  bool has_debug_info() const { return section(".debug_info") != nullptr; }

  // Lowest PT_LOAD virtual address, page-aligned: what the loader maps at
  // the load base.
  Addr load_base_vaddr() const;
  // Reads initialised bytes at a link-time virtual address from the file.
  std::size_t read_vaddr(Addr link_addr, void* buf, std::size_t n) const;

 private:
  explicit ElfFile(std::shared_ptr<FileImage> image);
  void parse();
  void load_symbols(const ElfSection& symtab, bool dynamic);

  std::shared_ptr<FileImage> image_;
  std::uint16_t type_ = 0;
  std::uint16_t machine_ = 0;
  std::vector<ElfSegment> segments_;
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;           // all, dynsym first
  std::vector<std::uint32_t> by_addr_;       // indexes of sized symbols, sorted by address
  std::vector<std::uint32_t> by_name_;       // indexes sorted by name
  std::string_view soname_;
};

}  // namespace pyhang
