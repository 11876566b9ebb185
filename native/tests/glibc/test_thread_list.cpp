// Every thread's struct pthread from glibc's lists (_dl_stack_used,
// _dl_stack_user) in target memory: this process's threads, read as a live
// target nobody stopped, are exactly /proc/self/task with their
// pthread_self(); the descriptors exist in Debian's 2.36, 2.41 and newest
// glibc; garbage lists stop, bounded, saying why.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <random>

#include "glibc/release_libcs.hpp"
#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/thread_db.hpp"
#include "pyhang/glibc/thread_list.hpp"
#include "pyhang/target/target.hpp"
#include "support/parked_threads.hpp"

using namespace pyhang;
using namespace pyhang::glibc;
using namespace pyhang::testing;

// ------------------------------------------------------------- live ----

TEST_CASE("the thread lists of this process hold exactly its TIDs, each at its pthread_self and fs_base",
          "[glibc][thread_list][live]") {
  ParkedThreads parked({ParkIn::Futex, ParkIn::Futex, ParkIn::PipeRead, ParkIn::Nanosleep});
  REQUIRE(parked.threads().size() == 4);
  REQUIRE(parked.wait_parked());
  auto target = Target::live(::getpid());

  auto layout = thread_list_layout(target->space(), target->memory());
  REQUIRE(layout);
  REQUIRE(layout->heads.size() == 2);
  CHECK(layout->heads[0].name == "_dl_stack_used");
  CHECK(layout->heads[1].name == "_dl_stack_user");

  const ThreadList list = thread_list(*target);
  CHECK_FALSE(list.problem);
  std::set<int> found;
  for (auto& [tid, pd] : list.threads) found.insert(tid);
  CHECK(found == own_tids());
  for (const auto& t : parked.threads()) {
    REQUIRE(list.threads.count(t->tid));
    CHECK(list.threads.at(t->tid) == t->self);
    CHECK(list.threads.at(t->tid) == t->fs_base);  // x86_64: the thread pointer is the struct pthread
  }
  // The main thread is on _dl_stack_user, in its static TLS.
  REQUIRE(list.threads.count(::getpid()));
  if (::getpid() == static_cast<pid_t>(::gettid()))
    CHECK(list.threads.at(::getpid()) == static_cast<Addr>(pthread_self()));
}

TEST_CASE("Debian's glibc 2.36, 2.41 and newest export the descriptors of the thread lists",
          "[glibc][thread_list]") {
  auto check = [](const ElfFile& libc) {
    const ThreadDb db = read_thread_db(libc);
    REQUIRE(db.pthread_list);
    CHECK(*db.pthread_list == DbDesc{128, 1, 704});
    REQUIRE(db.rtld_global_dl_stack_used);
    REQUIRE(db.rtld_global_dl_stack_user);
    CHECK(db.rtld_global_dl_stack_used->size_bits == 128);
    // _dl_stack_user follows _dl_stack_used in struct rtld_global.
    CHECK(db.rtld_global_dl_stack_user->offset == db.rtld_global_dl_stack_used->offset + 16);
  };
  auto target = Target::live(::getpid());
  const LoadedObject* own = find_library(target->space(), Library::Libc);
  REQUIRE(own);
  REQUIRE(own->elf);
  check(*own->elf);
  for (const char* root : {"trixie", "sid"})
    if (auto libc = open_release_libc(root)) {
      INFO(root);
      check(*libc);
    }
}

// -------------------------------------------------------- synthetic ----

namespace {

constexpr Addr kHeads = 0x600000;  // _dl_stack_used at +0, _dl_stack_user at +16
constexpr Addr kPthreads = 0x7f0000100000;
constexpr std::uint32_t kList = 704, kTid = 720, kSize = 2368;

// Struct pthreads and two list heads, linked as the test says.
struct Lists {
  std::map<Addr, std::vector<std::uint8_t>> blocks;
  ThreadListLayout layout;

  Lists() {
    blocks[kHeads] = std::vector<std::uint8_t>(32, 0);
    layout.heads = {{"_dl_stack_used", kHeads}, {"_dl_stack_user", kHeads + 16}};
    layout.list_offset = kList;
    layout.tid_offset = kTid;
  }
  static Addr pd(int i) { return kPthreads + static_cast<Addr>(i) * 0x1000; }
  static Addr entry(int i) { return pd(i) + kList; }
  void put(Addr at, std::uint64_t v, std::size_t n = 8) {
    for (auto& [base, bytes] : blocks)
      if (at >= base && at + n <= base + bytes.size()) {
        std::memcpy(bytes.data() + (at - base), &v, n);
        return;
      }
    FAIL("no block at " << at);
  }
  void thread(int i, std::int32_t tid) {
    blocks[pd(i)] = std::vector<std::uint8_t>(kSize, 0);
    put(pd(i), pd(i));
    put(pd(i) + 16, pd(i));
    put(pd(i) + kTid, static_cast<std::uint32_t>(tid), 4);
  }
  // A circular list through `head` of the given threads, in order.
  void link(Addr head, std::vector<int> threads) {
    std::vector<Addr> nodes{head};
    for (int i : threads) nodes.push_back(entry(i));
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      put(nodes[k], nodes[(k + 1) % nodes.size()]);
      put(nodes[k] + 8, nodes[(k + nodes.size() - 1) % nodes.size()]);
    }
  }
  ThreadList walk(std::size_t max = kMaxThreads) {
    ImageReader memory;
    for (auto& [base, bytes] : blocks) memory.add(base, bytes);
    return walk_thread_lists(memory, layout, max);
  }
};

}  // namespace

