// Decoders and identification over synthetic images, built field by field
// from glibc's struct definitions (see native/src/glibc/layouts.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "glibc/kind_names.hpp"
#include "glibc/layout_tables.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/elf.hpp"
#include "support/skip.hpp"

using namespace pyhang;
using namespace pyhang::glibc;

namespace {

constexpr Addr kBase = 0x7f0000100000;

// A zeroed object image with typed stores at byte offsets.
struct Obj {
  std::vector<std::uint8_t> b;
  explicit Obj(std::size_t n) : b(n, 0) {}
  Obj& u32(std::size_t off, std::uint32_t v) { std::memcpy(b.data() + off, &v, 4); return *this; }
  Obj& u64(std::size_t off, std::uint64_t v) { std::memcpy(b.data() + off, &v, 8); return *this; }
};

// Memory with `obj` at kBase and zeros around it.
ImageReader image(const Obj& obj) {
  ImageReader r;
  std::vector<std::uint8_t> bytes(256 + obj.b.size() + 256, 0);
  std::memcpy(bytes.data() + 256, obj.b.data(), obj.b.size());
  r.add(kBase - 256, std::move(bytes));
  return r;
}

Registers futex_regs(Addr futex, std::uint32_t op, std::uint32_t val) {
  Registers regs;
  regs.r[15] = 202;  // orig_rax
  regs.r[14] = futex;
  regs.r[13] = op;
  regs.r[12] = val;
  return regs;
}

BlockedThread blocked(Addr futex, std::uint32_t op, std::uint32_t val, std::vector<NativeFrame> frames = {}) {
  BlockedThread t;
  t.tid = 999;
  t.regs = futex_regs(futex, op, val);
  t.frames = std::move(frames);
  return t;
}

const Layouts& row(int minor) {
  const Layouts* l = layouts_for(GlibcVersion{2, minor, "", "", true});
  REQUIRE(l);
  return *l;
}

// pthread_mutex_t: __lock 0, __count 4, __owner 8, __nusers 12, __kind 16.
Obj mutex(std::uint32_t lock, std::uint32_t count, std::uint32_t owner, std::uint32_t nusers, std::uint32_t kind) {
  Obj o(40);
  o.u32(0, lock).u32(4, count).u32(8, owner).u32(12, nusers).u32(16, kind);
  return o;
}

}  // namespace

TEST_CASE("glibc version strings parse, and only glibc-looking ones", "[glibc]") {
  CHECK(parse_glibc_version("2.36")->minor == 36);
  CHECK(parse_glibc_version("2.17-326.el7")->minor == 17);
  CHECK(parse_glibc_version("2.39.9000")->text == "2.39");
  CHECK(parse_glibc_version("2.36.")->minor == 36);
  CHECK_FALSE(parse_glibc_version("3.11"));
  CHECK_FALSE(parse_glibc_version("2"));
  CHECK_FALSE(parse_glibc_version("2.x"));
  CHECK_FALSE(parse_glibc_version("2.36abc"));
  CHECK_FALSE(parse_glibc_version(""));
}

TEST_CASE("layout rows are chosen by version range; others are reported", "[glibc]") {
  CHECK(row(36).rwlock->scheme == RwlockScheme::Modern);
  CHECK(row(25).cond->scheme == CondScheme::Modern);
  CHECK(row(24).rwlock->scheme == RwlockScheme::Pre225);
  CHECK(row(24).sem == &layouts::kSem64);
  CHECK(row(17).sem == &layouts::kSemPre221);
  auto old = choose_layouts(GlibcVersion{2, 12, "2.12", "", true});
  REQUIRE_FALSE(old);
  CHECK(old.issue.kind == LayoutsProblem::Outside);
  CHECK(old.issue.version == "2.12");
  CHECK_FALSE(layouts_for(GlibcVersion{2, 60, "2.60", "", true}));
}

TEST_CASE("this machine's libc version is read from __nptl_version", "[glibc][elf]") {
  std::shared_ptr<ElfFile> libc;
  try {
    libc = ElfFile::open("/lib/x86_64-linux-gnu/libc.so.6");
  } catch (const std::exception& e) {
    PYHANG_SKIP("no libc.so.6 to read: " << e.what());
  }
  auto r = detect_version(*libc);
  REQUIRE(r);
  INFO(r->text << " from " << r->source);
  CHECK(r->exact);
  CHECK(r->major == 2);
  CHECK(r->minor >= 17);
  CHECK(layouts_for(*r));
}

