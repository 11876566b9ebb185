// A function's split-off partitions are found from its own direct jumps
// into the middle of another FDE; a jump to an FDE's start is a tail call.
#include <catch2/catch.hpp>

#include "pyhang/target/elf.hpp"
#include "pyhang/unwind/partitions.hpp"
#include "support/eh_object.hpp"

using namespace pyhang;
using namespace pyhang::testing;

namespace {

// The object's bytes with `code` written at link address `at` (vaddr is the
// file offset: one PT_LOAD at 0 maps the file).
std::shared_ptr<const ElfFile> with_code(std::vector<std::uint8_t> bytes, Addr at, const std::vector<std::uint8_t>& code) {
  std::copy(code.begin(), code.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at));
  return ElfFile::from_image(FileImage::from_bytes(std::move(bytes), "partitions"));
}

std::vector<std::uint8_t> rel32(std::uint8_t op0, std::int32_t rel, std::uint8_t op1 = 0) {
  std::vector<std::uint8_t> v{op0};
  if (op1) v.push_back(op1);
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(rel) >> (8 * i)));
  return v;
}

}  // namespace

TEST_CASE("a function's jumps into the middle of another FDE name its partitions; a jump to an FDE's start is a tail call",
          "[unwind]") {
  TestObject spec;
  spec.fdes = {{0x1000, 0x40, {}}, {0x1100, 0x100, {}}, {0x1300, 0x40, {}}};
  // 0x1000 jz 0x1150 (inside the second FDE: a partition); 0x1006 jmp 0x1300
  // (the third FDE's start: a tail call); 0x100b jmp +2 (inside itself); ret.
  std::vector<std::uint8_t> code = rel32(0x0f, 0x1150 - 0x1006, 0x84);
  auto jmp = rel32(0xe9, 0x1300 - 0x100b);
  code.insert(code.end(), jmp.begin(), jmp.end());
  code.insert(code.end(), {0xeb, 0x02, 0x90, 0x90, 0xc3});
  auto elf = with_code(build_object(spec), 0x1000, code);
  auto parts = unwind::split_partitions(elf, 0x1000);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].begin == 0x1100);
  CHECK(parts[0].end == 0x1200);
  SECTION("asked from inside the function, the same") {
    auto again = unwind::split_partitions(elf, 0x1008);
    REQUIRE(again.size() == 1);
    CHECK(again[0].begin == 0x1100);
  }
}

TEST_CASE("no CFI, no FDE at the pc, or code that does not decode: no partitions, no crash", "[unwind]") {
  TestObject spec;
  spec.fdes = {{0x1000, 0x40, {}}, {0x1100, 0x100, {}}};
  CHECK(unwind::split_partitions(nullptr, 0x1000).empty());
  auto elf = with_code(build_object(spec), 0x1000, {0x06, 0x0f, 0x84});  // an invalid opcode in 64-bit mode first
  CHECK(unwind::split_partitions(elf, 0x1000).empty());
  CHECK(unwind::split_partitions(elf, 0x1080).empty());  // between FDEs
  CHECK(unwind::split_partitions(elf, 0x5000).empty());  // past the file
}
