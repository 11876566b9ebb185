// The Python lock a blocked thread waits on, on synthetic memory images laid
// out with the generated tables and the hand-written lock object table:
// locks in a frame's locals, bound methods on its stack, RLock owners,
// a Condition's _lock from its instance dict, joins; the internal lock of
// buffered I/O objects and its recorded owner; garbage gives nothing.
#include <catch2/catch.hpp>

#include <random>

#include "pyhang/cpython/locks.hpp"
#include "support/python_locks_world.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::World;
using pyhang::cpython::testing::tid_of;

using namespace pyhang::cpython::testing;

TEST_CASE("a Lock in a frame's locals whose sem_t holds the futex is found, in every version", "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr sem = w.sem();
    Addr lock = w.lock(sem, true);
    Addr other = w.lock(w.sem(), false);
    // waiter: `lock` in local 1 (local 0 is another, free lock)
    Addr outer = w.frame("main", "/app/main.py", {}, 0);
    Addr waiter_top = w.frame("worker", "/app/work.py", {other, lock, 0x7}, outer);
    w.thread(waiter_top, 0x7f0000001000, 4242);
    // holder: `with lock:` keeps lock.__exit__ (a bound method) on its stack
    Addr holder_top = w.frame("hold", "/app/work.py", {0, 0, 0, w.bound_method(lock)}, 0);
    w.thread(holder_top, 0x7f0000002000, 4243);
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 2);
    int waiter = tid_of(w, 4242, 0), holder = tid_of(w, 4243, 1);

    auto r = w.wait(st, waiter, sem);
    CHECK(r.kind == PyLockKind::Lock);
    CHECK(r.confidence == Confidence::Certain);
    CHECK(r.object == lock);
    CHECK(r.type_name == "_thread.lock");
    CHECK(r.wait_address == sem);
    CHECK(r.locked == std::optional<bool>(true));
    CHECK(!r.owner_tid);
    CHECK(r.owner_source == OwnerSource::Heuristic);
    CHECK(r.suspects == std::vector<int>{holder});
    CHECK(r.frame_function == "worker");
    CHECK(r.problem.empty());

    // the futex word anywhere inside the sem_t (value at +0, waiters at +4)
    CHECK(w.wait(st, waiter, sem + 4).object == lock);
    // a futex no lock of the frames explains
    auto none = w.wait(st, waiter, sem + 4096);
    CHECK(none.kind == PyLockKind::None);
    CHECK(!none.problem.empty());
    // unknown thread
    CHECK(!w.wait(st, 999999, sem).problem.empty());
    // no futex: a guess, the innermost lock object
    auto guess = w.wait(st, waiter, std::nullopt);
    CHECK(guess.confidence == Confidence::Guess);
    CHECK(guess.object == other);
  }
}

TEST_CASE("an RLock's owner and count come from the lock object, the owner's TID from its thread state",
          "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr sem = w.sem();
    const std::uint64_t owner_pthread = 0x7f0000005000;
    Addr rlock = w.rlock(sem, owner_pthread, 2);
    w.thread(w.frame("acquire_it", "/app/a.py", {0, 0, 0, w.bound_method(rlock)}, 0), 0x7f0000004000, 500);
    w.thread(w.frame("own_it", "/app/a.py", {}, 0), owner_pthread, 501);
    auto st = w.inspect();
    auto r = w.wait(st, tid_of(w, 500, 0), sem);
    CHECK(r.kind == PyLockKind::RLock);
    CHECK(r.object == rlock);
    CHECK(r.owner_thread_id == std::optional<std::uint64_t>(owner_pthread));
    CHECK(r.owner_tid == std::optional<int>(tid_of(w, 501, 1)));
    CHECK(r.count == std::optional<std::uint64_t>(2));
    CHECK(r.owner_source == OwnerSource::LockWord);
    CHECK(r.suspects.empty());
  }
}

