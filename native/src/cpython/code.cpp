// Code objects and their line tables: lnotab (<= 3.9), the 3.10 line table,
// and the 3.11+ location table.
#include <algorithm>
#include <limits>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython {

namespace {

// Lines are summed from target bytes: the running sum is kept in 64 bits and
// held within ±2^40, and each delta too before it is added (a varint's
// groups reach 66 bits, so a delta can be any int64), so the sum never
// overflows; a line outside 0..INT_MAX is no line (-1).
constexpr std::int64_t kLineBound = std::int64_t{1} << 40;

std::int64_t add_line(std::int64_t line, std::int64_t delta) {
  return std::clamp(line + std::clamp(delta, -kLineBound, kLineBound), -kLineBound, kLineBound);
}

int as_line(std::int64_t line) {
  return line < 0 || line > std::numeric_limits<int>::max() ? -1 : static_cast<int>(line);
}

// co_lnotab: pairs (unsigned byte-offset increment, signed line increment).
// The line of addr is the line after the last pair whose running offset
// is <= addr.
int lnotab_line(const std::vector<std::uint8_t>& t, int firstlineno, std::int64_t addr) {
  std::int64_t line = firstlineno;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i + 1 < t.size(); i += 2) {
    offset += t[i];
    if (offset > addr) break;
    line = add_line(line, static_cast<std::int8_t>(t[i + 1]));
  }
  return as_line(line);
}

// 3.10 co_linetable: pairs (unsigned byte length of the range, signed line
// delta; -128 means the range has no line).  Each pair ends one range.
int linetable310_line(const std::vector<std::uint8_t>& t, int firstlineno, std::int64_t addr) {
  std::int64_t computed = firstlineno;
  std::int64_t end = 0;
  for (std::size_t i = 0; i + 1 < t.size(); i += 2) {
    std::int64_t start = end;
    end += t[i];
    auto delta = static_cast<std::int8_t>(t[i + 1]);
    int line = -1;
    if (delta != -128) {
      computed = add_line(computed, delta);
      line = as_line(computed);
    }
    if (start <= addr && addr < end) return line;
  }
  return -1;
}

// 3.11+ location table.  Each entry starts with a byte 1CCCCLLL: code C,
// length L+1 code units.  The line delta is: 15 none (no location),
// 14 long form and 13 no-column form: a signed varint, 10-12: C-10,
// 0-9 (short forms): 0.  Varints are 6-bit groups, low first, with 0x40
// meaning "more"; signed ones keep the sign in bit 0.
class LocationReader {
 public:
  explicit LocationReader(const std::vector<std::uint8_t>& t) : t_(t) {}
  bool done() const { return pos_ >= t_.size(); }
  std::uint8_t byte() { return pos_ < t_.size() ? t_[pos_++] : 0; }
  std::uint64_t varint() {
    std::uint8_t b = byte();
    std::uint64_t v = b & 63;
    unsigned shift = 0;
    while ((b & 64) && shift < 60 && !done()) {
      b = byte();
      shift += 6;
      v |= static_cast<std::uint64_t>(b & 63) << shift;
    }
    return v;
  }
  std::int64_t svarint() {
    std::uint64_t u = varint();
    return (u & 1) ? -static_cast<std::int64_t>(u >> 1) : static_cast<std::int64_t>(u >> 1);
  }
  // Skips to the next entry start (a byte with the top bit set).
  void skip_entry_tail() {
    while (pos_ < t_.size() && !(t_[pos_] & 0x80)) ++pos_;
  }

 private:
  const std::vector<std::uint8_t>& t_;
  std::size_t pos_ = 0;
};

// The columns of one entry (after its line delta): short forms 0-9 pack
// the start column's low 3 bits and the length in one byte, one-line forms
// 10-12 give both columns as bytes, the long form 14 an end-line delta and
// both columns plus one as varints (0: none).
void read_columns(LocationReader& r, int code, std::int64_t line, Position& out) {
  out.end_line = as_line(line);
  if (code <= 9) {
    std::uint8_t b = r.byte();
    out.col = code * 8 + ((b >> 4) & 7);
    out.end_col = out.col + (b & 15);
  } else if (code <= 12) {
    out.col = r.byte();
    out.end_col = r.byte();
  } else if (code == 14) {
    out.end_line = as_line(add_line(line, static_cast<std::int64_t>(std::min<std::uint64_t>(r.varint(), kLineBound))));
    std::uint64_t col = r.varint(), end_col = r.varint();
    out.col = col == 0 || col > 1u << 30 ? -1 : static_cast<int>(col - 1);
    out.end_col = end_col == 0 || end_col > 1u << 30 ? -1 : static_cast<int>(end_col - 1);
  }
  if (out.col < 0 || out.end_col < 0) out.col = out.end_col = -1;
}

