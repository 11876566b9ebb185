// CFI records: pointer encodings, CIE and FDE entries and the per-object FDE
// lookup (CfiTable).  Their CFA programs and expressions are run by
// cfi_program.cpp.
#include "pyhang/unwind/cfi.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace pyhang::unwind {

namespace {

// Bounds that no real CFI comes near and that keep garbage cheap.
constexpr std::size_t kMaxIndexEntries = std::size_t{1} << 21;
constexpr std::size_t kMaxCies = 4096;

}  // namespace

Failure register_value(const Regs& regs, std::uint64_t reg, std::uint64_t& out) {
  if (reg >= static_cast<std::uint64_t>(kRegCount)) return Stop::Unsupported;
  if (!regs.r[reg]) return Stop::RegisterUnknown;
  out = *regs.r[reg];
  return std::nullopt;
}

// ----------------------------------------------------------- Cursor ----

// LEB128 of at most 10 bytes (64 bits); bits beyond 64 are dropped.
std::uint64_t Cursor::uleb() {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 70 && !at_end(); shift += 7) {
    const std::uint8_t b = bytes_.data[pos_++];
    if (shift < 64) value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return value;
  }
  failed_ = true;
  pos_ = bytes_.data.size();
  return 0;
}

std::int64_t Cursor::sleb() {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 70 && !at_end(); shift += 7) {
    const std::uint8_t b = bytes_.data[pos_++];
    if (shift < 64) value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      if (shift + 7 < 64 && (b & 0x40)) value |= ~std::uint64_t{0} << (shift + 7);
      return static_cast<std::int64_t>(value);
    }
  }
  failed_ = true;
  pos_ = bytes_.data.size();
  return 0;
}

Bytes Cursor::take(std::size_t n) {
  if (n > remaining()) {
    failed_ = true;
    pos_ = bytes_.data.size();
    return {{}, address()};
  }
  Bytes out{bytes_.data.subspan(pos_, n), address()};
  pos_ += n;
  return out;
}

void Cursor::seek(std::size_t pos) {
  if (pos > bytes_.data.size()) {
    failed_ = true;
    pos = bytes_.data.size();
  }
  pos_ = pos;
}

// ------------------------------------------------- pointer encodings ----

std::size_t encoded_size(std::uint8_t encoding) {
  switch (encoding & 0x0f) {
    case pe::kAbsptr:
    case pe::kSigned:
    case pe::kUdata8:
    case pe::kSdata8: return 8;
    case pe::kUdata4:
    case pe::kSdata4: return 4;
    case pe::kUdata2:
    case pe::kSdata2: return 2;
    default: return 0;
  }
}

std::optional<std::uint64_t> read_encoded(Cursor& c, std::uint8_t encoding, const PointerBases& bases) {
  if (encoding == pe::kOmit || (encoding & pe::kIndirect)) return std::nullopt;
  const std::uint8_t base = encoding & 0x70;
  if (base == pe::kAligned) {  // an absolute pointer at the next 8-byte boundary
    c.skip(((c.address() + 7) & ~Addr{7}) - c.address());
    const std::uint64_t v = c.u64();
    return c.failed() ? std::nullopt : std::optional<std::uint64_t>(v);
  }
  const Addr field = c.address();
  std::uint64_t v = 0;
  switch (encoding & 0x0f) {
    case pe::kAbsptr:
    case pe::kSigned:
    case pe::kUdata8:
    case pe::kSdata8: v = c.u64(); break;
    case pe::kUleb128: v = c.uleb(); break;
    case pe::kSleb128: v = static_cast<std::uint64_t>(c.sleb()); break;
    case pe::kUdata2: v = c.u16(); break;
    case pe::kUdata4: v = c.u32(); break;
    case pe::kSdata2: v = static_cast<std::uint64_t>(static_cast<std::int16_t>(c.u16())); break;
    case pe::kSdata4: v = static_cast<std::uint64_t>(static_cast<std::int32_t>(c.u32())); break;
    default: return std::nullopt;
  }
  if (c.failed()) return std::nullopt;
  auto relative_to = [v](std::optional<Addr> b) { return b ? std::optional<std::uint64_t>(v + *b) : std::nullopt; };
  switch (base) {
    case 0: return v;
    case pe::kPcrel: return v + field;
    case pe::kTextrel: return relative_to(bases.text);
    case pe::kDatarel: return relative_to(bases.data);
    case pe::kFuncrel: return relative_to(bases.func);
    default: return std::nullopt;
  }
}

