// Integer members of an object's type (pyhang/cpython/members.hpp).

#include "pyhang/cpython/members.hpp"

#include <cstring>
#include <vector>

#include "cpython/internal.hpp"
#include "cpython/member_defs.hpp"

namespace pyhang::cpython {

namespace {

using detail::plausible_pointer;
using detail::RemoteStruct;
using detail::span_of;

using detail::kMaxBases;
using detail::kMaxMembers;
constexpr std::int64_t kMaxOffset = 1 << 16;
constexpr Addr kUserSpaceEnd = Addr{1} << 47;   // x86_64's user addresses

// structmember.h's member kinds (Py_T_* from 3.12, the same numbers in every
// version): the integer ones, with their width and signedness.
struct IntKind {
  std::int32_t kind;
  std::size_t width;
  bool is_signed;
};
constexpr IntKind kIntKinds[] = {
    {0, 2, true},    // T_SHORT
    {1, 4, true},    // T_INT
    {2, 8, true},    // T_LONG
    {8, 1, true},    // T_BYTE
    {9, 1, false},   // T_UBYTE
    {10, 2, false},  // T_USHORT
    {11, 4, false},  // T_UINT
    {12, 8, false},  // T_ULONG
    {14, 1, false},  // T_BOOL (a char)
    {17, 8, true},   // T_LONGLONG
    {18, 8, false},  // T_ULONGLONG
    {19, 8, true},   // T_PYSSIZET
};

const IntKind* int_kind(std::int32_t kind) {
  for (const auto& k : kIntKinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

std::optional<std::int64_t> read_int(MemoryReader& mem, Addr at, const IntKind& k) {
  std::uint8_t raw[8] = {};
  if (!mem.read(at, raw, k.width)) return std::nullopt;
  std::uint64_t u = 0;
  std::memcpy(&u, raw, k.width);  // little-endian: x86_64
  if (k.is_signed && k.width < 8 && (u >> (8 * k.width - 1)) & 1) u |= ~std::uint64_t{0} << (8 * k.width);
  return static_cast<std::int64_t>(u);
}

}  // namespace

namespace detail {

std::vector<MemberDef> member_defs(MemoryReader& mem, const Layout& l, Addr table, std::size_t max) {
  std::vector<MemberDef> out;
  if (l.memberdef_size <= 0) return out;
  const auto size = static_cast<std::size_t>(l.memberdef_size);
  std::vector<std::uint8_t> defs(max * size);
  defs.resize(mem.read_partial(table, defs.data(), defs.size()) / size * size);
  for (std::size_t at = 0; at + size <= defs.size(); at += size) {
    MemberDef d;
    std::memcpy(&d.name, defs.data() + at + l.memberdef_name, sizeof d.name);
    std::memcpy(&d.kind, defs.data() + at + l.memberdef_type, sizeof d.kind);
    std::memcpy(&d.offset, defs.data() + at + l.memberdef_offset, sizeof d.offset);
    if (!d.name) break;  // the table's end
    out.push_back(d);
  }
  return out;
}

}  // namespace detail

std::optional<std::int64_t> int_member(MemoryReader& mem, const PythonState& state, Addr obj,
                                       std::string_view name) {
  auto layout = detail::layout_of(mem, state);
  if (!layout || !plausible_pointer(obj)) return std::nullopt;
  const Layout& l = *layout;
  if (!l.has(l.type_tp_members) || !l.has(l.type_tp_base) || l.memberdef_size <= 0) return std::nullopt;
  Addr type = mem.read_pointer(obj + l.object_ob_type).value_or(0);
  for (int depth = 0; plausible_pointer(type) && depth < kMaxBases; ++depth) {
    RemoteStruct t;
    if (!t.load(mem, type, span_of({l.type_tp_members, l.type_tp_base}))) return std::nullopt;
    Addr members = t.ptr(l.type_tp_members);
    if (plausible_pointer(members)) {
      for (const auto& d : detail::member_defs(mem, l, members, kMaxMembers)) {
        // (a name's chars need no alignment: plausible_pointer, which wants an aligned pointer, is wrong here)
        if (d.name >= kUserSpaceEnd) continue;
        auto member = mem.read_cstring(d.name, 256);
        if (!member || *member != name) continue;
        const IntKind* k = int_kind(d.kind);
        if (!k || d.offset <= 0 || d.offset > kMaxOffset) return std::nullopt;  // a member of that name, no integer
        return read_int(mem, obj + static_cast<Addr>(d.offset), *k);
      }
    }
    type = t.ptr(l.type_tp_base);
  }
  return std::nullopt;
}

}  // namespace pyhang::cpython
