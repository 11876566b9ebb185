// Threads of this test process parked in known system calls, for reading
// them as a live target nobody stopped (Target::live(getpid())): each
// records its TID, pthread_self() and fs_base, then blocks in its call
// until the fixture releases it.
#pragma once

#include <asm/prctl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pyhang/linux/syscall_record.hpp"

namespace pyhang::testing {

enum class ParkIn : std::uint8_t { Futex, PipeRead, Nanosleep, FramePointerFutex };

struct ParkedThread {
  ParkIn call = ParkIn::Futex;
  pthread_t handle{};
  std::atomic<int> tid{0};
  std::atomic<std::uint64_t> self{0};     // pthread_self()
  std::atomic<std::uint64_t> fs_base{0};  // arch_prctl(ARCH_GET_FS)
  std::atomic<std::uint32_t> futex_word{0};
  int pipe_fds[2] = {-1, -1};
  char read_buffer[8] = {};
  timespec sleep_for{3600, 0};
};

// Start routines (arg: the ParkedThread*).  Futex and FramePointerFutex
// threads start in assembly, so that their unwind information is the same
// whatever flags the tests are built with (the sanitizer build keeps frame
// pointers everywhere): pyhang_test_futex_start keeps its CFA at rsp + 16,
// pyhang_test_frame_pointer_start at rbp + 16.  Both call libc's syscall()
// for the futex wait.  The other kinds start in pyhang_test_parked_start.
extern "C" void* pyhang_test_futex_start(void* arg);
extern "C" void* pyhang_test_frame_pointer_start(void* arg);
extern "C" void* pyhang_test_parked_start(void* arg);

// The threads, started and released (joined) with the fixture.
class ParkedThreads {
 public:
  explicit ParkedThreads(std::vector<ParkIn> calls) {
    for (ParkIn c : calls) {
      auto t = std::make_unique<ParkedThread>();
      t->call = c;
      if (c == ParkIn::PipeRead && ::pipe(t->pipe_fds) != 0) continue;
      void* (*start)(void*) = c == ParkIn::Futex               ? pyhang_test_futex_start
                              : c == ParkIn::FramePointerFutex ? pyhang_test_frame_pointer_start
                                                               : pyhang_test_parked_start;
      if (pthread_create(&t->handle, nullptr, start, t.get()) != 0) continue;
      threads_.push_back(std::move(t));
    }
  }
  ~ParkedThreads() {
    for (auto& t : threads_) {
      switch (t->call) {
        case ParkIn::Futex:
        case ParkIn::FramePointerFutex:
          t->futex_word = 1;
          ::syscall(SYS_futex, &t->futex_word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
          break;
        case ParkIn::PipeRead: (void)!::write(t->pipe_fds[1], "x", 1); break;
        case ParkIn::Nanosleep: pthread_cancel(t->handle); break;  // nanosleep is a cancellation point
      }
    }
    for (auto& t : threads_) {
      pthread_join(t->handle, nullptr);
      if (t->pipe_fds[0] >= 0) ::close(t->pipe_fds[0]), ::close(t->pipe_fds[1]);
    }
  }
  const std::vector<std::unique_ptr<ParkedThread>>& threads() const { return threads_; }

  // Every thread parked in its call (its record says so), within 10 s.
  bool wait_parked() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (auto& t : threads_) {
      while (true) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        if (t->tid != 0 && linux_abi::read_syscall_record(::getpid(), t->tid).state == linux_abi::ParkState::InCall)
          break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<ParkedThread>> threads_;
};

// The TIDs of this process (/proc/self/task).
inline std::set<int> own_tids() {
  std::set<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) out.insert(std::stoi(e.path().filename()));
  return out;
}

}  // namespace pyhang::testing
