// pyhang's own stop of a live process (ProcessStop) on a forked child with
// threads: every thread stops, its registers are readable, nothing runs
// while stopped, a signal sent meanwhile is delivered after, the process
// runs on after resume; no process, a zombie and a bad pid are said so.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "pyhang/linux/process_stop.hpp"
#include "pyhang/target/target.hpp"
#include "support/skip.hpp"

using pyhang::linux_abi::ProcessStop;
using pyhang::linux_abi::StopProblem;

namespace {

// Shared with the child (MAP_SHARED before the fork): what it did.
struct ChildCounters {
  std::atomic<unsigned long> spins{0};    // a thread that never blocks counts
  std::atomic<int> signals{0};            // SIGUSR1 handled
};

ChildCounters* g_counters = nullptr;

void on_usr1(int) { g_counters->signals.fetch_add(1); }

void* sleeper(void*) {
  for (;;) ::pause();
}

void* spinner(void*) {
  for (;;) g_counters->spins.fetch_add(1, std::memory_order_relaxed);
}

// A child of `sleepers` threads in pause() and one spinning, besides its main thread (in pause()).
pid_t start_child(ChildCounters* counters, int sleepers) {
  pid_t child = ::fork();
  if (child == 0) {
    g_counters = counters;
    ::signal(SIGUSR1, on_usr1);
    pthread_t t;
    for (int i = 0; i < sleepers; ++i) pthread_create(&t, nullptr, sleeper, nullptr);
    pthread_create(&t, nullptr, spinner, nullptr);
    for (;;) ::pause();
  }
  return child;
}

std::set<int> tasks(pid_t pid) {
  std::set<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    out.insert(std::stoi(e.path().filename()));
  return out;
}

char state(pid_t pid, int tid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

bool wait_for(const std::function<bool()>& done, int ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

struct Child {
  ChildCounters* counters;
  pid_t pid;
  explicit Child(int sleepers) {
    void* shared = ::mmap(nullptr, sizeof(ChildCounters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    counters = new (shared) ChildCounters;
    pid = start_child(counters, sleepers);
  }
  ~Child() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::munmap(counters, sizeof(ChildCounters));
  }
};

// A thread held in vfork until its child exits after `seconds` (an uninterruptible wait: no stop reaches it).
void* in_vfork(void* seconds) {
  pid_t pid = ::vfork();
  if (pid == 0) {
    timespec t{static_cast<long>(reinterpret_cast<std::intptr_t>(seconds)), 0};
    ::syscall(SYS_nanosleep, &t, nullptr);
    ::syscall(SYS_exit, 0);
  }
  for (;;) ::pause();
}

}  // namespace

TEST_CASE("pyhang's stop holds every thread of a process still, with registers to read, and resume lets it run on") {
  Child child(4);
  REQUIRE(child.pid > 0);
  REQUIRE(wait_for([&] { return tasks(child.pid).size() == 6 && child.counters->spins > 0; }));
  const std::set<int> tids = tasks(child.pid);
  auto target = pyhang::Target::live(child.pid);
  {
    auto stop = ProcessStop::stop(child.pid);
    REQUIRE(stop.problem() == StopProblem::None);
    CHECK(std::set<int>(stop.stopped().begin(), stop.stopped().end()) == tids);
    CHECK(stop.not_stopped().empty());
    CHECK(stop.active());
    for (int tid : tids) {
      CHECK(state(child.pid, tid) == 't');   // a tracing stop
      auto regs = target->registers(tid);
      REQUIRE(regs);
      CHECK(regs->rip() != 0);
      CHECK(regs->rsp() != 0);
    }
    // Nothing runs while stopped: the spinning thread counts no more, a signal waits.
    unsigned long spins = child.counters->spins;
    ::kill(child.pid, SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(child.counters->spins == spins);
    CHECK(child.counters->signals == 0);
    stop.resume();
    CHECK_FALSE(stop.active());
    stop.resume();   // idempotent
  }
  // The process runs on: the spinner counts again, the signal sent while stopped was handled, nobody traces it.
  unsigned long after = child.counters->spins;
  CHECK(wait_for([&] { return child.counters->spins > after; }));
  CHECK(wait_for([&] { return child.counters->signals == 1; }));
  for (int tid : tids) CHECK(state(child.pid, tid) != 't');
  CHECK_FALSE(target->registers(child.pid));   // no longer traced by us
}

TEST_CASE("pyhang's stop resumes the process when it goes out of scope") {
  Child child(1);
  REQUIRE(wait_for([&] { return tasks(child.pid).size() == 3 && child.counters->spins > 0; }));
  {
    auto stop = ProcessStop::stop(child.pid);
    REQUIRE(stop.problem() == StopProblem::None);
    ProcessStop moved = std::move(stop);   // the stop moves with its threads
    CHECK(moved.stopped().size() == 3);
    CHECK(stop.stopped().empty());
  }
  unsigned long after = child.counters->spins;
  CHECK(wait_for([&] { return child.counters->spins > after; }));
}

TEST_CASE("pyhang's stop goes on without a thread that does not stop by its deadline, and names it") {
  // GIVEN a process whose main thread sleeps in pause() and another waits in vfork for 3 s
  pid_t child = ::fork();
  if (child == 0) {
    pthread_t t;
    pthread_create(&t, nullptr, in_vfork, reinterpret_cast<void*>(std::intptr_t{3}));
    for (;;) ::pause();
  }
  REQUIRE(child > 0);
  REQUIRE(wait_for([&] { return tasks(child).size() == 2; }));
  int waiting = *tasks(child).rbegin();
  REQUIRE(wait_for([&] { return state(child, waiting) == 'D'; }));   // in vfork's wait
  // WHEN stopped with a deadline of 200 ms
  pyhang::linux_abi::StopLimits limits;
  limits.wait_ms = 200;
  auto began = std::chrono::steady_clock::now();
  auto stop = ProcessStop::stop(child, limits);
  auto took = std::chrono::steady_clock::now() - began;
  // THEN the main thread is stopped, the vfork parent is named as not stopped, and the stop waited its deadline
  CHECK(stop.problem() == StopProblem::None);
  CHECK(stop.stopped() == std::vector<int>{child});
  CHECK(stop.not_stopped() == std::vector<int>{waiting});
  CHECK(took >= std::chrono::milliseconds(200));
  CHECK(took < std::chrono::seconds(2));
  stop.resume();
  CHECK(state(child, child) != 't');
  // (the vfork parent stays traced by this process until it stops: killed, its tracer reaps it, then the leader)
  ::kill(child, SIGKILL);
  ::waitpid(waiting, nullptr, __WALL);
  ::waitpid(child, nullptr, 0);
}

TEST_CASE("pyhang's stop of no process, a zombie or a bad pid says there is no process") {
  CHECK(ProcessStop::stop(0).problem() == StopProblem::NoProcess);
  CHECK(ProcessStop::stop(-5).problem() == StopProblem::NoProcess);
  pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  REQUIRE(wait_for([&] { return state(zombie, zombie) == 'Z'; }));
  auto of_zombie = ProcessStop::stop(zombie);
  CHECK(of_zombie.problem() == StopProblem::NoProcess);
  CHECK(of_zombie.stopped().empty());
  ::waitpid(zombie, nullptr, 0);
  auto of_reaped = ProcessStop::stop(zombie);   // reaped: no such pid (unless reused meanwhile, vanishingly)
  CHECK(of_reaped.problem() == StopProblem::NoProcess);
}

TEST_CASE("pyhang's stop of a process another tracer holds is refused, and leaves it as it was") {
  Child child(0);
  REQUIRE(wait_for([&] { return tasks(child.pid).size() == 2 && child.counters->spins > 0; }));
  // Another tracer: a process of our own that seizes the child and waits.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t tracer = ::fork();
  if (tracer == 0) {
    char ok = ::ptrace(PTRACE_SEIZE, child.pid, nullptr, nullptr) == 0 ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    for (;;) ::pause();
  }
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  ::close(ready[0]), ::close(ready[1]);
  if (ok != 'y') {
    ::kill(tracer, SIGKILL), ::waitpid(tracer, nullptr, 0);
    PYHANG_SKIP("ptrace is not permitted here (a container without CAP_SYS_PTRACE?)");
  }
  auto stop = ProcessStop::stop(child.pid);
  CHECK(stop.problem() == StopProblem::NotPermitted);
  CHECK(stop.error() == EPERM);
  CHECK(stop.stopped().empty());
  ::kill(tracer, SIGKILL);
  ::waitpid(tracer, nullptr, 0);
  unsigned long after = child.counters->spins;   // the seize stopped nothing: it runs as before
  CHECK(wait_for([&] { return child.counters->spins > after; }));
}
