// ELF symbols and sections, and the target's address space built on them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "pyhang/target/elf.hpp"
#include "pyhang/target/target.hpp"
#include "support/elf_builder.hpp"

using namespace pyhang;
using pyhang::testing::build_shared_object;

TEST_CASE(".dynsym is enough to find a symbol and to name the function around an address") {
  auto bytes = build_shared_object({{"PyEval_SaveThread", 0x1000, 0x40, true},
                                    {"_PyRuntime", 0x5000, 0x200, true, STT_OBJECT},
                                    {"take_gil", 0x2000, 0x80, false}},
                                   ".PyRuntime", std::vector<std::uint8_t>(16, 0xab));
  auto elf = ElfFile::from_image(FileImage::from_bytes(bytes, "libpython-test.so"));
  REQUIRE(elf->symbol("PyEval_SaveThread"));
  CHECK(elf->symbol("PyEval_SaveThread")->from_dynsym);
  CHECK(elf->symbol("_PyRuntime")->value == 0x5000);
  CHECK_FALSE(elf->symbol("take_gil")->from_dynsym);  // .symtab only
  CHECK_FALSE(elf->symbol("nope"));
  CHECK(elf->symbol_at(0x1010)->name == "PyEval_SaveThread");
  CHECK_FALSE(elf->symbol_at(0x1040));  // just past its size
  REQUIRE(elf->section(".PyRuntime"));
  CHECK(elf->section(".PyRuntime")->size == 16);
  std::uint8_t b = 0;
  CHECK(elf->read_vaddr(elf->section(".PyRuntime")->addr, &b, 1) == 1);
  CHECK(b == 0xab);
}

TEST_CASE("proc maps lines parse into mappings, with and without paths") {
  auto maps = parse_proc_maps(
      "55d4c0a00000-55d4c0a28000 r--p 00000000 fe:01 123  /usr/bin/python3.11\n"
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
      "7ffd1000000-7ffd1021000 rw-p 00000000 00:00 0                          [stack]\n"
      "garbage line\n");
  REQUIRE(maps.size() == 3);
  CHECK(maps[0].path == "/usr/bin/python3.11");
  CHECK(maps[0].perms == "r--p");
  CHECK(maps[1].path.empty());
  CHECK(maps[2].path == "[stack]");
}

TEST_CASE("an object's load bias and symbols map runtime addresses to names") {
  auto bytes = build_shared_object({{"f", 0x1000, 0x100, true}});
  auto path = std::filesystem::temp_directory_path() / "pyhang-test-libf.so";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  AddressSpace space({{0x7f0000000000, 0x7f0000002000, 0, "r-xp", path.string()},
                      {0x7f0000010000, 0x7f0000011000, 0, "rw-p", ""}});
  REQUIRE(space.objects().size() == 1);
  CHECK(space.objects()[0].bias == 0x7f0000000000);
  CHECK(space.symbol_address("f") == std::optional<Addr>(0x7f0000001000));
  auto s = space.symbolize(0x7f0000001010);
  REQUIRE(s.object);
  CHECK(s.function == "f");
  CHECK(s.offset == 0x10);
  CHECK(space.symbolize(0x7f0000010000).object == nullptr);
  CHECK(space.object_named("pyhang-test-libf") != nullptr);
  std::filesystem::remove(path);
}

TEST_CASE("C++ symbols are named as gdb prints them, demangled; a name that does not demangle is kept") {
  auto bytes = build_shared_object({{"_ZN2ns5Klass6methodEi", 0x1000, 0x100, true}, {"_Zgarbage", 0x1100, 0x10, true}});
  auto path = std::filesystem::temp_directory_path() / "pyhang-test-libcxx.so";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  AddressSpace space({{0x7f0000000000, 0x7f0000002000, 0, "r-xp", path.string()}});
  CHECK(space.symbolize(0x7f0000001010).function == "ns::Klass::method(int)");
  CHECK(space.symbolize(0x7f0000001104).function == "_Zgarbage");
  std::filesystem::remove(path);
}

TEST_CASE("a mapped file that is missing is an object with a problem, not an error") {
  AddressSpace space({{0x1000, 0x2000, 0, "r-xp", "/nonexistent/libgone.so"}});
  REQUIRE(space.objects().size() == 1);
  CHECK(space.objects()[0].elf == nullptr);
  REQUIRE(space.objects()[0].problem);
  CHECK(space.objects()[0].problem->kind == TargetProblem::SymbolsUnreadable);
  CHECK(space.objects()[0].problem->text == "cannot-open");
  CHECK(space.objects()[0].problem->number == ENOENT);
  CHECK(space.objects()[0].problem->other_text == "/nonexistent/libgone.so");
  CHECK(space.symbolize(0x1500).function.empty());
}
