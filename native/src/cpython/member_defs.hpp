// The entries of a type's PyMemberDef table, shared by the readers of
// __slots__ (pyobjects_containers.cpp) and of a C type's integer members
// (members.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "cpython/layouts/layout.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython::detail {

struct MemberDef {
  Addr name = 0;  // its C string (no alignment)
  std::int32_t kind = 0;
  std::int64_t offset = 0;
};

// The bounds of both readers: classes walked up tp_base, and entries read of one class's table.
constexpr int kMaxBases = 32;
constexpr std::size_t kMaxMembers = 64;

// The entries of the table at `table` up to its end (a NULL name), at most
// `max`; fewer where the rest of the table cannot be read.
std::vector<MemberDef> member_defs(MemoryReader& mem, const Layout& l, Addr table, std::size_t max);

}  // namespace pyhang::cpython::detail