TEST_CASE("mutex kinds decode with owner, recursion and flags", "[glibc][mutex]") {
  const auto& L = *row(36).mutex;
  SECTION("normal, contended (NO_ELISION flag as pthread_mutex_init sets it)") {
    auto mem = image(mutex(2, 0, 4555, 1, 512));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.kind == LockType::MutexNormal);
    CHECK(m.locked == true);
    CHECK(m.owners == std::vector<int>{4555});
    CHECK(m.owner_source == "__owner");
    CHECK(m.has(LockFlag::Waiters));
  }
  SECTION("recursive, locked three times") {
    auto mem = image(mutex(1, 3, 77, 1, 1));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.kind == LockType::MutexRecursive);
    CHECK(m.recursion == 3u);
    CHECK(m.owners == std::vector<int>{77});
  }
  SECTION("errorcheck and adaptive") {
    auto e = image(mutex(1, 0, 5, 1, 2));
    CHECK(decode_mutex(e, kBase, L).kind == LockType::MutexErrorcheck);
    auto a = image(mutex(1, 0, 5, 1, 3));
    CHECK(decode_mutex(a, kBase, L).kind == LockType::MutexAdaptive);
  }
  SECTION("unlocked normal mutex has no owner") {
    auto mem = image(mutex(0, 0, 0, 0, 0));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.locked == false);
    CHECK(m.owners.empty());
  }
  SECTION("locked without a recorded owner is plausible and says so") {
    auto mem = image(mutex(1, 0, 0, 0, 0));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.owners.empty());
    CHECK(m.locked == true);
  }
  SECTION("robust: owner TID in the lock word with FUTEX_WAITERS") {
    Obj o = mutex(0x80000000u | 4563, 1, 4563, 1, 656);
    o.u64(24, 0x7f7eb83dd0a0).u64(32, 0x7f7eb83dd0a0);
    auto mem = image(o);
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.owners == std::vector<int>{4563});
    CHECK(m.owner_source == "__lock");
    CHECK(m.has(LockFlag::Robust));
    CHECK(m.has(LockFlag::Pshared));
    CHECK(m.has(LockFlag::Waiters));
  }
  SECTION("robust whose owner died: released by the kernel, flagged") {
    auto mem = image(mutex(0xC0000000u, 1, 4563, 1, 16));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.locked == false);
    CHECK(m.has(LockFlag::OwnerDied));
  }
  SECTION("priority inheritance") {
    auto mem = image(mutex(0x80000000u | 4565, 1, 4565, 1, 544));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.has(LockFlag::Pi));
    CHECK(m.owners == std::vector<int>{4565});
  }
  SECTION("priority protect: ceiling in the upper bits of kind and lock") {
    auto mem = image(mutex((5u << 19) | 1, 0, 4600, 1, 64 | (5u << 19)));
    auto m = decode_mutex(mem, kBase, L);
    CHECK(m.plausible);
    CHECK(m.has(LockFlag::Pp));
    CHECK(m.owners == std::vector<int>{4600});
  }
  SECTION("garbage is implausible, never an exception") {
    auto k = image(mutex(1, 0, 5, 1, 0x12345));
    CHECK_FALSE(decode_mutex(k, kBase, L).plausible);
    auto d = image(mutex(0, 0, 0, 0, 0xffffffffu));
    auto dm = decode_mutex(d, kBase, L);
    CHECK_FALSE(dm.plausible);
    CHECK(dm.has(LockProblem::Destroyed));
    CHECK(dm.problems.front().fatal);
    auto o = image(mutex(1, 0, 0xfffffffbu, 1, 0));
    auto om = decode_mutex(o, kBase, L);
    CHECK_FALSE(om.plausible);
    INFO(names(om.problems));
    CHECK(std::find(om.problems.begin(), om.problems.end(), LockIssue{LockProblem::OwnerNotTid, true, -5, 0}) !=
          om.problems.end());
    auto lw = image(mutex(7, 0, 5, 1, 0));
    CHECK_FALSE(decode_mutex(lw, kBase, L).plausible);
    ImageReader empty;
    auto u = decode_mutex(empty, kBase, L);
    CHECK_FALSE(u.readable);
    CHECK_FALSE(u.plausible);
    CHECK(u.problems == std::vector<LockIssue>{{LockProblem::Unreadable, true, static_cast<std::int64_t>(kBase), 0}});
  }
}

