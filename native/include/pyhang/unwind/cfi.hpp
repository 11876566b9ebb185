// DWARF call frame information (.eh_frame) for x86_64: pointer encodings,
// CIE and FDE entries, CFA programs (one row of the table), CFI expressions
// and the per-object FDE lookup.  The unwinder (pyhang/unwind/unwinder.hpp) walks a
// stack with it.
//
// Layers, each usable alone (the tests feed them synthetic bytes):
//   pointer encodings (DW_EH_PE_*) -> CIE/FDE entries -> CFA programs and
//   CFI expressions -> per-object FDE lookup (CfiTable).
//
// Garbage CFI never throws, crashes or loops: every failure is a Stop
// reason.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyhang/arch/x86_64/registers.hpp"
#include "pyhang/base/names.hpp"
#include "pyhang/target/elf.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::unwind {

// DWARF register numbers of x86_64 (pyhang/arch/x86_64/registers.hpp).
inline constexpr int kRbp = x86_64::kDwarfRbp;
inline constexpr int kRsp = x86_64::kDwarfRsp;
inline constexpr int kRip = x86_64::kDwarfRip;
inline constexpr int kRegCount = x86_64::kDwarfRegCount;
using x86_64::dwarf_register;

// One frame's registers by DWARF number; unknown ones are empty.
struct Regs {
  std::array<std::optional<std::uint64_t>, kRegCount> r;
};

enum class Stop : std::uint8_t {
  End,          // the outermost frame: undefined return address, pc 0, main
  Depth,        // max_frames pcs gathered
  NoCfi,        // a pc in no mapped object, or no FDE covers it
  Unreadable,   // stack memory, a register or CFI bytes could not be read
  Unsupported,  // CFI this unwinder does not handle (opcode, expression, encoding)
  BadFrame,     // a stack that makes no sense: CFA not increasing, a cycle, pc in the first page
  // A rule needs a register whose value is not known: frame 0's registers
  // came without it (a thread read from /proc/PID/task/TID/syscall has no
  // rbp, rbx, r12-r15), or no frame below saved it.  Code built with frame
  // pointers (CFA = rbp + N) stops here rather than guess.
  RegisterUnknown,
};
inline constexpr std::array<Named<Stop>, 7> kStopNames{{
    {Stop::End, "end"},
    {Stop::Depth, "depth"},
    {Stop::NoCfi, "no-cfi"},
    {Stop::Unreadable, "unreadable"},
    {Stop::Unsupported, "unsupported"},
    {Stop::BadFrame, "bad-frame"},
    {Stop::RegisterUnknown, "register-unknown"},
}};
constexpr std::string_view to_string(Stop stop) { return name_in(kStopNames, stop); }
constexpr std::string_view stop_name(Stop stop) { return to_string(stop); }

// Why a step failed; empty when it did not.
using Failure = std::optional<Stop>;

// The value of DWARF register `reg` in `regs`: Unsupported beyond rip,
// RegisterUnknown when unknown.
Failure register_value(const Regs& regs, std::uint64_t reg, std::uint64_t& out);

// Address arithmetic on garbage must wrap, never be undefined behaviour.
inline Addr offset_by(Addr a, std::int64_t offset) { return a + static_cast<std::uint64_t>(offset); }

// ------------------------------------------------------------ bytes ----

// CFI bytes with the link-time address of the first one (pc-relative
// pointers and DW_CFA_set_loc need it).
struct Bytes {
  std::span<const std::uint8_t> data;
  Addr addr = 0;
};

