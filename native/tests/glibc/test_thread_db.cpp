// libc's libthread_db descriptors (_thread_db_* in .dynsym): read from
// synthetic ELF files and from Debian's glibc 2.41 and newest libc, and
// checked against what the decoders assume.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "glibc/release_libcs.hpp"
#include "pyhang/glibc/layouts.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/glibc/thread_db.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/target.hpp"
#include "support/elf_builder.hpp"
#include "support/skip.hpp"

using namespace pyhang;
using namespace pyhang::glibc;

namespace {

// The descriptors of x86_64 glibc 2.34 to 2.43 (they did not change).
ThreadDb x86_64_thread_db() {
  ThreadDb db;
  db.library = "libc.so.6";
  db.pthread_tid = DbDesc{32, 1, 720};
  db.pthread_dtvp = DbDesc{64, 1, 8};
  db.list_t_next = DbDesc{64, 1, 0};
  db.list_t_prev = DbDesc{64, 1, 8};
  db.sizeof_pthread = 2368;
  db.sizeof_list_t = 16;
  db.const_thread_area = 25;
  return db;
}

struct Symbol {
  std::string name;
  std::vector<std::uint32_t> words;
  std::uint64_t size;  // the symbol's st_size (0: unknown)
};

// A shared object whose .dynsym defines `symbols`, each at its words in a
// data section.  Built twice: the first build says where the section lands.
std::shared_ptr<ElfFile> libc_with(const std::vector<Symbol>& symbols) {
  std::vector<std::uint8_t> data;
  std::vector<std::uint64_t> at;
  for (const auto& s : symbols) {
    at.push_back(data.size());
    data.resize(data.size() + 4 * s.words.size());
    std::memcpy(data.data() + at.back(), s.words.data(), 4 * s.words.size());
  }
  auto build = [&](std::uint64_t base) {
    std::vector<pyhang::testing::TestSymbol> syms;
    for (std::size_t i = 0; i < symbols.size(); ++i)
      syms.push_back({symbols[i].name, base + at[i], symbols[i].size, true, STT_OBJECT});
    return ElfFile::from_image(FileImage::from_bytes(pyhang::testing::build_shared_object(syms, ".tdb", data), "libc.so.6"));
  };
  const auto first = build(0x100);
  const ElfSection* section = first->section(".tdb");
  REQUIRE(section);
  return build(section->offset);  // one PT_LOAD at vaddr 0: addresses are offsets
}

// A copy of `elf`'s file at `dest` whose _thread_db_pthread_tid says
// `bits` bits: the file offset of the descriptor through its PT_LOAD.
bool write_with_tid_bits(const ElfFile& elf, std::uint32_t bits, const std::string& dest) {
  auto sym = elf.symbol("_thread_db_pthread_tid");
  if (!sym) return false;
  std::optional<std::uint64_t> offset;
  for (const ElfSegment& seg : elf.segments())
    if (seg.type == 1 /* PT_LOAD */ && sym->value >= seg.vaddr && sym->value + 4 <= seg.vaddr + seg.filesz)
      offset = seg.offset + (sym->value - seg.vaddr);
  if (!offset) return false;
  auto all = elf.image().bytes(0, elf.image().size());
  std::vector<std::uint8_t> bytes(all.begin(), all.end());
  std::memcpy(bytes.data() + *offset, &bits, 4);
  std::ofstream(dest, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                             static_cast<std::streamsize>(bytes.size()));
  return true;
}

}  // namespace

TEST_CASE("descriptors are read from .dynsym, and absent or undersized symbols stay unset", "[glibc][thread_db]") {
  auto elf = libc_with({{"_thread_db_pthread_tid", {32, 1, 720}, 12},
                        {"_thread_db_sizeof_pthread", {2368}, 4},
                        {"_thread_db_const_thread_area", {25}, 0},
                        {"_thread_db_pthread_dtvp", {64, 1}, 8}});  // 8 bytes: no offset word
  const ThreadDb db = read_thread_db(*elf);
  CHECK(db.library == "libc.so.6");
  CHECK(db.pthread_tid == DbDesc{32, 1, 720});
  CHECK(db.sizeof_pthread == 2368u);
  CHECK(db.const_thread_area == 25u);
  CHECK_FALSE(db.pthread_dtvp);
  CHECK_FALSE(db.list_t_next);
  CHECK_FALSE(db.empty());
  CHECK(read_thread_db(*libc_with({{"gnu_get_libc_version", {1}, 4}})).empty());
}

TEST_CASE("x86_64 glibc's descriptors vouch for the layouts", "[glibc][thread_db]") {
  const auto check = check_thread_db(x86_64_thread_db());
  CHECK(check.differs.empty());
  CHECK(check.missing.empty());
  CHECK(check.vouches());
}

