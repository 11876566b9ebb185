// The parked threads' own code (support/parked_threads.hpp).
#include "support/parked_threads.hpp"

#include <sys/syscall.h>

using pyhang::testing::ParkedThread;
using pyhang::testing::ParkIn;

// What every parked thread records before it blocks; returns the futex
// word the assembly start routines wait on.
extern "C" std::atomic<std::uint32_t>* pyhang_test_park_record(ParkedThread* t) {
  std::uint64_t fs = 0;
  ::syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
  t->fs_base = fs;
  t->self = static_cast<std::uint64_t>(pthread_self());
  t->tid = static_cast<int>(::gettid());
  return &t->futex_word;
}

static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && SYS_futex == 202 && FUTEX_WAIT_PRIVATE == 128);

// Both: while (*word == 0) syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, 0); return 0.
// Each keeps rsp 16-byte aligned at its calls.
asm(R"(
        .text
        # while (*(uint32_t*)rbx == 0) syscall(SYS_futex, rbx, FUTEX_WAIT_PRIVATE, 0, 0); eax = 0
        .macro pyhang_futex_wait_rbx
1:      movl (%rbx), %eax
        testl %eax, %eax
        jnz 2f
        mov $202, %edi
        mov %rbx, %rsi
        mov $128, %edx
        xor %ecx, %ecx
        xor %r8d, %r8d
        xor %eax, %eax
        call syscall@PLT
        jmp 1b
2:      xor %eax, %eax
        .endm

        .globl pyhang_test_futex_start
        .type pyhang_test_futex_start, @function
pyhang_test_futex_start:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        call pyhang_test_park_record
        mov %rax, %rbx
        pyhang_futex_wait_rbx
        pop %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size pyhang_test_futex_start, .-pyhang_test_futex_start

        .globl pyhang_test_frame_pointer_start
        .type pyhang_test_frame_pointer_start, @function
pyhang_test_frame_pointer_start:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        push %rbx
        .cfi_offset %rbx, -24
        sub $8, %rsp
        call pyhang_test_park_record
        mov %rax, %rbx
        pyhang_futex_wait_rbx
        add $8, %rsp
        pop %rbx
        pop %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size pyhang_test_frame_pointer_start, .-pyhang_test_frame_pointer_start
)");

extern "C" void* pyhang_test_parked_start(void* arg) {
  auto* t = static_cast<ParkedThread*>(arg);
  pyhang_test_park_record(t);
  switch (t->call) {
    case ParkIn::PipeRead: (void)!::read(t->pipe_fds[0], t->read_buffer, 1); break;
    case ParkIn::Nanosleep: ::nanosleep(&t->sleep_for, nullptr); break;
    case ParkIn::Futex:
    case ParkIn::FramePointerFutex: break;  // they start in assembly
  }
  return nullptr;
}
