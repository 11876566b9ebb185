// Which layouts a glibc release gets (choose_layouts), from its version and
// its libc's thread descriptors; and the condition variable of glibc 2.41+,
// whose fields moved when __g_refs was removed.
#include <catch2/catch.hpp>

#include <cstring>

#include "glibc/kind_names.hpp"
#include "glibc/layout_tables.hpp"
#include "glibc/release_libcs.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/version.hpp"

using namespace pyhang;
using namespace pyhang::glibc;

namespace {

constexpr Addr kCond = 0x7f0000100000;

ThreadDb consistent_thread_db() {
  ThreadDb db;
  db.library = "libc.so.6";
  db.pthread_tid = DbDesc{32, 1, 720};
  db.pthread_dtvp = DbDesc{64, 1, 8};
  db.sizeof_pthread = 2368;
  db.const_thread_area = 25;
  return db;
}

GlibcVersion read_from_libc(int minor, std::optional<ThreadDb> db = consistent_thread_db()) {
  GlibcVersion v{2, minor, "2." + std::to_string(minor), "__nptl_version", true};
  v.thread_db = std::move(db);
  return v;
}

const Layouts& newest() { return all_layouts().back(); }

std::string newest_checked() {
  return std::to_string(newest().max_exclusive.first) + "." + std::to_string(newest().max_exclusive.second - 1);
}

// A pthread_cond_t image at kCond, 48 bytes of 32-bit words.
ImageReader cond_image(const std::vector<std::uint32_t>& words) {
  std::vector<std::uint8_t> bytes(256 + 48 + 256, 0);
  std::memcpy(bytes.data() + 256, words.data(), 4 * words.size());
  ImageReader r;
  r.add(kCond - 256, std::move(bytes));
  return r;
}

BlockedThread waiting_on(Addr futex, std::uint32_t value, std::vector<NativeFrame> frames = {}) {
  BlockedThread t;
  t.tid = 999;
  Registers regs;
  regs.r[15] = 202;  // orig_rax: futex
  regs.r[14] = futex;
  regs.r[13] = 0x189;  // FUTEX_WAIT_BITSET | FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME
  regs.r[12] = value;
  t.regs = regs;
  t.frames = std::move(frames);
  return t;
}

}  // namespace

TEST_CASE("glibc 2.41 and 2.43 get the 2.41+ layouts, checked, with no warning", "[glibc][releases]") {
  for (int minor : {41, 42, 43}) {
    auto c = choose_layouts(read_from_libc(minor));
    INFO(to_string(c.issue.kind));
    REQUIRE(c);
    CHECK(c.row->cond == &layouts::kCond241);
    CHECK(c.row->rwlock == &layouts::kRwlock225);
    CHECK(c.row->sem == &layouts::kSem64);
    CHECK_FALSE(c.issue);
  }
  // Without descriptors too: a release the row was checked against needs none.
  CHECK(layouts_for(GlibcVersion{2, 41, "2.41", "given", true}));
}

TEST_CASE("glibc 2.25 to 2.40 keep the condvar with __g_refs", "[glibc][releases]") {
  for (int minor : {25, 36, 40}) {
    const Layouts* row = layouts_for(read_from_libc(minor));
    REQUIRE(row);
    CHECK(row->cond == &layouts::kCond225);
  }
}

TEST_CASE("a release after the newest checked one gets the newest row and a warning naming it, on libc's word",
          "[glibc][releases]") {
  const int later = newest().max_exclusive.second;  // the first release not checked
  auto c = choose_layouts(read_from_libc(later));
  INFO(to_string(c.issue.kind));
  REQUIRE(c);
  CHECK(c.row == &newest());
  CHECK(c.issue.kind == LayoutsProblem::NewerThanChecked);
  CHECK(c.issue.version == "2." + std::to_string(later));
  CHECK(c.issue.exact);
  CHECK(c.issue.newest == newest_checked());
  CHECK(c.issue.layouts == "glibc 2.41+");
  CHECK(c.issue.library == "libc.so.6");
  auto far = choose_layouts(read_from_libc(later + 20));
  REQUIRE(far);
  CHECK(far.row == &newest());
}