// --------------------------------------------------- CIEs and FDEs ----

Failure read_entry(const Bytes& section, Addr at, Entry& out) {
  out = Entry{};
  out.addr = at;
  if (at < section.addr || at - section.addr >= section.data.size()) return Stop::Unreadable;
  Cursor c({section.data.subspan(at - section.addr), at});
  const std::uint32_t length = c.u32();
  if (c.failed()) return Stop::Unreadable;
  if (length == 0) {
    out.terminator = true;
    out.next = at + 4;
    return std::nullopt;
  }
  // 64-bit DWARF lengths are legal but no x86_64 toolchain puts them in
  // .eh_frame (libgcc cannot read them either).
  if (length == 0xffffffff) return Stop::Unsupported;
  if (length < 4) return Stop::Unsupported;
  if (length > c.remaining()) return Stop::Unreadable;
  const Addr id_field = c.address();
  const std::uint32_t id = c.u32();
  out.is_cie = id == 0;
  out.cie_addr = id_field - id;  // an FDE's CIE pointer counts back from its own field
  out.body = c.take(length - 4);
  out.next = at + 4 + length;
  return std::nullopt;
}

Failure parse_cie(const Entry& entry, Cie& out) {
  out = Cie{};
  if (!entry.is_cie || entry.terminator) return Stop::Unsupported;
  Cursor c(entry.body);
  const std::uint8_t version = c.u8();
  if (c.failed()) return Stop::Unreadable;
  if (version != 1 && version != 3 && version != 4) return Stop::Unsupported;
  auto rest = entry.body.data.subspan(c.pos());
  auto nul = std::find(rest.begin(), rest.end(), 0);
  if (nul == rest.end()) return Stop::Unreadable;
  const std::string_view augmentation(reinterpret_cast<const char*>(rest.data()),
                                      static_cast<std::size_t>(nul - rest.begin()));
  c.skip(augmentation.size() + 1);
  // gcc 2's "eh" adds a pointer of unknown meaning; nothing made since uses it.
  if (augmentation.find("eh") != std::string_view::npos) return Stop::Unsupported;
  if (version == 4 && (c.u8() != 8 || c.u8() != 0)) return Stop::Unsupported;  // address and segment sizes
  out.code_align = c.uleb();
  out.data_align = c.sleb();
  out.ra_column = version == 1 ? c.u8() : c.uleb();
  if (c.failed()) return Stop::Unreadable;
  if (!augmentation.empty() && augmentation[0] != 'z') return Stop::Unsupported;  // its data cannot be skipped
  if (!augmentation.empty()) {
    const Bytes data = c.take(c.uleb());
    if (c.failed()) return Stop::Unreadable;
    Cursor a(data);
    for (char letter : augmentation.substr(1)) {
      if (letter == 'R') {
        out.fde_encoding = a.u8();
      } else if (letter == 'L') {
        a.u8();  // the LSDA's encoding: only exception handling needs the LSDA
      } else if (letter == 'P') {
        // The personality routine: skipped whatever its encoding; the
        // indirect bit changes what it points to, not its size.
        const std::uint8_t enc = a.u8();
        if (enc != pe::kOmit && !read_encoded(a, enc & ~pe::kIndirect, PointerBases{0, 0, 0}) && !a.failed())
          return Stop::Unsupported;
      } else if (letter == 'S') {
        out.signal_frame = true;
      } else {
        break;  // an unknown letter: the data's length lets the rest be skipped, as gdb does
      }
    }
    if (a.failed()) return Stop::Unreadable;
    out.augmentation_data = true;
  }
  out.instructions = {entry.body.data.subspan(c.pos()), c.address()};
  return std::nullopt;
}