TEST_CASE("Condition.wait: the waiter lock, the Condition and its _lock from the instance dict", "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    const std::uint64_t owner_pthread = 0x7f0000007000;
    Addr cond_lock = w.rlock(w.sem(), owner_pthread, 1);
    Addr cond = w.condition(cond_lock);
    Addr sem = w.sem();
    Addr waiter = w.lock(sem, true);
    std::string fn = w.method("Condition", "wait");
    w.thread(w.frame(fn, "/usr/lib/python3/threading.py", {cond, 0, waiter}, 0), 0x7f0000006000, 600);
    w.thread(w.frame("notify_later", "/app/a.py", {}, 0), owner_pthread, 601);
    auto st = w.inspect();
    auto r = w.wait(st, tid_of(w, 600, 0), sem);
    CHECK(r.kind == PyLockKind::Condition);
    CHECK(r.object == waiter);
    CHECK(r.condition == cond);
    CHECK(r.condition_lock == cond_lock);
    CHECK(r.condition_lock_type == "_thread.RLock");
    CHECK(r.condition_lock_owner_tid == std::optional<int>(tid_of(w, 601, 1)));
    CHECK(r.condition_lock_count == std::optional<std::uint64_t>(1));
    CHECK(r.problem.empty());

    // a `self` that is no Condition: the wait is still reported, with a problem
    World v(minor);
    Addr sem2 = v.sem();
    Addr waiter2 = v.lock(sem2, true);
    v.thread(v.frame(fn, "/usr/lib/python3/threading.py", {v.img.str("self?"), 0, waiter2}, 0), 0x7f0000006000, 600);
    auto st2 = v.inspect();
    auto r2 = v.wait(st2, tid_of(v, 600, 0), sem2);
    CHECK(r2.kind == PyLockKind::Condition);
    CHECK(r2.condition == 0);
    CHECK(!r2.problem.empty());
  }
}

TEST_CASE("garbage in frames gives no Python lock wait and no crash", "[cpython][pylocks]") {
  std::mt19937_64 rng(1234);
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    for (int round = 0; round < 20; ++round) {
      World w(minor);
      Addr sem = w.sem();
      // pointers into the image (mostly not objects), to unmapped memory,
      // odd values, a "lock" whose type is garbage, a bound method of garbage
      Addr fake = w.img.alloc(64);
      w.img.put<Addr>(fake, w.l.object_ob_type, w.img.alloc(16));  // type with no name
      std::vector<Addr> slots = {Image::kBase + (rng() % 0x10000) * 8, Image::kUnmapped + 8 * (rng() % 100),
                                 rng(), fake, w.bound_method(Image::kUnmapped), rng() | 1};
      std::shuffle(slots.begin(), slots.end(), rng);
      Addr f = w.frame("junk", "/app/junk.py", slots, round % 2 ? Image::kUnmapped : 0);
      w.thread(f, 0x7f0000008000, 700);
      auto st = w.inspect();
      auto r = w.wait(st, tid_of(w, 700, 0), sem);
      CHECK(r.kind == PyLockKind::None);
      CHECK(!r.problem.empty());
      auto g = w.wait(st, tid_of(w, 700, 0), std::nullopt);
      CHECK(g.kind == PyLockKind::None);
    }
    // a frame whose code object is unreadable
    World w(minor);
    Addr sem = w.sem();
    Addr f = w.frame("x", "/app/x.py", {w.lock(sem, true)}, 0);
    w.thread(f, 0x7f0000009000, 800);
    auto st = w.inspect();
    REQUIRE(!st.threads.empty());
    REQUIRE(!st.threads[0].frames.empty());
    st.threads[0].frames[0].code = Image::kUnmapped;
    auto r = w.wait(st, tid_of(w, 800, 0), sem);
    CHECK(r.kind == PyLockKind::None);
    CHECK(!r.problem.empty());
  }
}

