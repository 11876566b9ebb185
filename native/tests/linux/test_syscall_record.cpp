// The kernel's record of a blocked thread (/proc/PID/task/TID/syscall) as
// frame 0 registers: which registers each form of record gives, and that
// callee-saved registers are never among them.
#include <catch2/catch.hpp>
#include <unistd.h>

#include "pyhang/linux/syscall_record.hpp"

using namespace pyhang;
using namespace pyhang::linux_abi;

namespace {

// Registers no record ever gives: rbx rbp r12-r15 (callee-saved), rax, rcx,
// r11, eflags, the segment registers, gs_base.
constexpr const char* kNeverKnown[] = {"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "rax",
                                       "rcx", "cs",  "eflags", "ss", "gs_base", "ds", "es", "fs", "gs"};

std::size_t index_of(std::string_view name) {
  for (std::size_t i = 0; i < Registers::kCount; ++i)
    if (kRegisterNames[i] == name) return i;
  FAIL("no register " << name);
  return 0;
}

}  // namespace

TEST_CASE("a record of a call gives the call number, its six arguments, rsp and rip, nothing else",
          "[linux][parked]") {
  const auto p = parse_syscall_record(
      "202 0x7f12a4c0 0x80 0x0 0x0 0x5 0xffffffffffffffff 0x7f1299ffeb58 0x7f12a5e8a3e9\n");
  CHECK(p.state == ParkState::InCall);
  CHECK(p.call() == 202u);
  CHECK(p.get(Registers::kRdi) == 0x7f12a4c0u);
  CHECK(p.get(Registers::kRsi) == 0x80u);
  CHECK(p.get(Registers::kRdx) == 0u);
  CHECK(p.get(Registers::kR10) == 0u);
  CHECK(p.get(Registers::kR8) == 5u);
  CHECK(p.get(Registers::kR9) == 0xffffffffffffffffu);
  CHECK(p.get(Registers::kRsp) == 0x7f1299ffeb58u);
  CHECK(p.get(Registers::kRip) == 0x7f12a5e8a3e9u);
  for (const char* name : kNeverKnown) CHECK_FALSE(p.known(index_of(name)));
  CHECK_FALSE(p.known(Registers::kFsBase));  // the caller's to add
  CHECK(__builtin_popcount(p.mask) == 9);
}

TEST_CASE("a record of a thread blocked outside a call gives rsp and rip only", "[linux][parked]") {
  const auto p = parse_syscall_record("-1 0x7ffd5a3c1e08 0x55d0c1a0b2f1\n");
  CHECK(p.state == ParkState::Blocked);
  CHECK_FALSE(p.call());
  CHECK(p.get(Registers::kRsp) == 0x7ffd5a3c1e08u);
  CHECK(p.get(Registers::kRip) == 0x55d0c1a0b2f1u);
  CHECK(__builtin_popcount(p.mask) == 2);
}

TEST_CASE("a running thread's record gives no register", "[linux][parked]") {
  const auto p = parse_syscall_record("running\n");
  CHECK(p.state == ParkState::Running);
  CHECK(p.mask == 0);
}

TEST_CASE("records of another form are garbled and give no register", "[linux][parked]") {
  for (const char* text : {"", "\n", "running now", "202 0x1 0x2", "-1 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
                           "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7", "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9",
                           "x02 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8", "202 1 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
                           "202 0x 0x2 0x3 0x4 0x5 0x6 0x7 0x8", "202 0xg 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
                           "202 0x11111111111111111 0x2 0x3 0x4 0x5 0x6 0x7 0x8"}) {
    INFO(text);
    const auto p = parse_syscall_record(text);
    CHECK(p.state == ParkState::Garbled);
    CHECK(p.mask == 0);
  }
}

TEST_CASE("the record of a thread that does not exist says gone", "[linux][parked]") {
  CHECK(read_syscall_record(::getpid(), 0x7ffffff0).state == ParkState::Gone);
}
