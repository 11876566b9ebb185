// The calling function's own registers, as unwind::Regs, for unwinding this
// process's stack while that frame is live (tests and benchmarks).  A macro,
// not a function: the registers must be those of the function it expands in
// (rip is the instruction after the asm).
#pragma once

#include <cstdint>

#include "pyhang/unwind/unwinder.hpp"

#define PYHANG_CAPTURE_REGS(regs)                                                                  \
  do {                                                                                             \
    std::uint64_t rip_, rsp_, rbp_, rbx_, r12_, r13_, r14_, r15_;                                  \
    asm volatile(                                                                                  \
        "lea 0(%%rip), %%rax\n\t"                                                                  \
        "mov %%rax, %0\n\t"                                                                        \
        "mov %%rsp, %1\n\t"                                                                        \
        "mov %%rbp, %2\n\t"                                                                        \
        "mov %%rbx, %3\n\t"                                                                        \
        "mov %%r12, %4\n\t"                                                                        \
        "mov %%r13, %5\n\t"                                                                        \
        "mov %%r14, %6\n\t"                                                                        \
        "mov %%r15, %7\n\t"                                                                        \
        : "=m"(rip_), "=m"(rsp_), "=m"(rbp_), "=m"(rbx_), "=m"(r12_), "=m"(r13_), "=m"(r14_), "=m"(r15_) \
        :                                                                                          \
        : "rax", "memory");                                                                        \
    (regs).r[::pyhang::unwind::kRip] = rip_;                                                       \
    (regs).r[::pyhang::unwind::kRsp] = rsp_;                                                       \
    (regs).r[::pyhang::unwind::kRbp] = rbp_;                                                       \
    (regs).r[3] = rbx_;                                                                            \
    (regs).r[12] = r12_;                                                                           \
    (regs).r[13] = r13_;                                                                           \
    (regs).r[14] = r14_;                                                                           \
    (regs).r[15] = r15_;                                                                           \
  } while (0)