TEST_CASE("a thread in threading.py's _wait_for_tstate_lock (3.13: Thread.join) gives its self as join_self, "
          "whether or not the futex matches a lock",
          "[cpython][pylocks]") {
  const std::string threading_py = "/usr/lib/python3.11/threading.py";
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr joined = w.thread_object();
    Addr sem = w.sem();
    Addr tstate_lock = w.lock(sem, true);
    Addr main = w.frame("<module>", "/app/main.py", {}, 0);
    Addr join = w.frame(w.method("Thread", "join"), threading_py, {joined, 0, 0}, main);
    // 3.6–3.12: join → _wait_for_tstate_lock(self, block, timeout), blocked
    // in lock.acquire(block, timeout) (the bound method on its stack);
    // 3.13: Thread.join waits in self._handle.join(), on no Python lock.
    bool tstate = minor <= 12;
    std::string innermost = tstate ? w.method("Thread", "_wait_for_tstate_lock") : w.method("Thread", "join");
    Addr top = tstate ? w.frame(innermost, threading_py, {joined, 0, 0, w.bound_method(tstate_lock)}, join) : join;
    w.thread(top, 0x7f0000001000, 900);
    auto st = w.inspect();
    int tid = tid_of(w, 900, 0);
    REQUIRE(st.threads.at(0).frames.at(0).function == innermost);

    auto r = w.wait(st, tid, sem);
    CHECK(r.join_self == joined);
    CHECK(r.join_frame_function == innermost);
    if (tstate) {
      CHECK(r.kind == PyLockKind::Lock);
      CHECK(r.object == tstate_lock);
      CHECK(r.problem.empty());
    }
    // a futex no lock of the frames explains: still the joined Thread
    auto other = w.wait(st, tid, sem + 4096);
    CHECK(other.kind == PyLockKind::None);
    CHECK(!other.problem.empty());
    CHECK(other.join_self == joined);
    CHECK(other.join_frame_function == innermost);
    // no futex at all
    CHECK(w.wait(st, tid, std::nullopt).join_self == joined);
  }
}

TEST_CASE("join frames outside threading.py, beyond max_frames or with no self give no join_self",
          "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr joined = w.thread_object();
    Addr sem = w.sem();
    // a `join` (and Pool.join) in another file, with an object in slot 0
    w.thread(w.frame("join", "/app/pool.py", {joined, w.lock(sem, true)}, 0), 0x7f0000001000, 910);
    w.thread(w.frame(w.method("Pool", "join"), "/usr/lib/python3/multiprocessing/pool.py", {joined}, 0),
             0x7f0000002000, 911);
    w.thread(w.frame("join", "/app/mythreading.py", {joined}, 0), 0x7f0000003000, 912);
    // threading.py's join below four other frames
    Addr deep = w.frame(w.method("Thread", "join"), "/usr/lib/python3/threading.py", {joined}, 0);
    for (int i = 0; i < 4; ++i) deep = w.frame("f" + std::to_string(i), "/app/deep.py", {}, deep);
    w.thread(deep, 0x7f0000004000, 913);
    // threading.py's join whose first local is no pointer
    w.thread(w.frame(w.method("Thread", "join"), "/usr/lib/python3/threading.py", {0x7, joined}, 0),
             0x7f0000005000, 914);
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 5);
    for (int i = 0; i < 5; ++i) {
      INFO("thread " << i);
      auto r = w.wait(st, tid_of(w, 910 + i, i), sem);
      CHECK(r.join_self == 0);
      CHECK(r.join_frame_function.empty());
    }
    // the first one still finds its lock
    CHECK(w.wait(st, tid_of(w, 910, 0), sem).kind == PyLockKind::Lock);
    // the deep join is found when enough frames are scanned
    LockWaitOptions more;
    more.max_frames = 5;
    CHECK(w.wait(st, tid_of(w, 913, 3), sem, more).join_self == joined);
  }
}