TEST_CASE("rwlock 2.25+: write owner from __cur_writer, read-holders counted", "[glibc][rwlock]") {
  const auto& L = *row(36).rwlock;
  SECTION("write-held with a writer and a reader waiting") {
    auto mem = image(Obj(56).u32(0, 11).u32(8, 3).u32(12, 3).u32(24, 4567));
    auto r = decode_rwlock(mem, kBase, L);
    CHECK(r.plausible);
    CHECK(r.write_locked == true);
    CHECK(r.owners == std::vector<int>{4567});
    CHECK(r.owner_source == "__cur_writer");
    CHECK(r.readers == 0u);
    CHECK(r.has(LockFlag::ReadWaiters));
    CHECK(r.has(LockFlag::WriteWaiters));
  }
  SECTION("read-held by two with a writer waiting") {
    auto mem = image(Obj(56).u32(0, 18).u32(8, 2).u32(12, 1));
    auto r = decode_rwlock(mem, kBase, L);
    CHECK(r.plausible);
    CHECK(r.write_locked == false);
    CHECK(r.readers == 2u);
    CHECK(r.owners.empty());
  }
  SECTION("garbage") {
    auto pad = image(Obj(56).u32(16, 1));
    CHECK_FALSE(decode_rwlock(pad, kBase, L).plausible);
    auto flags = image(Obj(56).u32(48, 9));
    CHECK_FALSE(decode_rwlock(flags, kBase, L).plausible);
    auto fut = image(Obj(56).u32(8, 0x1234));
    CHECK_FALSE(decode_rwlock(fut, kBase, L).plausible);
  }
}

TEST_CASE("rwlock before 2.25 (case 5): __writer and queue counts", "[glibc][rwlock]") {
  const auto& L = *row(24).rwlock;
  SECTION("write-held, one reader and one writer queued") {
    auto mem = image(Obj(56).u32(16, 1).u32(20, 1).u32(24, 8123));
    auto r = decode_rwlock(mem, kBase, L);
    CHECK(r.plausible);
    CHECK(r.owners == std::vector<int>{8123});
    CHECK(r.owner_source == "__writer");
    CHECK(r.read_waiters == 1u);
    CHECK(r.write_waiters == 1u);
  }
  SECTION("read-held by three") {
    auto mem = image(Obj(56).u32(4, 3).u32(20, 1));
    auto r = decode_rwlock(mem, kBase, L);
    CHECK(r.plausible);
    CHECK(r.readers == 3u);
    CHECK(r.owners.empty());
  }
  SECTION("both write- and read-held is garbage") {
    auto mem = image(Obj(56).u32(4, 3).u32(24, 8123));
    CHECK_FALSE(decode_rwlock(mem, kBase, L).plausible);
  }
}

TEST_CASE("semaphores in both layouts", "[glibc][sem]") {
  SECTION("64-bit data: value 0, one waiter") {
    auto mem = image(Obj(32).u64(0, 1ull << 32));
    auto s = decode_semaphore(mem, kBase, *row(36).sem);
    CHECK(s.plausible);
    CHECK(s.value == 0u);
    CHECK(s.waiters == 1u);
    CHECK(s.owners.empty());
  }
  SECTION("pre-2.21: value, private, 8-byte nwaiters") {
    auto mem = image(Obj(32).u32(0, 0).u64(8, 2));
    auto s = decode_semaphore(mem, kBase, *row(17).sem);
    CHECK(s.plausible);
    CHECK(s.waiters == 2u);
  }
  SECTION("garbage") {
    auto mem = image(Obj(32).u64(0, 0x90000000ull).u32(8, 77));
    CHECK_FALSE(decode_semaphore(mem, kBase, *row(36).sem).plausible);
  }
}

TEST_CASE("condvars: waiter count; the mutex only in the old layout", "[glibc][cond]") {
  SECTION("2.25+: one waiter in group 0") {
    auto mem = image(Obj(48).u64(0, 2).u32(16, 2).u32(36, 8));
    auto c = decode_condvar(mem, kBase, *row(36).cond);
    CHECK(c.plausible);
    CHECK(c.waiters == 1u);
    CHECK_FALSE(c.mutex);
  }
  SECTION("pre-2.25: __mutex recorded") {
    auto mem = image(Obj(48).u32(4, 1).u64(8, 1).u64(32, 0x7f0000200000).u32(40, 2));
    auto c = decode_condvar(mem, kBase, *row(24).cond);
    CHECK(c.plausible);
    CHECK(c.waiters == 1u);
    CHECK(c.mutex == Addr{0x7f0000200000});
  }
  SECTION("garbage") {
    auto mem = image(Obj(48).u64(0, 2).u64(8, 100));
    CHECK_FALSE(decode_condvar(mem, kBase, *row(36).cond).plausible);
    auto old = image(Obj(48).u64(8, 1).u64(16, 5));
    CHECK_FALSE(decode_condvar(old, kBase, *row(24).cond).plausible);
  }
}