TEST_CASE("a later release without descriptors that vouch is refused, saying which are missing",
          "[glibc][releases]") {
  const int later = newest().max_exclusive.second;
  SECTION("given by the user: no libc file was read") {
    auto given = choose_layouts(GlibcVersion{2, later, "2." + std::to_string(later), "given", true});
    REQUIRE_FALSE(given);
    CHECK(given.issue.kind == LayoutsProblem::Unvouched);
    CHECK(given.issue.newest == newest_checked());
    CHECK(given.issue.source == "given");
    CHECK(given.issue.library.empty());  // no libc file was read: no descriptors at all
    CHECK(given.issue.missing.empty());
  }
  SECTION("libc exports no size of struct pthread") {
    ThreadDb db = consistent_thread_db();
    db.sizeof_pthread.reset();
    auto r = choose_layouts(read_from_libc(later, db));
    REQUIRE_FALSE(r);
    CHECK(r.issue.kind == LayoutsProblem::Unvouched);
    CHECK(r.issue.layouts == "glibc 2.41+");
    CHECK(r.issue.library == "libc.so.6");
    CHECK(r.issue.missing == std::vector<std::string>{"_thread_db_sizeof_pthread"});
  }
}

TEST_CASE("descriptors that contradict the layouts refuse any release, naming the descriptor", "[glibc][releases]") {
  ThreadDb db = consistent_thread_db();
  db.pthread_tid = DbDesc{64, 1, 720};
  for (int minor : {36, 43, newest().max_exclusive.second}) {
    auto r = choose_layouts(read_from_libc(minor, db));
    REQUIRE_FALSE(r);
    CHECK(r.issue.kind == LayoutsProblem::Contradicted);
    CHECK(r.issue.version == "2." + std::to_string(minor));
    CHECK(r.issue.library == "libc.so.6");
    CHECK(r.issue.differs == std::vector<DescriptorIssue>{{DescriptorCheck::TidNotOneWord, {64, 1, 720}, 0, 0, 32}});
  }
}

TEST_CASE("a version only known as a lower bound in the newest row is treated as possibly later",
          "[glibc][releases]") {
  GlibcVersion v = read_from_libc(41);
  v.exact = false;
  v.source = "version-definitions";
  auto c = choose_layouts(v);
  REQUIRE(c);
  CHECK(c.row == &newest());
  CHECK(c.issue.kind == LayoutsProblem::NewerThanChecked);
  CHECK_FALSE(c.issue.exact);
  CHECK(c.issue.version == "2.41");
  CHECK(c.issue.source == "version-definitions");
  v.thread_db.reset();
  CHECK_FALSE(choose_layouts(v));
  // Below the newest row a lower bound is used as it is.
  GlibcVersion old = read_from_libc(34);
  old.exact = false;
  CHECK(choose_layouts(old));
}

TEST_CASE("a release older than every row is refused as before", "[glibc][releases]") {
  auto r = choose_layouts(read_from_libc(12));
  REQUIRE_FALSE(r);
  CHECK(r.issue.kind == LayoutsProblem::Outside);
  CHECK(r.issue.version == "2.12");
  CHECK(r.issue.oldest == "2.17");
  CHECK(r.issue.open_ended);
}

TEST_CASE("the newest sid and trixie libc files choose their rows from their own file", "[glibc][releases][release]") {
  int roots_read = 0;
  for (const char* root : pyhang::testing::kReleaseRoots) {
    INFO(root);
    auto libc = pyhang::testing::open_release_libc(root);
    if (!libc) continue;
    ++roots_read;
    auto v = detect_version(*libc);
    REQUIRE(v);
    auto c = choose_layouts(*v);
    INFO(to_string(c.issue.kind));
    REQUIRE(c);
    CHECK(c.row->cond == &layouts::kCond241);
    const bool checked = std::pair(v->major, v->minor) < newest().max_exclusive;
    CHECK(!c.issue == checked);
  }
  if (roots_read == 0) PYHANG_SKIP(pyhang::testing::no_release_roots());
}

// The words below are what Debian's glibc 2.41 and 2.43 hold (read from a
// running process): __wseq 2 for one waiter in group 0, __wrefs 8.
TEST_CASE("2.41+ condvar: the waiter count is in __wrefs at +28, not +36", "[glibc][releases][cond]") {
  auto one = cond_image({2, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0});
  auto c = decode_condvar(one, kCond, layouts::kCond241);
  INFO(names(c.problems));
  CHECK(c.plausible);
  CHECK(c.problems.empty());
  CHECK(c.waiters == 1u);
  CHECK(c.layout == "pthread_cond_t (glibc >= 2.41)");
  for (const auto& [name, value] : c.fields) CHECK(name.find("__g_refs") == std::string::npos);
  // Read with the 2.25-2.40 layout the same bytes count no waiter at all.
  CHECK(decode_condvar(one, kCond, layouts::kCond225).waiters == 0u);
}

