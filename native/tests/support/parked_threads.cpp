// The parked threads' own code (support/parked_threads.hpp).
#include "support/parked_threads.hpp"

#include <sys/syscall.h>

using pyhang::testing::ParkedThread;
using pyhang::testing::ParkIn;

namespace {

void futex_wait(std::atomic<std::uint32_t>* word) {
  while (word->load() == 0) ::syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
}

}  // namespace

// Built with a frame pointer whatever the build's flags: its CFA is
// rbp + 16 at the call, which an unwind from rsp and rip alone cannot use.
extern "C" __attribute__((noinline, optimize("no-omit-frame-pointer"))) long pyhang_test_frame_pointer_wait(
    std::atomic<std::uint32_t>* word) {
  long calls = 0;
  // A loop, so the call is not a tail call that would leave no frame.
  while (word->load() == 0) {
    ::syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    ++calls;
  }
  asm volatile("" ::: "memory");
  return calls;
}

extern "C" void* pyhang_test_parked_start(void* arg) {
  auto* t = static_cast<ParkedThread*>(arg);
  std::uint64_t fs = 0;
  ::syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
  t->fs_base = fs;
  t->self = static_cast<std::uint64_t>(pthread_self());
  t->tid = static_cast<int>(::gettid());
  switch (t->call) {
    case ParkIn::Futex: futex_wait(&t->futex_word); break;
    case ParkIn::FramePointerFutex: pyhang_test_frame_pointer_wait(&t->futex_word); break;
    case ParkIn::PipeRead: (void)!::read(t->pipe_fds[0], t->read_buffer, 1); break;
    case ParkIn::Nanosleep: ::nanosleep(&t->sleep_for, nullptr); break;
  }
  return nullptr;
}