TEST_CASE("frame names give hints, normalised", "[glibc][identify]") {
  CHECK(frame_hint("___pthread_mutex_lock") == WaitKind::Mutex);
  CHECK(frame_hint("__GI___pthread_mutex_lock") == WaitKind::Mutex);
  CHECK(frame_hint("__lll_lock_wait") == WaitKind::Mutex);
  CHECK(frame_hint("__lll_lock_wait_private") == WaitKind::GlibcInternalLock);
  CHECK(frame_hint("__pthread_rwlock_wrlock_full64") == WaitKind::RwlockWrite);
  CHECK(frame_hint("pthread_rwlock_rdlock@@GLIBC_2.34") == WaitKind::RwlockRead);
  CHECK(frame_hint("__new_sem_wait_slow64") == WaitKind::Semaphore);
  CHECK(frame_hint("do_futex_wait") == WaitKind::Semaphore);
  CHECK(frame_hint("__pthread_cond_wait_common") == WaitKind::Condvar);
  CHECK(frame_hint("__futex_abstimed_wait_common") == WaitKind::Futex);
  CHECK(frame_hint("??") == WaitKind::None);
  CHECK(frame_hint("") == WaitKind::None);
  CHECK(frame_hint("PyEval_EvalFrameDefault") == WaitKind::None);
}