Failure parse_fde(const Entry& entry, const Cie& cie, const PointerBases& bases, Fde& out) {
  out = Fde{};
  if (entry.is_cie || entry.terminator) return Stop::Unsupported;
  Cursor c(entry.body);
  const auto begin = read_encoded(c, cie.fde_encoding, bases);
  const auto range = read_encoded(c, cie.fde_encoding & 0x0f, {});  // a length: the format, no base
  if (c.failed()) return Stop::Unreadable;
  if (!begin || !range) return Stop::Unsupported;
  if (cie.augmentation_data) c.skip(c.uleb());  // the LSDA pointer
  if (c.failed()) return Stop::Unreadable;
  if (*begin + *range < *begin) return Stop::Unsupported;  // wraps around: garbage
  out.pc_begin = *begin;
  out.pc_end = *begin + *range;
  out.instructions = {entry.body.data.subspan(c.pos()), c.address()};
  return std::nullopt;
}

// ------------------------------------------------------------ CfiTable ----

CfiTable::CfiTable(std::shared_ptr<const ElfFile> elf) : elf_(std::move(elf)) {
  // The bases gdb gives relative pointers in .eh_frame.
  if (const ElfSection* text = elf_->section(".text")) bases_.text = text->addr;
  if (const ElfSection* got = elf_->section(".got")) bases_.data = got->addr;
  if (const ElfSection* s = elf_->section(".eh_frame"); s && s->type != SHT_NOBITS) {
    eh_frame_ = bytes_at(s->addr);
    if (eh_frame_.data.size() > s->size) eh_frame_.data = eh_frame_.data.first(s->size);
  }
  for (const ElfSegment& seg : elf_->segments())
    if (seg.type == PT_GNU_EH_FRAME) {
      read_hdr({elf_->image().bytes(seg.offset, seg.filesz), seg.vaddr});
      break;
    }
}

// .eh_frame_hdr: version 1, three encodings, the .eh_frame pointer, the FDE
// count, then (initial location, FDE address) pairs sorted by location.
void CfiTable::read_hdr(const Bytes& hdr) {
  Cursor c(hdr);
  const std::uint8_t version = c.u8(), frame_enc = c.u8(), count_enc = c.u8(), table_enc = c.u8();
  if (c.failed() || version != 1) return;
  const PointerBases hdr_bases{bases_.text, hdr.addr, std::nullopt};
  const auto eh_frame = read_encoded(c, frame_enc, hdr_bases);
  // Without section headers .eh_frame runs to the end of its segment.
  if (eh_frame && eh_frame_.data.empty()) eh_frame_ = bytes_at(*eh_frame);
  const auto count = read_encoded(c, count_enc, hdr_bases);
  const std::size_t size = encoded_size(table_enc);
  // A binary search needs entries of one size; LEB128 or odd tables fall
  // back to the index of .eh_frame.
  if (!count || size == 0 || table_enc == pe::kOmit || (table_enc & pe::kIndirect) ||
      (table_enc & 0x70) == pe::kAligned)
    return;
  hdr_addr_ = hdr.addr;
  table_encoding_ = table_enc;
  table_ = {hdr.data.subspan(c.pos()), c.address()};
  // A count beyond the segment is cut to the entries that are there.
  table_count_ = static_cast<std::size_t>(std::min<std::uint64_t>(*count, table_.data.size() / (2 * size)));
}

Bytes CfiTable::bytes_at(Addr vaddr) const {
  for (const ElfSegment& s : elf_->segments()) {
    if (s.type != PT_LOAD || vaddr < s.vaddr || vaddr - s.vaddr >= s.filesz) continue;
    const std::uint64_t skip = vaddr - s.vaddr;
    return {elf_->image().bytes(s.offset + skip, s.filesz - skip), vaddr};
  }
  return {{}, vaddr};
}