Position location_table_position(const std::vector<std::uint8_t>& t, int firstlineno, std::int64_t addr) {
  LocationReader r(t);
  std::int64_t computed = firstlineno;
  std::int64_t end = 0;
  Position out;
  while (!r.done()) {
    std::uint8_t first = r.byte();
    if (!(first & 0x80)) return out;  // not an entry start: corrupt table
    int code = (first >> 3) & 15;
    std::int64_t start = end;
    end += 2 * ((first & 7) + 1);
    std::int64_t delta = 0;
    if (code == 14 || code == 13) delta = r.svarint();
    else if (code >= 10 && code <= 12) delta = code - 10;
    computed = add_line(computed, delta);
    if (start <= addr && addr < end) {
      if (code == 15) return out;
      out.line = as_line(computed);
      if (code != 13) read_columns(r, code, computed, out);
      if (out.line < 0) out = Position{};
      return out;
    }
    r.skip_entry_tail();
  }
  return out;
}

}  // namespace

int line_for_offset(const Layout& layout, const std::vector<std::uint8_t>& table, int firstlineno,
                    std::int64_t byte_offset) {
  if (byte_offset < 0) return firstlineno;  // the frame has not started yet
  switch (layout.linetable) {
    case LineTableFormat::Lnotab: return lnotab_line(table, firstlineno, byte_offset);
    case LineTableFormat::LineTable310: return linetable310_line(table, firstlineno, byte_offset);
    case LineTableFormat::LocationTable: return location_table_position(table, firstlineno, byte_offset).line;
  }
  return -1;
}

Position position_for_offset(const Layout& layout, const std::vector<std::uint8_t>& table, int firstlineno,
                             std::int64_t byte_offset) {
  if (layout.linetable == LineTableFormat::LocationTable && byte_offset >= 0)
    return location_table_position(table, firstlineno, byte_offset);
  Position out;
  out.line = line_for_offset(layout, table, firstlineno, byte_offset);
  return out;
}

namespace detail {

const CodeInfo& CodeCache::get(Addr addr) {
  auto it = cache_.find(addr);
  if (it != cache_.end()) return it->second;
  CodeInfo& info = cache_[addr];
  const Layout& l = objects_.layout();

  // Each problem names the address of what could not be read: the code
  // object itself, or the string or table it points to.
  auto tname = objects_.type_name(addr);
  if (!tname) {
    info.problem = unread(ReadPart::Code, addr);
    return info;
  }
  if (*tname != "code") {
    info.problem = unread_named(ReadPart::Code, addr, ReadWhy::NotA, *tname);
    info.reason = ErrorReason::NotCodeObject;
    return info;
  }
  RemoteStruct c;
  if (!c.load(objects_.memory(), addr,
              span_of({l.code_filename, l.code_name, l.code_qualname, l.code_firstlineno, l.code_lnotab,
                       l.code_linetable, l.code_firsttraceable}))) {
    info.problem = unread(ReadPart::Code, addr);
    return info;
  }
  ReadProblem why;
  auto field_problem = [&](const char* field) {
    return std::move(why.within(ReadPart::Field, 0, field).within(ReadPart::Code, addr));
  };
  Addr name_obj = c.ptr(l.has(l.code_qualname) ? l.code_qualname : l.code_name);
  if (auto s = objects_.read_str(name_obj, &why)) info.name = *s;
  else info.problem = field_problem("name");
  if (auto s = objects_.read_str(c.ptr(l.code_filename), &why)) info.filename = *s;
  else if (info.problem.empty()) info.problem = field_problem("filename");
  info.firstlineno = c.get<std::int32_t>(l.code_firstlineno).value_or(-1);
  Addr table = c.ptr(l.has(l.code_linetable) ? l.code_linetable : l.code_lnotab);
  if (auto b = objects_.read_bytes(table, objects_.options().max_table, &why)) {
    info.linetable = std::move(*b);
    info.has_linetable = true;
  } else if (info.problem.empty()) {
    info.problem = field_problem(l.has(l.code_linetable) ? "co_linetable" : "co_lnotab");
  }
  if (l.has(l.code_code_adaptive)) info.code_start = addr + l.code_code_adaptive;
  info.firsttraceable = c.get<std::int32_t>(l.code_firsttraceable).value_or(0);
  info.ok = true;
  return info;
}

int CodeCache::line(const CodeInfo& code, std::int64_t byte_offset) const {
  if (!code.has_linetable) return -1;
  auto [it, added] = code.lines.try_emplace(byte_offset, -1);
  if (added) it->second = line_for_offset(objects_.layout(), code.linetable, code.firstlineno, byte_offset);
  return it->second;
}

Position CodeCache::position(const CodeInfo& code, std::int64_t byte_offset) const {
  if (!code.has_linetable) return {};
  auto [it, made] = code.positions.try_emplace(byte_offset);
  if (made) it->second = position_for_offset(objects_.layout(), code.linetable, code.firstlineno, byte_offset);
  return it->second;
}

}  // namespace detail
}  // namespace pyhang::cpython