TEST_CASE("a blocked thread's futex identifies its lock", "[glibc][identify]") {
  const Layouts& L = row(36);
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";

  SECTION("mutex, registers only: likely; with frame names: certain") {
    auto mem = image(mutex(2, 0, 4555, 1, 512));
    auto b = identify_blocked(mem, L, blocked(kBase, 0x80, 2));
    CHECK(b.kind == WaitKind::Mutex);
    CHECK(b.address == kBase);
    CHECK(b.owners == std::vector<int>{4555});
    CHECK(b.owner_source == OwnerSource::LockWord);
    CHECK(b.confidence == Confidence::Likely);
    auto c = identify_blocked(mem, L, blocked(kBase, 0x80, 2, {{0x1, "", libc, {}, {}}, {0x2, "pthread_mutex_lock", libc, {}, {}}}));
    CHECK(c.kind == WaitKind::Mutex);
    CHECK(c.confidence == Confidence::Certain);
    CHECK(c.owners == std::vector<int>{4555});
    // how: the futex call and the frame's name, and the winner's reasons as kinds with their points
    CHECK(c.evidence == Evidence::FutexCall);
    CHECK(c.hint == WaitKind::Mutex);
    CHECK(c.problem == IdentifyProblem::None);
    REQUIRE_FALSE(c.candidates.empty());
    const Candidate& best = c.candidates.front();
    INFO(names(best.reasons));
    CHECK(best.reasons == std::vector<Reason>{{ScoreReason::Plausible, 3},
                                              {ScoreReason::Locked, 3},
                                              {ScoreReason::HasWaiters, 2},
                                              {ScoreReason::OwnerRecorded, 2},
                                              {ScoreReason::WordUnchanged, 1},
                                              {ScoreReason::FrameName, 5, WaitKind::Mutex}});
    int sum = 0;
    for (const Reason& r : best.reasons) sum += r.points;
    CHECK(sum == best.score);
    // the bare futex word is a candidate too, and scores only its own reason
    auto bare = std::find_if(c.candidates.begin(), c.candidates.end(),
                             [](const Candidate& k) { return k.kind == WaitKind::Futex; });
    REQUIRE(bare != c.candidates.end());
    CHECK(bare->reasons == std::vector<Reason>{{ScoreReason::FutexWord, 3}});
  }
  SECTION("a word that changed since the wait began and an unlocked mutex lose points") {
    auto mem = image(mutex(0, 0, 0, 0, 0));
    auto b = identify_blocked(mem, L, blocked(kBase, 0x80, 2));
    auto m = std::find_if(b.candidates.begin(), b.candidates.end(),
                          [](const Candidate& k) { return k.kind == WaitKind::Mutex && k.address == kBase; });
    REQUIRE(m != b.candidates.end());
    INFO(names(m->reasons));
    CHECK(m->has(ScoreReason::Unlocked));
    CHECK(m->has(ScoreReason::WordChanged));
    CHECK_FALSE(m->has(ScoreReason::Locked));
  }
  SECTION("PI mutex via FUTEX_LOCK_PI") {
    auto mem = image(mutex(0x80000000u | 4565, 1, 4565, 1, 544));
    auto b = identify_blocked(mem, L, blocked(kBase, 0x86, 0));
    CHECK(b.kind == WaitKind::Mutex);
    CHECK(b.owners == std::vector<int>{4565});
    CHECK(b.confidence == Confidence::Certain);
    CHECK(b.candidates.front().has(ScoreReason::LockPiOnPi));
  }
  SECTION("rwlock: writer on __writers_futex, reader on __wrphase_futex") {
    auto mem = image(Obj(56).u32(0, 11).u32(8, 3).u32(12, 3).u32(24, 4567));
    auto w = identify_blocked(mem, L, blocked(kBase + 12, 0x189, 3));
    CHECK(w.kind == WaitKind::RwlockWrite);
    CHECK(w.address == kBase);
    CHECK(w.owners == std::vector<int>{4567});
    auto r = identify_blocked(mem, L, blocked(kBase + 8, 0x189, 3));
    CHECK(r.kind == WaitKind::RwlockRead);
    CHECK(r.address == kBase);
    CHECK(r.owners == std::vector<int>{4567});
  }
  SECTION("rwlock read-held: the writer waits, owners unknown, readers counted") {
    auto mem = image(Obj(56).u32(0, 18).u32(8, 2).u32(12, 1));
    auto w = identify_blocked(mem, L, blocked(kBase + 8, 0x189, 2, {{0x1, "pthread_rwlock_wrlock", libc, {}, {}}}));
    CHECK(w.kind == WaitKind::RwlockWrite);
    CHECK(w.address == kBase);
    CHECK(w.owners.empty());
    CHECK(w.owner_source == OwnerSource::Unknown);
    REQUIRE(w.lock);
    CHECK(w.lock->readers == 2u);
  }
  SECTION("old rwlock layout (case 5): writer on __writer_wakeup") {
    auto mem = image(Obj(56).u32(12, 4).u32(20, 1).u32(24, 8123));
    auto w = identify_blocked(mem, row(24), blocked(kBase + 12, 0x80, 4, {{0x1, "pthread_rwlock_wrlock", libc, {}, {}}}));
    CHECK(w.kind == WaitKind::RwlockWrite);
    CHECK(w.address == kBase);
    CHECK(w.owners == std::vector<int>{8123});
    CHECK(w.confidence == Confidence::Certain);
  }
  SECTION("semaphore") {
    auto mem = image(Obj(32).u64(0, 1ull << 32));
    auto s = identify_blocked(mem, L, blocked(kBase, 0x189, 0));
    CHECK(s.kind == WaitKind::Semaphore);
    CHECK(s.address == kBase);
    CHECK(s.owners.empty());
  }
  SECTION("condvar, with the mutex from pthread_cond_wait's frame") {
    auto mem = image(Obj(48).u64(0, 2).u32(16, 2).u32(36, 8));
    auto c = identify_blocked(mem, L,
                              blocked(kBase + 40, 0x189, 0, {{0x1, "pthread_cond_wait", libc, {}, 0x7f0000300000}}));
    CHECK(c.kind == WaitKind::Condvar);
    CHECK(c.address == kBase);
    CHECK(c.condvar_mutex == Addr{0x7f0000300000});
    auto n = identify_blocked(mem, L, blocked(kBase + 40, 0x189, 0));
    CHECK(n.kind == WaitKind::Condvar);
    CHECK_FALSE(n.condvar_mutex);
  }
  SECTION("a lone futex word matches no layout") {
    auto mem = image(Obj(4));
    auto f = identify_blocked(mem, L, blocked(kBase, 0x80, 0));
    CHECK(f.kind == WaitKind::Futex);
    CHECK(f.futex == kBase);
    CHECK(f.owners.empty());
  }
  SECTION("unreadable futex word and no syscall are one-line problems") {
    ImageReader empty;
    auto u = identify_blocked(empty, L, blocked(kBase, 0x80, 0));
    CHECK(u.kind == WaitKind::Futex);
    CHECK(u.problem == IdentifyProblem::FutexUnreadable);
    CHECK(u.futex == kBase);
    BlockedThread t;
    t.regs = Registers{};
    t.regs->r[15] = 7;  // poll
    auto p = identify_blocked(empty, L, t);
    CHECK(p.kind == WaitKind::None);
    CHECK(p.problem == IdentifyProblem::NotFutexWait);
    CHECK(p.syscall == 7);
    CHECK(p.evidence == Evidence::None);
    BlockedThread no_regs;
    CHECK(identify_blocked(empty, L, no_regs).problem == IdentifyProblem::NoRegisters);
  }
  SECTION("not in a syscall: the lock function's recovered rdi") {
    auto mem = image(mutex(2, 0, 4555, 1, 0));
    BlockedThread t;
    t.frames = {{0x1, "pthread_mutex_lock", libc, kBase, {}}};
    auto b = identify_blocked(mem, L, t);
    CHECK(b.kind == WaitKind::Mutex);
    CHECK(b.owners == std::vector<int>{4555});
    CHECK(b.evidence == Evidence::LockArgument);
    CHECK(b.hint == WaitKind::Mutex);
  }
}

