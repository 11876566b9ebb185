// Who may hold a lock that records no owner: the other threads whose frames
// reference a Lock a thread waits on, and (for a fork child's copy) what a
// process has at a lock's address — alive, locked, referenced by whom.
#include <catch2/catch.hpp>


#include "pyhang/cpython/locks.hpp"
#include "support/python_locks_world.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::World;
using pyhang::cpython::testing::tid_of;

TEST_CASE("a Lock waited on by one thread and referenced by another thread's frame names that thread and frame "
          "as suspect",
          "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr sem = w.sem();
    Addr lock = w.lock(sem, true);
    w.thread(w.frame("worker", "/app/work.py", {lock}, 0), 0x7f0000001000, 920);
    // the holder took the lock in `hold` (`with lock:` keeps lock.__exit__
    // on its stack) and is now in a callee that does not reference it
    Addr hold = w.frame("hold", "/app/work.py", {0, 0, 0, w.bound_method(lock)}, 0);
    Addr callee = w.frame("sleep_a_while", "/app/work.py", {w.lock(w.sem(), false)}, hold);
    w.thread(callee, 0x7f0000002000, 921);
    // a thread that references another lock only
    w.thread(w.frame("idle", "/app/work.py", {w.lock(w.sem(), true)}, 0), 0x7f0000003000, 922);
    auto st = w.inspect();
    int waiter = tid_of(w, 920, 0), holder = tid_of(w, 921, 1);

    auto r = w.wait(st, waiter, sem);
    CHECK(r.kind == PyLockKind::Lock);
    CHECK(r.owner_source == OwnerSource::Heuristic);
    CHECK(r.suspects == std::vector<int>{holder});
    REQUIRE(r.suspect_frames.size() == 1);
    CHECK(r.suspect_frames[0].frame == hold);
    CHECK(r.suspect_frames[0].function == "hold");
    CHECK(r.suspect_frames[0].file == "/app/work.py");

    // every thread's references read once (LockReferences) give the same answer
    auto mem = w.img.reader();
    LockReferences refs(mem, st);
    LockWaitOptions indexed;
    indexed.references = &refs;
    auto ri = find_python_lock_wait_memory(mem, st, waiter, sem, indexed);
    CHECK(ri.suspects == r.suspects);
    REQUIRE(ri.suspect_frames.size() == 1);
    CHECK(ri.suspect_frames[0].frame == hold);
    CHECK(ri.owner_source == OwnerSource::Heuristic);

    // not asked for: neither suspects nor their frames
    LockWaitOptions none;
    none.suspects = false;
    auto q = w.wait(st, waiter, sem, none);
    CHECK(q.suspects.empty());
    CHECK(q.suspect_frames.empty());
    CHECK(q.owner_source == OwnerSource::Unknown);
    // the holder's reference beyond the frames scanned: no suspect
    LockWaitOptions one;
    one.max_frames = 1;
    auto o = w.wait(st, waiter, sem, one);
    CHECK(o.suspects.empty());
    CHECK(o.suspect_frames.empty());
  }
}

