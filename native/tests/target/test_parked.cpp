// GIVEN threads of this process parked in futex, read on a pipe and
// nanosleep, WHEN the process is read as a live target nobody stopped,
// THEN each thread's frame 0 registers come from its syscall record: the
// call and arguments it made, rsp on its own stack, rip in libc, and no
// callee-saved register.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/syscall.h>

#include <chrono>
#include <optional>
#include <thread>

#include "pyhang/target/target.hpp"
#include "support/parked_threads.hpp"

using namespace pyhang;
using namespace pyhang::testing;
using linux_abi::ParkState;

namespace {

// [low, high) of thread `t`'s stack.
std::pair<Addr, Addr> stack_of(pthread_t t) {
  pthread_attr_t attr;
  void* base = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(t, &attr) != 0) return {0, 0};
  pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  return {reinterpret_cast<Addr>(base), reinterpret_cast<Addr>(base) + size};
}

}  // namespace

TEST_CASE("a parked thread's registers are its call, arguments, rsp on its stack and rip in libc, without ptrace",
          "[target][parked][live]") {
  ParkedThreads parked({ParkIn::Futex, ParkIn::PipeRead, ParkIn::Nanosleep});
  REQUIRE(parked.threads().size() == 3);
  REQUIRE(parked.wait_parked());
  auto target = Target::live(::getpid());

  for (const auto& t : parked.threads()) {
    auto regs = target->parked_registers(t->tid);
    REQUIRE(regs);
    REQUIRE(regs->state == ParkState::InCall);
    switch (t->call) {
      case ParkIn::Futex:
        CHECK(regs->call() == SYS_futex);
        CHECK(regs->get(Registers::kRdi) == reinterpret_cast<Addr>(&t->futex_word));
        CHECK(regs->get(Registers::kRsi) == FUTEX_WAIT_PRIVATE);
        CHECK(regs->get(Registers::kRdx) == 0u);  // the value it waits to change
        break;
      case ParkIn::PipeRead:
        CHECK(regs->call() == SYS_read);
        CHECK(regs->get(Registers::kRdi) == static_cast<Addr>(t->pipe_fds[0]));
        CHECK(regs->get(Registers::kRsi) == reinterpret_cast<Addr>(t->read_buffer));
        CHECK(regs->get(Registers::kRdx) == 1u);
        break;
      case ParkIn::Nanosleep: {
        // glibc's nanosleep is clock_nanosleep(CLOCK_REALTIME, 0, req, rem).
        const Addr request = reinterpret_cast<Addr>(&t->sleep_for);
        if (regs->call() == SYS_clock_nanosleep) {
          CHECK(regs->get(Registers::kRdi) == static_cast<Addr>(CLOCK_REALTIME));
          CHECK(regs->get(Registers::kRdx) == request);
        } else {
          CHECK(regs->call() == SYS_nanosleep);
          CHECK(regs->get(Registers::kRdi) == request);
        }
        break;
      }
      case ParkIn::FramePointerFutex: break;
    }
    auto [low, high] = stack_of(t->handle);
    CHECK(regs->regs.rsp() >= low);
    CHECK(regs->regs.rsp() < high);
    const LoadedObject* code = target->space().object_at(regs->regs.rip());
    REQUIRE(code);
    CHECK(code->basename().starts_with("libc.so"));
    for (std::size_t i : {Registers::kRbx, Registers::kRbp, std::size_t{0}, std::size_t{1}, std::size_t{2},
                          std::size_t{3}, Registers::kFsBase})
      CHECK_FALSE(regs->known(i));  // r15 r14 r13 r12 rbx rbp: callee-saved; fs_base: not in the record
  }
}

TEST_CASE("a running thread has no registers, an exited one is gone, a core or image target has no record",
          "[target][parked][live]") {
  auto target = Target::live(::getpid());
  // A thread that spins is running or runnable, never blocked.
  std::atomic<bool> stop{false};
  std::atomic<int> spinner{0};
  std::thread spin([&] {
    spinner = static_cast<int>(::gettid());
    while (!stop) {
    }
  });
  while (spinner == 0) std::this_thread::yield();
  auto running = target->parked_registers(spinner);
  stop = true;
  spin.join();
  REQUIRE(running);
  CHECK(running->state == ParkState::Running);
  CHECK(running->mask == 0);
  // (A thread reading its own record sees the read it is in.)
  auto own = target->parked_registers(static_cast<int>(::gettid()));
  REQUIRE(own);
  CHECK(own->call() == SYS_read);

  std::atomic<int> exited{0};
  std::thread([&] { exited = static_cast<int>(::gettid()); }).join();
  // join() returns when the kernel clears the thread's tid word, a moment before /proc lets go of its
  // task: wait (bounded) for that, then its record is gone.
  std::optional<linux_abi::ParkedRegisters> gone;
  for (int i = 0; i < 2000; ++i) {
    gone = target->parked_registers(exited);
    if (!gone || gone->state == ParkState::Gone) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(gone);
  CHECK(gone->state == ParkState::Gone);

  auto image = Target::from_reader(std::make_shared<ImageReader>(), {}, TargetKind::Callback);
  CHECK_FALSE(image->parked_registers(static_cast<int>(::gettid())));
}