// A bounded reader: reading past the end sets failed() and yields zeros.
class Cursor {
 public:
  explicit Cursor(Bytes bytes) : bytes_(bytes) {}
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ >= bytes_.data.size(); }
  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return bytes_.data.size() - pos_; }
  Addr address() const { return bytes_.addr + pos_; }  // of the next byte

  std::uint8_t u8() { return fixed<std::uint8_t>(); }
  std::uint16_t u16() { return fixed<std::uint16_t>(); }
  std::uint32_t u32() { return fixed<std::uint32_t>(); }
  std::uint64_t u64() { return fixed<std::uint64_t>(); }
  std::uint64_t uleb();
  std::int64_t sleb();
  Bytes take(std::size_t n);  // the next n bytes; empty (and failed) when fewer remain
  void skip(std::size_t n) { take(n); }
  void seek(std::size_t pos);  // fails beyond the end

 private:
  template <class T>
  T fixed() {
    if (remaining() < sizeof(T)) {
      failed_ = true;
      pos_ = bytes_.data.size();
      return 0;
    }
    T value;
    std::memcpy(&value, bytes_.data.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  Bytes bytes_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

// ------------------------------------------------- pointer encodings ----

// DW_EH_PE_*: the low nibble is the format, bits 4-6 the base, 0x80 indirect.
namespace pe {
inline constexpr std::uint8_t kAbsptr = 0x00, kUleb128 = 0x01, kUdata2 = 0x02, kUdata4 = 0x03, kUdata8 = 0x04,
                              kSigned = 0x08, kSleb128 = 0x09, kSdata2 = 0x0a, kSdata4 = 0x0b, kSdata8 = 0x0c;
inline constexpr std::uint8_t kPcrel = 0x10, kTextrel = 0x20, kDatarel = 0x30, kFuncrel = 0x40, kAligned = 0x50;
inline constexpr std::uint8_t kIndirect = 0x80, kOmit = 0xff;
}  // namespace pe

// Bases of the relative encodings; pc-relative needs none (it is the
// address of the value itself).
struct PointerBases {
  std::optional<Addr> text;  // textrel
  std::optional<Addr> data;  // datarel: .eh_frame_hdr in the header, .got in .eh_frame (as gdb)
  std::optional<Addr> func;  // funcrel
};

// One encoded pointer.  nullopt when bytes are missing (the cursor then
// failed), for `omit`, for `indirect` (a pointer to the value: only
// personality routines use it), and for a base that is not known.
std::optional<std::uint64_t> read_encoded(Cursor& c, std::uint8_t encoding, const PointerBases& bases);
// Bytes of a fixed-size format (2, 4 or 8); 0 for LEB128 and unknown ones.
std::size_t encoded_size(std::uint8_t encoding);

// --------------------------------------------------- CIEs and FDEs ----

// One .eh_frame entry located.
struct Entry {
  Addr addr = 0;            // of its length field
  bool terminator = false;  // a zero length ends the section
  bool is_cie = false;
  Addr cie_addr = 0;  // an FDE's CIE
  Bytes body;         // after the CIE id / CIE pointer, to the entry's end
  Addr next = 0;      // the following entry
};
// The entry at `at`, which must lie within `section`.
Failure read_entry(const Bytes& section, Addr at, Entry& out);

struct Cie {
  std::uint64_t code_align = 1;
  std::int64_t data_align = 0;
  std::uint64_t ra_column = kRip;
  std::uint8_t fde_encoding = pe::kAbsptr;  // 'R'
  bool augmentation_data = false;           // 'z': FDEs carry length-prefixed augmentation data
  bool signal_frame = false;                // 'S'
  Bytes instructions;                       // initial instructions
};
// A CIE holds no pointer the unwinder needs: its personality routine is
// skipped, whatever its encoding.
Failure parse_cie(const Entry& entry, Cie& out);

struct Fde {
  Addr pc_begin = 0;  // link-time addresses, [pc_begin, pc_end)
  Addr pc_end = 0;
  Bytes instructions;
};
Failure parse_fde(const Entry& entry, const Cie& cie, const PointerBases& bases, Fde& out);

// ------------------------------------------------------ CFA programs ----

// How to find the caller's value of a register (DWARF 6.4.1).
enum class RuleKind : std::uint8_t {
  Unspecified,  // no rule: the same value, except rsp (the CFA) and rip (the return address)
  Undefined,    // not recoverable; for the return address: the outermost frame
  SameValue,
  Offset,         // saved at CFA + n
  ValOffset,      // is CFA + n
  Register,       // is in register n
  Expression,     // saved at the address the expression computes (the CFA pushed first)
  ValExpression,  // is the value the expression computes (the CFA pushed first)
};

struct Rule {
  RuleKind kind = RuleKind::Unspecified;
  std::int64_t n = 0;
  std::span<const std::uint8_t> expr;
};

// A CFA no instruction defined is an error for gdb too, never a guess.
enum class CfaKind : std::uint8_t { Unset, RegOffset, Expression };

struct CfaRule {
  CfaKind kind = CfaKind::Unset;
  std::uint64_t reg = 0;  // RegOffset: CFA = reg + offset
  std::int64_t offset = 0;
  std::span<const std::uint8_t> expr;  // Expression: CFA = its value
};

// One row of the CFI table.  Rules for columns above 16 (vector and x87
// registers) are read and dropped: nothing here needs them.
struct Row {
  CfaRule cfa;
  std::array<Rule, kRegCount> regs;
};

// Runs `program` from location `loc` (advanced as it runs) while loc <=
// target, as gdb does.  `initial` is the row after the CIE's instructions,
// for DW_CFA_restore.
Failure execute_cfa(const Bytes& program, const Cie& cie, const PointerBases& bases, Addr target, Addr& loc,
                    const Row& initial, Row& row);
// The row at link-time address `target` of an FDE: the CIE's initial
// instructions, then the FDE's.
Failure find_row(const Cie& cie, const Fde& fde, const PointerBases& bases, Addr target, Row& out);

// ---------------------------------------------------- CFI expressions ----

struct ExprContext {
  const Regs& regs;
  MemoryReader& memory;
  Addr bias = 0;  // DW_OP_addr holds a link-time address
};

// Evaluates a CFI expression (DW_CFA_def_cfa_expression, DW_CFA_expression,
// DW_CFA_val_expression): `push` (the CFA, for register rules) is pushed
// first; the result is the top of the stack.  Bounded: 64 stack entries,
// 1000 operations.
Failure evaluate(std::span<const std::uint8_t> expr, const ExprContext& ctx, std::optional<std::uint64_t> push,
                 std::uint64_t& result);

// ------------------------------------------------- per-object lookup ----

// The .eh_frame CFI of one ELF file, by link-time address: FDEs are found
// through .eh_frame_hdr's binary-search table, or, without a usable one,
// through a sorted index of .eh_frame built on first use; parsed CIEs are
// kept.  CFI bytes come from the file's mapping, never copied.
class CfiTable {
 public:
  explicit CfiTable(std::shared_ptr<const ElfFile> elf);
  // The FDE covering link_pc and its CIE (valid until the next call); NoCfi
  // when none does.
  Failure find(Addr link_pc, Fde& fde, const Cie*& cie);
  const PointerBases& bases() const { return bases_; }
  bool has_search_table() const { return table_count_ > 0; }

 private:
  struct IndexEntry {
    Addr begin, end, fde;
  };
  void read_hdr(const Bytes& hdr);
  Bytes bytes_at(Addr vaddr) const;  // file bytes from vaddr to the end of its PT_LOAD
  Failure search_table(Addr link_pc, Addr& fde_addr) const;
  Failure search_index(Addr link_pc, Addr& fde_addr);
  void build_index();
  Failure cie_at(Addr addr, const Cie*& out);

  std::shared_ptr<const ElfFile> elf_;
  PointerBases bases_;  // for .eh_frame entries
  Bytes eh_frame_;
  // .eh_frame_hdr's table: table_count_ entries of two encoded pointers.
  Addr hdr_addr_ = 0;
  Bytes table_;
  std::size_t table_count_ = 0;
  std::uint8_t table_encoding_ = pe::kOmit;
  std::vector<IndexEntry> index_;  // sorted by begin
  bool index_built_ = false;
  std::unordered_map<Addr, Cie> cies_;
};

}  // namespace pyhang::unwind