TEST_CASE("each descriptor that contradicts an assumption is named with what it describes", "[glibc][thread_db]") {
  ThreadDb db = x86_64_thread_db();
  auto only = [&]() {
    const auto check = check_thread_db(db);
    INFO(check.differs.size() << " differ; first: "
                              << (check.differs.empty() ? "" : std::string(to_string(check.differs[0].kind))));
    REQUIRE(check.differs.size() == 1);
    CHECK_FALSE(check.vouches());
    return check.differs[0];
  };
  SECTION("a 64-bit tid: the lock words hold 32-bit TIDs") {
    db.pthread_tid = DbDesc{64, 1, 720};
    const auto why = only();
    CHECK(why == DescriptorIssue{DescriptorCheck::TidNotOneWord, {64, 1, 720}, 0, 0, 32});
    CHECK(tid_descriptor_issue(*db.pthread_tid) == why);
  }
  SECTION("the dtv pointer elsewhere: no TCB header at the struct's start") {
    db.pthread_dtvp = DbDesc{64, 1, 1360};
    CHECK(only() == DescriptorIssue{DescriptorCheck::TcbHeader, {64, 1, 1360}, 0, 0, 8});
  }
  SECTION("a thread pointer in another register than FS") {
    db.const_thread_area = 26;
    CHECK(only() == DescriptorIssue{DescriptorCheck::ThreadPointer, {}, 26, 0, 25});
  }
  SECTION("a struct pthread too small for its own tid") {
    db.sizeof_pthread = 700;
    CHECK(only() == DescriptorIssue{DescriptorCheck::SizeofPthread, {}, 700, 724, 65536});
  }
  SECTION("32-bit pointers (an x32 libc), one issue per descriptor") {
    db.list_t_next = DbDesc{32, 1, 0};
    db.list_t_prev = DbDesc{32, 1, 4};
    db.sizeof_list_t = 8;
    const auto check = check_thread_db(db);
    REQUIRE(check.differs.size() == 3);
    CHECK(check.differs[0] == DescriptorIssue{DescriptorCheck::SizeofListT, {}, 8, 0, 16});
    CHECK(check.differs[1] == DescriptorIssue{DescriptorCheck::ListTNext, {32, 1, 0}, 0, 0, 0});
    CHECK(check.differs[2] == DescriptorIssue{DescriptorCheck::ListTPrev, {32, 1, 4}, 0, 0, 8});
  }
}

TEST_CASE("absent descriptors contradict nothing, but the TID and struct size are needed to vouch",
          "[glibc][thread_db]") {
  ThreadDb db;
  db.library = "libc-2.31.so";  // before 2.34: libpthread has them
  const auto none = check_thread_db(db);
  CHECK_FALSE(none.contradicts());
  CHECK(none.missing == std::vector<std::string>{"_thread_db_pthread_tid", "_thread_db_sizeof_pthread"});
  CHECK_FALSE(none.vouches());
  db.pthread_tid = DbDesc{32, 1, 720};
  db.sizeof_pthread = 2368;
  CHECK(check_thread_db(db).vouches());
}

TEST_CASE("Debian's glibc 2.41 and newest libc: version from __nptl_version, descriptors that vouch",
          "[glibc][thread_db][release]") {
  int roots_read = 0;
  for (const char* root : pyhang::testing::kReleaseRoots) {
    INFO(root);
    auto libc = pyhang::testing::open_release_libc(root);
    if (!libc) continue;
    ++roots_read;
    auto v = detect_version(*libc);
    INFO(to_string(v.problem().kind));
    REQUIRE(v);
    CHECK(v->source == "__nptl_version");
    CHECK(v->exact);
    CHECK(v->minor >= 41);  // trixie ships 2.41; sid only moves forward
    REQUIRE(v->thread_db);
    const ThreadDb& db = *v->thread_db;
    CHECK(db.library == "libc.so.6");
    REQUIRE(db.pthread_tid);
    CHECK(db.pthread_tid->size_bits == 32);
    CHECK(db.pthread_tid->count == 1);
    CHECK(db.pthread_dtvp == DbDesc{64, 1, 8});
    CHECK(db.const_thread_area == 25u);
    CHECK(db.sizeof_list_t == 16u);
    const auto check = check_thread_db(db);
    INFO((check.differs.empty() ? "" : std::string(to_string(check.differs[0].kind))));
    CHECK(check.vouches());
  }
  if (roots_read == 0) PYHANG_SKIP(pyhang::testing::no_release_roots());
}

TEST_CASE("a real libc whose tid descriptor was made 64-bit is refused for TIDs and lock layouts, by name",
          "[glibc][thread_db]") {
  namespace fs = std::filesystem;
  const std::string host_libc = "/lib/x86_64-linux-gnu/libc.so.6";
  std::shared_ptr<ElfFile> libc;
  try {
    libc = ElfFile::open(host_libc);
  } catch (const std::exception& e) {
    PYHANG_SKIP("no libc.so.6 to read: " << e.what());
  }
  const fs::path dir = fs::canonical("/proc/self/exe").parent_path() / "testdata" / "glibc-releases" / "tid-64-bit";
  fs::create_directories(dir);
  const fs::path patched = dir / "libc.so.6";
  REQUIRE(write_with_tid_bits(*libc, 64, patched.string()));

  // GIVEN a process whose libc.so.6 is that file
  AddressSpace space({{0x7f0000000000, 0x7f0000200000, 0, "r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
                     [&](const std::string&) { return patched.string(); });
  // THEN pthread_t cannot be mapped to TIDs, and the problem names the descriptor
  auto d = nptl::read_descriptors(space);
  REQUIRE_FALSE(d);
  CHECK(d.problem().kind == nptl::DescriptorsProblem::TidNotOneWord);
  CHECK(d.problem().library == "libc.so.6");
  CHECK(d.problem().tid.kind == DescriptorCheck::TidNotOneWord);
  CHECK(d.problem().tid.desc.size_bits == 64);
  // AND the lock layouts are refused for this libc, whatever its version
  auto v = detect_version(space);
  REQUIRE(v);
  auto row = choose_layouts(*v);
  REQUIRE_FALSE(row);
  CHECK(row.issue.kind == LayoutsProblem::Contradicted);
  CHECK(row.issue.version == v->text);
  CHECK(row.issue.library == "libc.so.6");
  REQUIRE(row.issue.differs.size() == 1);
  CHECK(row.issue.differs[0].kind == DescriptorCheck::TidNotOneWord);
  CHECK(row.issue.differs[0].desc.size_bits == 64);
}
