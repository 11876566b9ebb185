// Integer members of a C type (pyhang/cpython/members.hpp), on synthetic
// images laid out with each version's tables (3.6 - 3.15): a static type's
// PyMemberDef table as psycopg2's connection declares it (closed T_LONG,
// status T_INT, notices T_OBJECT; names that need no alignment), a base's
// members, and what is no integer member or cannot be read.
#include <catch2/catch.hpp>

#include "pyhang/cpython/members.hpp"
#include "support/cpython_objects.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

namespace {

using Member = Objects::MemberDef;

// A static type (no Py_TPFLAGS_HEAPTYPE) with `members`, derived from `base` (0: none).
Addr member_type(Objects& o, const std::string& type_name, const std::vector<Member>& members, Addr base) {
  Addr t = o.img.type(type_name, 0);
  o.member_table(t, members, base);
  return t;
}

}  // namespace

TEST_CASE("a C type's integer members are read at the offsets its own member table gives", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    // "xstatus" + 1: a name whose chars start at an odd address, as a C string in a .so's data may
    Addr status = o.img.cstring("xstatus") + 1;
    Addr base = member_type(o, "Base", {{o.img.cstring("server_version"), 1, 104}}, 0);
    Addr conn_type = member_type(o, "psycopg2.extensions.connection",
                                 {{o.img.cstring("closed"), 2, 80}, {status, 1, 96},
                                  {o.img.cstring("notices"), 6, 168}, {o.img.cstring("autocommit"), 14, 112}},
                                 base);
    Addr conn = o.img.alloc(256);
    o.img.put<Addr>(conn, o.l.object_ob_type, conn_type);
    o.img.put<std::int64_t>(conn, 80, -1);
    o.img.put<std::int32_t>(conn, 96, 2);
    o.img.put<std::uint8_t>(conn, 112, 1);
    o.img.put<std::int32_t>(conn, 104, 150004);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    CHECK(int_member(mem, state, conn, "status") == 2);
    CHECK(int_member(mem, state, conn, "closed") == -1);
    CHECK(int_member(mem, state, conn, "autocommit") == 1);
    CHECK(int_member(mem, state, conn, "server_version") == 150004);   // the base's
    // a member that is no integer, a name no table declares: none
    CHECK_FALSE(int_member(mem, state, conn, "notices"));
    CHECK_FALSE(int_member(mem, state, conn, "backend_pid"));
    // an object whose type's table cannot be read, an unmapped object: none, never a guess
    Addr junk_type = member_type(o, "Junk", {}, 0);
    o.img.put<Addr>(junk_type, o.l.type_tp_members, Image::kUnmapped);
    CHECK_FALSE(int_member(mem, state, o.object(junk_type), "status"));
    CHECK_FALSE(int_member(mem, state, Image::kUnmapped, "status"));
  }
}