TEST_CASE("a futex wait resumed through restart_syscall is read as that wait", "[glibc][identify]") {
  const Layouts& L = row(36);
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  auto resumed = [](Addr futex, std::uint32_t op, std::uint32_t val, std::vector<NativeFrame> frames = {}) {
    BlockedThread t = blocked(futex, op, val, std::move(frames));
    t.regs->r[15] = 219;  // orig_rax: restart_syscall, the wait's arguments still in rdi, rsi, rdx
    return t;
  };
  auto mem = image(mutex(2, 0, 4555, 1, 512));
  SECTION("the word still holds the value the wait expected: the wait, resumed") {
    auto b = identify_blocked(mem, L, resumed(kBase, 0x80, 2));
    CHECK(b.kind == WaitKind::Mutex);
    CHECK(b.owners == std::vector<int>{4555});
    CHECK(b.restarted);
  }
  SECTION("a frame named like a lock function says so even when the word moved on") {
    auto b = identify_blocked(mem, L, resumed(kBase, 0x80, 7, {{0x2, "__pthread_mutex_lock", libc, {}, {}}}));
    CHECK(b.kind == WaitKind::Mutex);
    CHECK(b.restarted);
  }
  SECTION("a resumed sleep is no futex: its arguments are no wait's, or its word does not match") {
    // clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts): rdi 1 is no aligned word
    auto sleep = identify_blocked(mem, L, resumed(1, 1, 0));
    CHECK(sleep.kind == WaitKind::None);
    CHECK_FALSE(sleep.restarted);
    // nanosleep(&ts, NULL): rsi 0 reads as FUTEX_WAIT, but rdx is no value the word holds
    auto nano = identify_blocked(mem, L, resumed(kBase, 0, 0x12345));
    CHECK(nano.kind == WaitKind::None);
    CHECK(nano.problem == IdentifyProblem::NotFutexWait);
    CHECK(nano.syscall == 219);
  }
}

TEST_CASE("without __nptl_version, the banner, then version definitions give the version", "[glibc][elf]") {
  std::shared_ptr<FileImage> file;
  try {
    file = FileImage::map("/lib/x86_64-linux-gnu/libc.so.6");
  } catch (const std::exception& e) {
    PYHANG_SKIP("no libc.so.6 to read: " << e.what());
  }
  auto all = file->bytes(0, file->size());
  std::vector<std::uint8_t> bytes(all.begin(), all.end());
  auto patch = [&](std::string_view from, std::string_view to) {
    for (std::size_t i = 0; i + from.size() <= bytes.size(); ++i)
      if (std::memcmp(bytes.data() + i, from.data(), from.size()) == 0) std::memcpy(bytes.data() + i, to.data(), to.size());
  };
  patch("__nptl_version", "__nptl_versioX");
  auto banner = detect_version(*ElfFile::from_image(FileImage::from_bytes(bytes, "libc.so.6")));
  REQUIRE(banner);
  CHECK(banner->source == "banner");
  CHECK(banner->exact);
  patch("release version", "release versioX");
  auto verdef = detect_version(*ElfFile::from_image(FileImage::from_bytes(bytes, "libc.so.6")));
  REQUIRE(verdef);
  CHECK(verdef->source == "version-definitions");
  CHECK_FALSE(verdef->exact);
  CHECK(verdef->minor <= banner->minor);
  CHECK(verdef->minor >= banner->minor - 3);
}
