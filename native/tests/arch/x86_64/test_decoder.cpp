// The x86-64 decoder: lengths, prefixes, ModRM fields, RIP-relative and
// branch displacements of the instructions pyhang's code readers look at,
// and nothing for what it does not decode.
#include <catch2/catch.hpp>

#include <vector>

#include "pyhang/arch/x86_64/decoder.hpp"

using namespace pyhang::x86_64;

namespace {
std::optional<Insn> dec(const std::vector<std::uint8_t>& b) { return decode(b.data(), b.size()); }
}  // namespace

TEST_CASE("RIP-relative loads and leas give their displacement and register", "[x86_64]") {
  auto mov = dec({0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00});  // mov 0x10(%rip),%rax
  REQUIRE(mov);
  CHECK(mov->len == 7);
  CHECK(mov->map == 0);
  CHECK(mov->op == 0x8b);
  CHECK(mov->rex_w());
  CHECK(mov->rip_relative);
  CHECK(mov->disp == 0x10);
  CHECK(mov->reg == 0);
  auto lea = dec({0x4c, 0x8d, 0x35, 0xf0, 0xff, 0xff, 0xff});  // lea -0x10(%rip),%r14
  REQUIRE(lea);
  CHECK(lea->len == 7);
  CHECK(lea->reg == 14);
  CHECK(lea->disp == -0x10);
  auto mov32 = dec({0x8b, 0x05, 0x00, 0x01, 0x00, 0x00});  // mov 0x100(%rip),%eax
  REQUIRE(mov32);
  CHECK(mov32->len == 6);
  CHECK(mov32->rex == 0);
}

TEST_CASE("prefixes are counted, lock is told apart, and ModRM keeps rm as encoded", "[x86_64]") {
  auto cmpxchg = dec({0xf0, 0x41, 0x0f, 0xb1, 0x0e});  // lock cmpxchg %ecx,(%r14)
  REQUIRE(cmpxchg);
  CHECK(cmpxchg->len == 5);
  CHECK(cmpxchg->lock);
  CHECK(cmpxchg->prefixes == 1);
  CHECK(cmpxchg->map == 1);
  CHECK(cmpxchg->op == 0xb1);
  CHECK(cmpxchg->mod == 0);
  CHECK(cmpxchg->rm == 14);
  CHECK(cmpxchg->rm_low == 6);
  auto word = dec({0x66, 0x89, 0x07});  // mov %ax,(%rdi)
  REQUIRE(word);
  CHECK(word->prefixes == 1);
  CHECK_FALSE(word->lock);
}

TEST_CASE("branches give their displacement, immediates their size", "[x86_64]") {
  auto call = dec({0xe8, 0xfb, 0xff, 0xff, 0xff});
  REQUIRE(call);
  CHECK(call->has_rel);
  CHECK(call->rel == -5);
  auto jcc = dec({0x0f, 0x84, 0x00, 0x01, 0x00, 0x00});
  REQUIRE(jcc);
  CHECK(jcc->len == 6);
  CHECK(jcc->rel == 0x100);
  auto movabs = dec({0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8});
  REQUIRE(movabs);
  CHECK(movabs->len == 10);
  CHECK(movabs->imm_size == 8);
  CHECK(movabs->imm == 0x0807060504030201ull);
  auto test = dec({0xf6, 0x07, 0x01});  // testb $1,(%rdi): the immediate follows ModRM.reg
  REQUIRE(test);
  CHECK(test->len == 3);
}

TEST_CASE("endbr64 is recognised; truncated, VEX and invalid code is not decoded", "[x86_64]") {
  const std::uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
  CHECK(is_endbr64(endbr, 4));
  CHECK_FALSE(is_endbr64(endbr, 3));
  auto e = decode(endbr, 4);
  REQUIRE(e);
  CHECK(e->len == kEndbr64Length);
  CHECK_FALSE(dec({0x48, 0x8b, 0x05, 0x10}));       // displacement cut short
  CHECK_FALSE(dec({0xc5, 0xf8, 0x77}));             // VEX (vzeroupper)
  CHECK_FALSE(dec({0x06}));                         // push es: invalid in 64-bit mode
  CHECK_FALSE(dec({}));
}
