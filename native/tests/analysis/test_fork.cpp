// Fork facts on synthetic inputs: the lea / lock cmpxchg decoder that finds
// __exit_funcs_lock, thread descriptors left behind by fork in a memory
// image, /proc parsers.
#include <catch2/catch.hpp>

#include <cstring>

#include "pyhang/analysis/fork.hpp"

using namespace pyhang;
using namespace pyhang::fork;

TEST_CASE("lea disp(%rip),%reg then lock cmpxchg %r32,(%reg) gives the locked address", "[fork]") {
  // 0x1000: lea 0x100(%rip),%rbx ; mov $1,%edx ; lock cmpxchg %edx,(%rbx)
  std::vector<std::uint8_t> code = {0x48, 0x8d, 0x1d, 0x00, 0x01, 0x00, 0x00, 0xba, 0x01, 0x00, 0x00, 0x00,
                                    0xf0, 0x0f, 0xb1, 0x13};
  CHECK(decode_locked_cmpxchg(code.data(), code.size(), 0x1000) == 0x1000 + 7 + 0x100);
  // r14 (REX.R on the lea, REX.B on the cmpxchg), as in Debian's __cxa_finalize
  std::vector<std::uint8_t> r14 = {0x4c, 0x8d, 0x35, 0x10, 0x00, 0x00, 0x00, 0xf0, 0x41, 0x0f, 0xb1, 0x0e};
  CHECK(decode_locked_cmpxchg(r14.data(), r14.size(), 0x2000) == 0x2000 + 7 + 0x10);
  // a cmpxchg on another register, or none at all: nothing
  std::vector<std::uint8_t> other = {0x48, 0x8d, 0x1d, 0x00, 0x01, 0x00, 0x00, 0xf0, 0x0f, 0xb1, 0x11};
  CHECK_FALSE(decode_locked_cmpxchg(other.data(), other.size(), 0x1000));
  CHECK_FALSE(decode_locked_cmpxchg(code.data(), 5, 0x1000));
  std::vector<std::uint8_t> junk(4096, 0x48);
  CHECK_FALSE(decode_locked_cmpxchg(junk.data(), junk.size(), 0x1000));
}

TEST_CASE("descriptors of threads fork did not copy are found at the top of their stacks", "[fork]") {
  // Three "stacks": one of this process's own threads, one of a parent
  // thread copied by fork (tid 0, EXITING clear), one of a thread that ended.
  constexpr Addr kTid = 0x2d0, kCancelhandling = 0x308, kStartRoutine = 0x640;
  nptl::Descriptors d;
  d.tid.offset = kTid;
  d.cancelhandling = kCancelhandling;
  d.start_routine = kStartRoutine;
  nptl::DescriptorResult f = d;
  ImageReader mem;
  std::vector<Mapping> maps;
  auto stack = [&](Addr start, Addr pd, std::int32_t tid, std::uint32_t cancel, Addr start_routine) {
    std::vector<std::uint8_t> bytes(0x20000, 0);
    auto put = [&](Addr at, const void* p, std::size_t n) { std::memcpy(&bytes[at - start], p, n); };
    put(pd, &pd, 8);
    put(pd + 16, &pd, 8);
    put(pd + kTid, &tid, 4);
    put(pd + kCancelhandling, &cancel, 4);
    put(pd + kStartRoutine, &start_routine, 8);
    mem.add(start, std::move(bytes));
    maps.push_back({start, start + 0x20000, 0, "rw-p", ""});
  };
  stack(0x100000, 0x11f000, 77, 0, 0x4000);             // ours
  stack(0x200000, 0x21f000, 0, 0, 0x5000);              // copied by fork
  stack(0x300000, 0x31f000, 0, kExitingBit, 0x6000);    // ended by itself
  maps.push_back({0x400000, 0x420000, 0, "rw-p", "/lib/libc.so.6"});  // a file: not a stack
  auto scan = scan_thread_descriptors(mem, maps, f, {0x11f000});
  REQUIRE(scan.descriptors.size() == 2);
  CHECK(scan.descriptors[0].address == 0x21f000);
  CHECK_FALSE(scan.descriptors[0].exited);
  CHECK(scan.descriptors[0].start_routine == 0x5000);
  CHECK(scan.descriptors[1].exited);
  CHECK(scan.mappings_scanned == 2);  // our own thread's stack is not read at all
  // No descriptor fields: a reason, nothing found.
  auto none = scan_thread_descriptors(mem, maps, nptl::DescriptorsIssue{nptl::DescriptorsProblem::LibcNotMapped}, {});
  CHECK(none.descriptors.empty());
  CHECK(none.descriptors_problem.kind == nptl::DescriptorsProblem::LibcNotMapped);
}

TEST_CASE("/proc parser: smaps_rollup", "[fork]") {
  auto r = parse_smaps_rollup("55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:  4096 kB\nPrivate_Dirty:   1024 kB\nbad\n");
  CHECK(r["Rss"] == 4096);
  CHECK(r["Private_Dirty"] == 1024);
  CHECK(r.size() == 2);
}