TEST_CASE("lock_objects: a live locked Lock at an address names the threads referencing it; a freed block, another "
          "object or garbage there is no live lock",
          "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr held = w.lock(w.sem(), true);
    w.img.put<std::uint64_t>(held, w.ll.object_refcnt, 2);
    // a fork parent's holder: `with lock:` keeps lock.__exit__ on its stack; a callee sleeps
    Addr hold = w.frame("hold", "/app/server.py", {0, 0, 0, w.bound_method(held)}, 0);
    w.thread(w.frame("sleep_a_while", "/app/server.py", {}, hold), 0x7f0000002000, 921);
    w.thread(w.frame("idle", "/app/server.py", {}, 0), 0x7f0000003000, 922);
    // a Lock pymalloc freed: its first word is the free list's link (a block of the same mmap'ed arena), its
    // type and `locked` byte left as they were
    Addr freed = w.lock(w.sem(), true);
    w.img.put<Addr>(freed, w.ll.object_refcnt, 0x7f3a12345040);
    Addr released = w.lock(w.sem(), false);
    w.img.put<std::uint64_t>(released, w.ll.object_refcnt, 1);
    Addr other = w.dict("x", held);
    auto st = w.inspect();
    auto mem = w.img.reader();
    int holder = tid_of(w, 921, 0);

    auto found = lock_objects(mem, st, {held, freed, released, other, 0x10, 0xdead0000beef});
    REQUIRE(found.size() == 6);
    CHECK(found[0].object == held);
    CHECK(found[0].type_name == "_thread.lock");
    CHECK(found[0].alive);
    CHECK(found[0].locked == std::optional<bool>(true));
    REQUIRE(found[0].references.size() == 1);
    CHECK(found[0].references[0].first == holder);
    CHECK(found[0].references[0].second.function == "hold");
    CHECK(found[0].references[0].second.frame == hold);
    CHECK(found[1].type_name == "_thread.lock");
    CHECK_FALSE(found[1].alive);
    CHECK(found[2].alive);
    CHECK(found[2].locked == std::optional<bool>(false));
    CHECK(found[2].references.empty());
    for (std::size_t i = 3; i < found.size(); ++i) {
      CHECK(found[i].type_name.empty());
      CHECK_FALSE(found[i].alive);
      CHECK(found[i].references.empty());
    }
    // the last block of its pool's free list: the link is 0
    Addr last = w.lock(w.sem(), true);
    w.img.put<std::uint64_t>(last, w.ll.object_refcnt, 0);
    auto mem2 = w.img.reader();
    auto l = lock_objects(mem2, st, {last});
    REQUIRE(l.size() == 1);
    CHECK(l[0].type_name == "_thread.lock");
    CHECK_FALSE(l[0].alive);
    // an RLock: its owner's pthread_t, and the Python thread whose pthread_t that is
    Addr owned = w.rlock(w.sem(), 0x7f0000002000, 1);
    Addr orphan = w.rlock(w.sem(), 0x7f00000ff000, 1);
    auto mem3 = w.img.reader();
    auto r = lock_objects(mem3, st, {owned, orphan});
    REQUIRE(r.size() == 2);
    CHECK(r[0].type_name == "_thread.RLock");
    CHECK(r[0].locked == std::optional<bool>(true));
    CHECK(r[0].owner_thread_id == std::optional<std::uint64_t>(0x7f0000002000));
    CHECK(r[0].owner_tid == std::optional<int>(holder));
    CHECK(r[1].owner_thread_id == std::optional<std::uint64_t>(0x7f00000ff000));
    CHECK_FALSE(r[1].owner_tid);
    // the references read once for the process give the same answer
    LockReferences refs(mem, st);
    auto again = lock_objects(mem, st, {held}, &refs);
    REQUIRE(again.size() == 1);
    CHECK(again[0].references.size() == 1);
  }
}

TEST_CASE("3.14+: a lock left in a value-stack slot above the stack pointer the frame saved is no reference; "
          "below it, it is",
          "[cpython][pylocks]") {
  for (int minor = 14; minor <= 15; ++minor) {
    INFO("3." << minor);
    World w(minor);
    const Layout& l = w.l;
    REQUIRE(l.has(l.iframe_stackpointer));
    Addr held = w.lock(0, true);
    w.img.put<std::uint64_t>(held, w.ll.object_refcnt, 2);
    // `hold` has 3 locals, then its value stack: lock.__exit__ in the stack's second slot
    Addr hold = w.frame("hold", "/app/work.py", {0, 0, 0, 0x7, w.bound_method(held)}, 0);
    w.thread(hold, 0x7f0000002000, 931);
    const Addr stack = hold + static_cast<Addr>(l.iframe_localsplus) + 3 * 8;
    auto referencing_frames = [&](Addr sp) {
      w.img.put<Addr>(hold, l.iframe_stackpointer, sp);
      auto st = w.inspect();
      auto mem = w.img.reader();
      auto found = lock_objects(mem, st, {held});
      REQUIRE(found.size() == 1);
      CHECK(found[0].alive);
      std::vector<Addr> frames;
      for (const auto& r : found[0].references) frames.push_back(r.second.frame);
      return frames;
    };
    // THEN one slot live: the bound method above it is what an earlier instruction left there
    CHECK(referencing_frames(stack + 8).empty());
    // two live: it is the frame's
    CHECK(referencing_frames(stack + 16) == std::vector<Addr>{hold});
    // no stack pointer saved, or one outside the stack or not on a slot: every slot is read, as before 3.14
    CHECK(referencing_frames(0) == std::vector<Addr>{hold});
    CHECK(referencing_frames(stack + 3 * 8 + 64) == std::vector<Addr>{hold});
    CHECK(referencing_frames(stack + 4) == std::vector<Addr>{hold});
  }
}
