// Integer members of an object's type: the fields a C extension type exposes
// as read-only attributes through its PyMemberDef table (T_INT, T_LONG and
// their kin: psycopg2's connection.status), read at the offset the type's
// own table gives, in the type and its bases, static or heap.  No
// per-extension layout: the table is the type's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

// obj.name when obj's type (or a base) declares `name` as an integer member;
// nullopt when no such member is declared (or it is of another kind), or it
// cannot be read.
std::optional<std::int64_t> int_member(MemoryReader& memory, const PythonState& state, Addr obj,
                                       std::string_view name);

}  // namespace pyhang::cpython