TEST_CASE("a buffered I/O object whose lock holds the futex is found directly, through a TextIOWrapper or a bound "
          "method, with the owner it records, in every version",
          "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    const std::uint64_t owner_pthread = 0x7f000000a000;
    Addr sem_w = w.sem(), sem_r = w.sem(), sem_t = w.sem();
    Addr writer = w.buffered("_io.BufferedWriter", sem_w, owner_pthread);
    Addr reader = w.buffered("_io.BufferedReader", sem_r, 0);
    Addr texts = w.buffered("_io.BufferedWriter", sem_t, owner_pthread);
    // print(file=out): the TextIOWrapper in a local; f.write: a bound method of the writer on the stack
    w.thread(w.frame("log", "/app/a.py", {w.text_io(texts), 0, 0, w.bound_method(writer)}, 0), 0x7f0000001000, 930);
    w.thread(w.frame("read_it", "/app/a.py", {reader}, 0), 0x7f0000002000, 931);
    w.thread(w.frame("stuck_in_write", "/app/a.py", {}, 0), owner_pthread, 932);
    auto st = w.inspect();
    int waiter = tid_of(w, 930, 0), owner = tid_of(w, 932, 2);

    auto r = w.wait(st, waiter, sem_w);
    CHECK(r.kind == PyLockKind::Buffered);
    CHECK(r.confidence == Confidence::Certain);
    CHECK(r.object == writer);
    CHECK(r.type_name == "_io.BufferedWriter");
    CHECK(r.wait_address == sem_w);
    CHECK(r.owner_thread_id == std::optional<std::uint64_t>(owner_pthread));
    CHECK(r.owner_tid == std::optional<int>(owner));
    CHECK(r.owner_source == OwnerSource::LockWord);
    CHECK(r.locked == std::optional<bool>(true));
    CHECK(r.found_in.empty());
    CHECK(r.problem.empty());
    // the TextIOWrapper stands for its buffer
    auto t = w.wait(st, waiter, sem_t + 4);
    CHECK(t.kind == PyLockKind::Buffered);
    CHECK(t.object == texts);
    CHECK(t.owner_tid == std::optional<int>(owner));
    // a free reader: found, no owner
    auto free = w.wait(st, tid_of(w, 931, 1), sem_r);
    CHECK(free.kind == PyLockKind::Buffered);
    CHECK(free.object == reader);
    CHECK(free.owner_thread_id == std::optional<std::uint64_t>(0));
    CHECK(!free.owner_tid);
    CHECK(free.owner_source == OwnerSource::Unknown);
    // without a futex a file on the stack is no sign of a wait
    auto guess = w.wait(st, waiter, std::nullopt);
    CHECK(guess.kind == PyLockKind::None);
  }
}

TEST_CASE("a buffered I/O lock whose recorded owner is no thread of the process gives no owner TID and says so",
          "[cpython][pylocks]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    World w(minor);
    Addr sem = w.sem();
    const std::uint64_t gone = 0x7f00000b0000;
    Addr writer = w.buffered("_io.BufferedWriter", sem, gone);
    w.thread(w.frame("child_print", "/app/a.py", {writer}, 0), 0x7f0000001000, 940);
    auto st = w.inspect();
    auto r = w.wait(st, tid_of(w, 940, 0), sem);
    CHECK(r.kind == PyLockKind::Buffered);
    CHECK(r.owner_thread_id == std::optional<std::uint64_t>(gone));
    CHECK(!r.owner_tid);
    CHECK(r.owner_source == OwnerSource::LockWord);
    CHECK(r.problem.why == ReadWhy::OwnerNoThread);
    CHECK(r.problem.at == gone);
    // a buffered object whose type is another class, or a TextIOWrapper whose buffer is garbage: nothing
    World v(minor);
    Addr sem2 = v.sem();
    Addr mine = v.buffered("MyWriter", sem2, 0);
    Addr text = v.text_io(Image::kUnmapped);
    v.thread(v.frame("f", "/app/a.py", {mine, text}, 0), 0x7f0000001000, 941);
    auto st2 = v.inspect();
    CHECK(v.wait(st2, tid_of(v, 941, 0), sem2).kind == PyLockKind::None);
  }
}