Failure CfiTable::search_table(Addr link_pc, Addr& fde_addr) const {
  const std::size_t size = encoded_size(table_encoding_);
  const PointerBases bases{bases_.text, hdr_addr_, std::nullopt};
  auto field = [&](std::size_t entry, std::size_t which) {
    const std::size_t at = (2 * entry + which) * size;
    Cursor c({table_.data.subspan(at, size), table_.addr + at});
    return read_encoded(c, table_encoding_, bases);
  };
  // The last entry whose initial location is at or below link_pc.
  std::size_t lo = 0, hi = table_count_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const auto loc = field(mid, 0);
    if (!loc) return Stop::Unsupported;
    if (*loc <= link_pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return Stop::NoCfi;
  const auto fde = field(lo - 1, 1);
  if (!fde) return Stop::Unsupported;
  fde_addr = *fde;
  return std::nullopt;
}

void CfiTable::build_index() {
  index_built_ = true;
  const Addr end = eh_frame_.addr + eh_frame_.data.size();
  for (Addr at = eh_frame_.addr; at < end && index_.size() < kMaxIndexEntries;) {
    Entry e;
    if (read_entry(eh_frame_, at, e) || e.terminator) break;
    at = e.next;
    if (e.is_cie) continue;
    const Cie* cie = nullptr;
    Fde fde;
    if (cie_at(e.cie_addr, cie) || parse_fde(e, *cie, bases_, fde)) continue;
    // Zero-based FDEs are functions the linker dropped (--gc-sections);
    // gdb drops them too.
    if (fde.pc_begin == 0 || fde.pc_end <= fde.pc_begin) continue;
    index_.push_back({fde.pc_begin, fde.pc_end, e.addr});
  }
  std::sort(index_.begin(), index_.end(), [](const IndexEntry& a, const IndexEntry& b) { return a.begin < b.begin; });
}

Failure CfiTable::search_index(Addr link_pc, Addr& fde_addr) {
  if (!index_built_) build_index();
  auto it = std::upper_bound(index_.begin(), index_.end(), link_pc,
                             [](Addr pc, const IndexEntry& e) { return pc < e.begin; });
  if (it == index_.begin() || link_pc >= std::prev(it)->end) return Stop::NoCfi;
  fde_addr = std::prev(it)->fde;
  return std::nullopt;
}

Failure CfiTable::cie_at(Addr addr, const Cie*& out) {
  if (auto it = cies_.find(addr); it != cies_.end()) {
    out = &it->second;
    return std::nullopt;
  }
  Entry e;
  Cie cie;
  if (Failure f = read_entry(bytes_at(addr), addr, e)) return f;
  if (Failure f = parse_cie(e, cie)) return f;
  if (cies_.size() == kMaxCies) cies_.clear();  // garbage pointing everywhere; real objects have a few
  out = &cies_.emplace(addr, cie).first->second;
  return std::nullopt;
}

Failure CfiTable::find(Addr link_pc, Fde& fde, const Cie*& cie) {
  Addr fde_addr = 0;
  Failure f = table_count_ > 0 ? search_table(link_pc, fde_addr) : search_index(link_pc, fde_addr);
  if (f) return f;
  Entry e;
  if ((f = read_entry(bytes_at(fde_addr), fde_addr, e))) return f;
  if (e.terminator || e.is_cie) return Stop::Unsupported;
  if ((f = cie_at(e.cie_addr, cie))) return f;
  if ((f = parse_fde(e, *cie, bases_, fde))) return f;
  // The table says where to look; the FDE's own range decides.
  if (link_pc < fde.pc_begin || link_pc >= fde.pc_end) return Stop::NoCfi;
  return std::nullopt;
}

}  // namespace pyhang::unwind
