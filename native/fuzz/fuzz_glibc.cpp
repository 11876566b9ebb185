// The glibc lock decoders (mutex, rwlock, semaphore, condvar) of every
// layout row, and the identification of what a thread blocked in futex(2)
// waits on.  Input: [u8 layout row][u64 futex address][u32 futex op]
// [u32 expected value][u8 frames][frames: u8 function, u64 rdi, u64 rsi]
// [memory (fuzz_input.hpp)].
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "pyhang/glibc/identify.hpp"

using namespace pyhang;
using namespace pyhang::glibc;

namespace {

// Frame names as the debugger gives them: one of each kind identify knows.
constexpr const char* kFunctions[] = {
    "",  "??", "__lll_lock_wait", "__lll_lock_wait_private", "pthread_mutex_lock", "__pthread_mutex_lock_full",
    "__pthread_rwlock_rdlock", "__pthread_rwlock_wrlock", "pthread_rwlock_timedrdlock", "do_futex_wait",
    "__new_sem_wait_slow64", "sem_timedwait", "__pthread_cond_wait", "pthread_cond_timedwait",
    "__pthread_clockjoin_ex", "pthread_join", "__futex_abstimed_wait_common", "futex_wait", "main",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const auto& rows = all_layouts();
  const Layouts& layouts = rows[in.u8() % rows.size()];
  const Addr futex = in.u64();
  const std::uint32_t op = in.u32();
  const std::uint32_t value = in.u32();
  BlockedThread thread;
  thread.tid = 4242;
  const std::size_t nframes = in.u8() % 9;
  for (std::size_t i = 0; i < nframes; ++i) {
    NativeFrame f;
    f.pc = 0x7f0000001000 + i;
    f.function = kFunctions[in.u8() % std::size(kFunctions)];
    f.rdi = in.u64();
    f.rsi = in.u64();
    thread.frames.push_back(f);
  }
  ImageReader memory;
  fuzz::add_memory(in, memory);

  if (layouts.mutex) decode_mutex(memory, futex, *layouts.mutex);
  if (layouts.rwlock) decode_rwlock(memory, futex, *layouts.rwlock);
  if (layouts.sem) decode_semaphore(memory, futex, *layouts.sem);
  if (layouts.cond) decode_condvar(memory, futex, *layouts.cond);

  Registers regs;
  regs.r[15] = 202;  // orig_rax: futex(2)
  regs.r[14] = futex;
  regs.r[13] = op;
  regs.r[12] = value;
  thread.regs = regs;
  (void)identify_blocked(memory, layouts, thread);
  thread.regs.reset();  // no registers: frames alone
  (void)identify_blocked(memory, layouts, thread);
  return 0;
}