TEST_CASE("both lists are walked: every TID with its struct pthread, exited threads counted apart",
          "[glibc][thread_list]") {
  Lists l;
  for (int i = 0; i < 4; ++i) l.thread(i, 100 + i);
  l.thread(4, 0);  // exited, not joined: the kernel cleared its tid
  l.link(kHeads, {1, 2, 4, 3});
  l.link(kHeads + 16, {0});
  const ThreadList list = l.walk();
  CHECK_FALSE(list.problem);
  CHECK(list.threads == std::map<int, Addr>{{100, Lists::pd(0)}, {101, Lists::pd(1)}, {102, Lists::pd(2)},
                                            {103, Lists::pd(3)}});
  CHECK(list.without_tid == 1);

  SECTION("empty lists") {
    Lists e;
    e.link(kHeads, {});
    e.link(kHeads + 16, {});
    const ThreadList none = e.walk();
    CHECK_FALSE(none.problem);
    CHECK(none.threads.empty());
  }
}

TEST_CASE("a garbage thread list stops at the first bad entry and says why", "[glibc][thread_list]") {
  Lists l;
  for (int i = 0; i < 4; ++i) l.thread(i, 100 + i);
  l.link(kHeads + 16, {0});
  auto stops_with = [&](ThreadListProblem why) {
    const ThreadList list = l.walk();
    INFO(to_string(list.problem.kind));
    CHECK(list.problem.kind == why);
    CHECK(list.problem.head == "_dl_stack_used");
    return list;
  };
  SECTION("a cycle that misses its head") {
    l.link(kHeads, {1, 2, 3});
    l.put(Lists::entry(3), Lists::entry(2));  // 3 -> 2 again, prev pointers consistent with the first pass
    l.put(Lists::entry(2) + 8, Lists::entry(1));
    const ThreadList list = stops_with(ThreadListProblem::SeenBefore);
    CHECK(list.threads.size() == 3);  // 101..103, found before the cycle closed
    CHECK(list.problem.entry == Lists::entry(2));
    CHECK(list.problem.step == 3);
  }
  SECTION("a prev pointer that does not point back (a list changing under the read)") {
    l.link(kHeads, {1, 2, 3});
    l.put(Lists::entry(2) + 8, Lists::entry(3));
    const ThreadList list = stops_with(ThreadListProblem::PrevMismatch);
    CHECK(list.problem.value == Lists::entry(3));
    CHECK(list.problem.expected == Lists::entry(1));
  }
  SECTION("a next pointer into unreadable memory") {
    l.link(kHeads, {1, 2});
    l.put(Lists::entry(2), 0x7e0000000000);
    l.put(Lists::entry(2) + 8, Lists::entry(1));
    CHECK(stops_with(ThreadListProblem::PrevUnreadable).problem.entry == 0x7e0000000000);
  }
  SECTION("an entry that is no struct pthread") {
    l.link(kHeads, {1, 2});
    l.put(Lists::pd(2) + 16, 0x1234);
    CHECK(stops_with(ThreadListProblem::NotPthread).problem.pthread == Lists::pd(2));
  }
  SECTION("null, misaligned and kernel pointers") {
    for (Addr bad : {Addr{0}, Lists::entry(1) + 4, Addr{0xffff800000001000}}) {
      l.link(kHeads, {1});
      l.put(Lists::entry(1), bad);
      CHECK(stops_with(ThreadListProblem::NotAnEntry).problem.entry == bad);
    }
  }
  SECTION("one TID twice") {
    l.link(kHeads, {1, 2});
    l.put(Lists::pd(2) + kTid, 101, 4);
    const ThreadList list = stops_with(ThreadListProblem::TidTwice);
    CHECK(list.problem.number == 101);
    CHECK(list.problem.value == Lists::pd(1));
    CHECK(list.problem.pthread == Lists::pd(2));
  }
  SECTION("more entries than the bound") {
    l.link(kHeads, {1, 2, 3});
    const ThreadList list = l.walk(3);  // 3 on _dl_stack_used, the 4th (on _dl_stack_user) is over
    CHECK(list.problem.kind == ThreadListProblem::TooManyEntries);
    CHECK(list.problem.number == 3);
    CHECK(list.problem.head == "_dl_stack_user");
  }
}

TEST_CASE("random bytes for thread lists end with a problem, never a hang or a crash", "[glibc][thread_list]") {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 200; ++round) {
    Lists l;
    for (int i = 0; i < 6; ++i) l.thread(i, 100 + i);
    l.link(kHeads, {0, 1, 2, 3, 4, 5});
    l.link(kHeads + 16, {});
    // Pointers at random: into the struct pthreads, the heads, anywhere.
    for (int n = 0; n < 6; ++n) {
      const Addr at = round % 2 ? Lists::entry(static_cast<int>(rng() % 6)) + (rng() % 2) * 8
                                : kHeads + (rng() % 4) * 8;
      const Addr kinds[] = {Lists::entry(static_cast<int>(rng() % 6)), kHeads + (rng() % 2) * 16, rng(), 0};
      l.put(at, kinds[rng() % 4]);
    }
    const ThreadList list = l.walk(64);
    CHECK(list.threads.size() <= 6);
  }
}
