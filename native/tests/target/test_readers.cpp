// Memory readers: the page cache, live reads across unmapped pages, the core
// reader and its fall-back to mapped files, and garbage.
#include <cstring>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "pyhang/target/core_file.hpp"
#include "pyhang/target/memory.hpp"
#include "pyhang/target/page_cache.hpp"
#include "pyhang/target/target.hpp"
#include "support/elf_builder.hpp"

using namespace pyhang;
using pyhang::testing::build_core;
using pyhang::testing::CoreSpec;

namespace {

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

std::string write_temp(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  auto path = std::filesystem::temp_directory_path() / ("pyhang-test-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

}  // namespace

TEST_CASE("page cache returns the same bytes as its source, across page boundaries") {
  auto image = std::make_shared<ImageReader>();
  auto bytes = pattern(3 * 4096, 1);
  image->add(0x10000, bytes);
  CachedReader cached(image);
  std::vector<std::uint8_t> buf(5000);
  // A read that starts 100 bytes before a page end and spans two boundaries.
  REQUIRE(cached.read_partial(0x10000 + 4096 - 100, buf.data(), buf.size()) == buf.size());
  CHECK(std::equal(buf.begin(), buf.end(), bytes.begin() + 4096 - 100));
  // Served from the cache the second time.
  auto before = cached.stats().cache_misses;
  REQUIRE(cached.read(0x10000 + 4096 - 100, buf.data(), buf.size()));
  CHECK(cached.stats().cache_misses == before);
}

TEST_CASE("a scan reads past the page cache: the same bytes, nothing kept") {
  auto image = std::make_shared<ImageReader>();
  auto bytes = pattern(4 * 4096, 2);
  image->add(0x40000, bytes);
  CachedReader cached(image);
  CHECK(&cached.uncached() == image.get());
  CHECK(&image->uncached() == image.get());  // a reader with no cache is its own
  std::vector<std::uint8_t> buf(bytes.size());
  REQUIRE(cached.uncached().read_partial(0x40000, buf.data(), buf.size()) == buf.size());
  CHECK(buf == bytes);
  CHECK(cached.stats().cache_misses == 0);
  // Cores are read straight from their mapping: no cache in front of them.
  auto core = write_temp(build_core(CoreSpec{}), "uncached.core");
  auto target = Target::core(core);
  CHECK(&target->memory().uncached() == &target->memory());
  std::filesystem::remove(core);
}

TEST_CASE("a read running into unreadable memory returns the readable prefix") {
  auto image = std::make_shared<ImageReader>();
  image->add(0x20000, pattern(4096, 3));  // next page absent
  CachedReader cached(image);
  std::vector<std::uint8_t> buf(200);
  CHECK(cached.read_partial(0x20000 + 4096 - 50, buf.data(), buf.size()) == 50);
  CHECK_FALSE(cached.read(0x20000 + 4096 - 50, buf.data(), buf.size()));
  CHECK_FALSE(cached.read_value<std::uint64_t>(0x5000).has_value());
  CHECK_FALSE(cached.read_value<std::uint64_t>(~Addr{0} - 3).has_value());  // wraps around
}

TEST_CASE("a batch of reads is served by one batch of the source, with its failures kept per request") {
  auto image = std::make_shared<ImageReader>();
  image->add(0x30000, pattern(8192, 5));
  CachedReader cached(image);
  std::uint64_t a = 0, b = 0, c = 0;
  std::vector<ReadRequest> reqs = {{0x30000, &a, 8}, {0x31000, &b, 8}, {0x90000, &c, 8}};
  cached.read_batch(reqs);
  CHECK(reqs[0].done == 8);
  CHECK(reqs[1].done == 8);
  CHECK(reqs[2].done == 0);
}

TEST_CASE("the page cache keeps a page read again while pages read once pass through, within its size") {
  auto image = std::make_shared<ImageReader>();
  constexpr std::size_t kPages = 64;
  image->add(0x100000, pattern(kPages * 4096, 7));
  CachedReader cached(image, 8);  // two halves of 4 pages
  CHECK(cached.batch_pages() == 4);
  const Addr shared = 0x100000;  // a page every thread's read comes back to (a code object, a lock)
  std::uint64_t v = 0;
  REQUIRE(cached.read(shared, &v, sizeof v));
  const auto generation = cached.generation();
  for (std::size_t p = 1; p < kPages; ++p) {
    REQUIRE(cached.read(0x100000 + p * 4096, &v, sizeof v));  // a page of one thread's own, read once
    auto misses = cached.stats().cache_misses;
    REQUIRE(cached.read(shared, &v, sizeof v));
    CHECK(cached.stats().cache_misses == misses);  // still kept
  }
  CHECK(cached.stats().cache_misses == kPages);  // each page fetched once
  // Making room is not a change of the memory: what a decoder remembers of it holds.
  CHECK(cached.generation() == generation);
  cached.invalidate();
  CHECK(cached.generation() != generation);
  CHECK(cached.read(shared, &v, sizeof v));
  CHECK(cached.stats().cache_misses == kPages + 1);
}

TEST_CASE("a batch larger than the page cache's half is read whole, and the cache is back to its size after") {
  auto image = std::make_shared<ImageReader>();
  image->add(0x200000, pattern(32 * 4096, 9));
  image->add(0x300000, pattern(4096, 10));
  CachedReader cached(image, 8);
  std::vector<std::uint64_t> values(32);
  std::vector<ReadRequest> reqs;
  for (std::size_t p = 0; p < 32; ++p) reqs.push_back({0x200000 + p * 4096 + 8, &values[p], 8, 0});
  cached.read_batch(reqs);
  for (const auto& r : reqs) CHECK(r.done == 8);
  auto bytes = pattern(32 * 4096, 9);
  std::uint64_t expected = 0;
  std::memcpy(&expected, bytes.data() + 31 * 4096 + 8, 8);
  CHECK(values[31] == expected);
  // The next miss makes room: of the batch, at most the cache's size is kept.
  std::uint64_t v = 0;
  REQUIRE(cached.read(0x300000, &v, sizeof v));
  auto misses = cached.stats().cache_misses;
  std::size_t kept = 0;
  for (std::size_t p = 0; p < 32; ++p) {
    auto before = cached.stats().cache_misses;
    REQUIRE(cached.read(0x200000 + p * 4096, &v, sizeof v));
    if (cached.stats().cache_misses == before) ++kept;
  }
  CHECK(kept <= 8);
  CHECK(cached.stats().cache_misses > misses);
}

TEST_CASE("runs of items read their pages in one batch first, no more pages a run than the cache keeps") {
  auto image = std::make_shared<ImageReader>();
  image->add(0x400000, pattern(16 * 4096, 11));
  CachedReader cached(image, 8);  // a batch of at most 4 pages
  std::vector<std::size_t> order;
  std::size_t misses_in_each = 0;
  in_prefetched_runs(
      cached, 8,
      [](std::size_t i, std::vector<Addr>& pages) {  // two pages an item, one of them twice
        pages.push_back(0x400000 + 2 * i * 4096);
        pages.push_back(0x400000 + 2 * i * 4096 + 8);
        pages.push_back(0x400000 + (2 * i + 1) * 4096);
      },
      [&](std::size_t i) {
        order.push_back(i);
        auto before = cached.stats().cache_misses;
        std::uint64_t v = 0;
        REQUIRE(cached.read(0x400000 + 2 * i * 4096, &v, sizeof v));
        REQUIRE(cached.read(0x400000 + (2 * i + 1) * 4096, &v, sizeof v));
        misses_in_each += cached.stats().cache_misses - before;
      });
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(misses_in_each == 0);                 // every page was there when its item was answered
  CHECK(cached.stats().cache_misses == 16);   // each page read once
  // An item whose pages alone are more than a batch is a run of its own; one without pages is answered too.
  order.clear();
  in_prefetched_runs(
      cached, 3,
      [](std::size_t i, std::vector<Addr>& pages) {
        if (i == 1)
          for (Addr p = 0; p < 6; ++p) pages.push_back(0x400000 + p * 4096);
      },
      [&](std::size_t i) { order.push_back(i); });
  CHECK(order == std::vector<std::size_t>{0, 1, 2});
  // A reader with no cache reads nothing ahead: each item reads as it goes.
  CHECK(image->batch_pages() == 0);
  std::size_t answered = 0;
  in_prefetched_runs(
      *image, 4, [](std::size_t, std::vector<Addr>& pages) { pages.push_back(0x400000); },
      [&](std::size_t) { ++answered; });
  CHECK(answered == 4);
}

TEST_CASE("C strings stop at NUL, at max length, and at unreadable memory") {
  auto image = std::make_shared<ImageReader>();
  std::string s = "hello";
  image->add(0x40000, s.c_str(), s.size() + 1);
  image->add(0x50000 - 3, "abc", 3);  // no NUL before unmapped memory
  CachedReader cached(image);
  CHECK(cached.read_cstring(0x40000) == std::optional<std::string>("hello"));
  CHECK_FALSE(cached.read_cstring(0x40000, 3).has_value());
  CHECK_FALSE(cached.read_cstring(0x50000 - 3).has_value());
  CHECK_FALSE(cached.read_cstring(0x7000).has_value());
}

TEST_CASE("the live reader reads this process's memory up to an unmapped page") {
  long page = sysconf(_SC_PAGESIZE);
  auto* p = static_cast<std::uint8_t*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(p != MAP_FAILED);
  for (long i = 0; i < page; ++i) p[i] = static_cast<std::uint8_t>(i);
  munmap(p + page, page);
  LiveReader live(getpid());
  std::vector<std::uint8_t> buf(64);
  Addr addr = reinterpret_cast<Addr>(p) + page - 16;
  CHECK(live.read_partial(addr, buf.data(), buf.size()) == 16);
  CHECK(buf[0] == static_cast<std::uint8_t>(page - 16));
  // Batches: one good, one straddling, one unmapped.
  std::uint64_t x = 0, y = 0, z = 0;
  std::vector<ReadRequest> reqs = {{reinterpret_cast<Addr>(p), &x, 8}, {addr + 12, &y, 8}, {addr + 100, &z, 8}};
  live.read_batch(reqs);
  CHECK(reqs[0].done == 8);
  CHECK(reqs[1].done == 4);
  CHECK(reqs[2].done == 0);
  munmap(p, page);
}

TEST_CASE("opening a process that does not exist is an error that says so") {
  CHECK_THROWS_AS(Target::live(0x3fffffff), Error);
}

TEST_CASE("a core file's threads, process and mapped files come from its notes") {
  CoreSpec spec;
  spec.threads = {{4242, 0x401000}, {4243, 0x402000}};
  spec.files = {{0x400000, 0x402000, 0, "/usr/bin/python3.11"}, {0x7f0000000000, 0x7f0000001000, 0x3000, "/lib/x.so"}};
  spec.segments = {{0x600000, pattern(4096, 9), 4096}};
  spec.auxv = {9, 0x401234, 0, 0};
  auto core = CoreFile::from_image(FileImage::from_bytes(build_core(spec), "synthetic-core"));
  REQUIRE(core->threads().size() == 2);
  CHECK(core->threads()[1].tid == 4243);
  CHECK(core->threads()[1].regs.rip() == 0x402000);
  CHECK(core->pid() == 4242);
  CHECK(core->parent_pid() == 4200);  // NT_PRPSINFO pr_ppid
  CHECK(core->command_name() == "python3");
  REQUIRE(core->file_mappings().size() == 2);
  CHECK(core->file_mappings()[1].offset == 0x3000);
  CHECK(core->file_mappings()[1].path == "/lib/x.so");
  CHECK(core->auxv_value(9) == std::optional<std::uint64_t>(0x401234));
  CHECK(core->problems().empty());
}

TEST_CASE("the core reader reads the core's bytes, then the mapped file for what the core omitted") {
  auto file_bytes = pattern(3 * 4096, 11);
  std::string file = write_temp(file_bytes, "mapped.bin");
  CoreSpec spec;
  spec.threads = {{7, 0}};
  spec.files = {{0x700000, 0x702000, 4096, file}};                          // file pages 1..2
  spec.segments = {{0x700000, {}, 0x2000}, {0x800000, pattern(4096, 13), 4096}};  // text omitted
  auto core = CoreFile::from_image(FileImage::from_bytes(build_core(spec), "synthetic-core"));
  CoreReader reader(core);
  std::uint8_t b = 0;
  REQUIRE(reader.read(0x700000 + 5, &b, 1));
  CHECK(b == file_bytes[4096 + 5]);
  REQUIRE(reader.read(0x800000 + 5, &b, 1));
  CHECK(b == pattern(4096, 13)[5]);
  CHECK_FALSE(reader.read(0x900000, &b, 1));
  std::filesystem::remove(file);
}

TEST_CASE("a truncated core is reported, and its missing bytes are unreadable") {
  CoreSpec spec;
  spec.threads = {{7, 0}};
  spec.segments = {{0x800000, pattern(2 * 4096, 13), 2 * 4096}};
  auto bytes = build_core(spec);
  bytes.resize(bytes.size() - 4096 - 10);
  auto core = CoreFile::from_image(FileImage::from_bytes(bytes, "truncated-core"));
  REQUIRE(core->problems().size() == 1);
  CHECK(core->problems()[0].kind == TargetProblem::CoreTruncated);
  CHECK(core->problems()[0].number == 4096 + 10);  // the bytes cut off, of the
  CHECK(core->problems()[0].other == 2 * 4096);    // segment's
  CHECK(core->problems()[0].path == "truncated-core");
  std::uint8_t b;
  CoreReader reader(core);
  CHECK(reader.read(0x800000, &b, 1));
  CHECK_FALSE(reader.read(0x800000 + 2 * 4096 - 1, &b, 1));
}

TEST_CASE("bytes a truncated core recorded but lost are unknown, never taken from the mapped file") {
  // GIVEN a library's writable data recorded in the core (filesz > 0), its
  // file mapped at the same place, and the core cut inside that segment
  auto file_bytes = pattern(2 * 4096, 21);
  std::string file = write_temp(file_bytes, "data.bin");
  CoreSpec spec;
  spec.threads = {{7, 0}};
  spec.files = {{0x800000, 0x802000, 0, file}};
  spec.segments = {{0x800000, pattern(2 * 4096, 13), 2 * 4096}};
  auto bytes = build_core(spec);
  bytes.resize(bytes.size() - 4096 - 10);
  auto core = CoreFile::from_image(FileImage::from_bytes(bytes, "truncated-core"));
  CoreReader reader(core);
  std::uint8_t b = 0;
  // THEN what the core kept reads from the core
  REQUIRE(reader.read(0x800000 + 5, &b, 1));
  CHECK(b == pattern(2 * 4096, 13)[5]);
  // AND what it lost is unreadable: the file holds the data as it was before
  // the program ran, not as it was when the core was made
  CHECK_FALSE(reader.read(0x800000 + 2 * 4096 - 1, &b, 1));
  std::uint8_t two[2];
  CHECK(reader.read_partial(0x800000 + 4096 - 1, two, 2) <= 1);
  std::filesystem::remove(file);
}

TEST_CASE("garbage instead of a core is refused with a reason") {
  CHECK_THROWS_AS(CoreFile::from_image(FileImage::from_bytes(pattern(100, 1), "junk")), Error);
  auto so = pyhang::testing::build_shared_object({});
  try {
    CoreFile::from_image(FileImage::from_bytes(so, "lib.so"));
    FAIL("a shared object was taken for a core");
  } catch (const Error& e) {
    CHECK(e.reason() == ErrorReason::NotCore);
    CHECK(e.path() == "lib.so");
  }
  // A core whose note claims more bytes than it has: parsed without crashing.
  CoreSpec spec;
  spec.threads = {{7, 0}};
  auto bytes = build_core(spec);
  bytes.resize(sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr) + 20);
  auto core = CoreFile::from_image(FileImage::from_bytes(bytes, "cut"));
  CHECK(core->threads().empty());
  CHECK_FALSE(core->problems().empty());
  CHECK(core->problems().back().kind == TargetProblem::CoreNoThread);
}

TEST_CASE("a core target gives each thread's registers from its NT_PRSTATUS note, and none for a stranger") {
  CoreSpec spec;
  spec.threads = {{4242, 0x401000}, {4243, 0x402000}};
  spec.files = {{0x400000, 0x402000, 0, "/usr/bin/python3.11"}};
  spec.segments = {{0x600000, pattern(4096, 9), 4096}};
  auto path = write_temp(build_core(spec), "regs.core");
  auto target = Target::core(path);
  REQUIRE(target->registers(4243));
  CHECK(target->registers(4243)->rip() == 0x402000);
  CHECK(target->registers(4242)->rip() == 0x401000);
  CHECK_FALSE(target->registers(99));
  std::filesystem::remove(path);
}

TEST_CASE("live registers come from ptrace for a thread this thread traces, and not otherwise") {
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  REQUIRE(child > 0);
  auto target = Target::live(child);
  CHECK_FALSE(target->registers(child));  // not traced by us
  REQUIRE(ptrace(PTRACE_ATTACH, child, nullptr, nullptr) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  auto regs = target->registers(child);
  REQUIRE(regs);
  CHECK(regs->rip() != 0);
  CHECK(regs->rsp() != 0);
  CHECK(target->space().object_at(regs->rip()) != nullptr);  // stopped in pause(), inside libc
  ptrace(PTRACE_DETACH, child, nullptr, nullptr);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}