TEST_CASE("2.41+ condvar: a waiter sleeping on __g_signals[0] (+32) is identified", "[glibc][releases][cond]") {
  auto mem = cond_image({4, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0});  // two waiters
  const Layouts& L = newest();
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  auto b = identify_blocked(mem, L, waiting_on(kCond + 32, 0, {{0x1, "pthread_cond_wait", libc, {}, 0x7f0000300000}}));
  INFO(names(b));
  CHECK(b.kind == WaitKind::Condvar);
  CHECK(b.address == kCond);
  CHECK(b.condvar_mutex == Addr{0x7f0000300000});
  CHECK(b.confidence == Confidence::Certain);
  REQUIRE(b.lock);
  CHECK(b.lock->waiters == 2u);
  // __g_signals[1] (+36) when the waiters went to group 1.
  auto g1 = identify_blocked(mem, L, waiting_on(kCond + 36, 0));
  CHECK(g1.kind == WaitKind::Condvar);
  CHECK(g1.address == kCond);
}

TEST_CASE("2.41+ condvar: __g1_start counts positions, its unused words stay zero", "[glibc][releases][cond]") {
  // After a signal with two waiters: __wseq 5 (position 2, G2 index 1),
  // __g_size[0] 1, __g1_orig_size 2 << 2, __wrefs 8.
  auto signalled = cond_image({5, 0, 0, 0, 1, 0, 8, 8, 0, 0, 0, 0});
  CHECK(decode_condvar(signalled, kCond, layouts::kCond241).plausible);
  // G1 at position 2 of 2 is fine; at 3 it starts after the last waiter.
  auto at_end = cond_image({5, 0, 2, 0, 1, 0, 8, 8, 2, 0, 0, 0});
  CHECK(decode_condvar(at_end, kCond, layouts::kCond241).plausible);
  auto past = cond_image({5, 0, 3, 0, 1, 0, 8, 8, 3, 0, 0, 0});
  auto p = decode_condvar(past, kCond, layouts::kCond241);
  CHECK_FALSE(p.plausible);
  CHECK(p.has(LockProblem::G1StartPastWseq));
  auto unused = cond_image({2, 0, 0, 0, 0, 0, 0, 8, 0, 0, 7, 0});
  auto u = decode_condvar(unused, kCond, layouts::kCond241);
  CHECK_FALSE(u.plausible);
  REQUIRE(u.problems.size() == 1);
  CHECK(u.problems[0] == LockIssue{LockProblem::UnusedNotZero, true, 40, 0});
}

TEST_CASE("condvar __wrefs flags: bit 0 process-shared, bit 1 CLOCK_MONOTONIC (nptl/pthreadP.h)",
          "[glibc][releases][cond]") {
  // pthread_cond_init with a PTHREAD_PROCESS_SHARED attribute sets __wrefs 1,
  // with CLOCK_MONOTONIC 2, on every 2.25+ release.
  auto shared = cond_image({0, 0, 0, 0, 0, 0, 0, 1 | 8, 0, 0, 0, 0});
  auto s = decode_condvar(shared, kCond, layouts::kCond241);
  CHECK(s.has(LockFlag::Pshared));
  CHECK_FALSE(s.has(LockFlag::ClockMonotonic));
  auto mono = cond_image({0, 0, 0, 0, 0, 0, 0, 0, 0, 2 | 8, 0, 0});
  auto m = decode_condvar(mono, kCond, layouts::kCond225);
  CHECK(m.has(LockFlag::ClockMonotonic));
  CHECK_FALSE(m.has(LockFlag::Pshared));
}

TEST_CASE("condvar __g_size may be negative in G2 after timed-out waiters", "[glibc][releases][cond]") {
  // One waiter in G2 (group 1) timed out: __g_size[1] went from 0 to -1.
  auto timed_out = cond_image({3, 0, 0, 0, 0, 0xffffffffu, 0, 8, 0, 0, 0, 0});
  auto c = decode_condvar(timed_out, kCond, layouts::kCond241);
  INFO(names(c.problems));
  CHECK(c.plausible);
  auto garbage = cond_image({3, 0, 0, 0, 0, 0x80000000u, 0, 8, 0, 0, 0, 0});
  CHECK_FALSE(decode_condvar(garbage, kCond, layouts::kCond241).plausible);
}
