// GIVEN synthetic ELF objects with stacks, this process and a stopped
// child, WHEN they are unwound, THEN the pcs are the ones gdb lists,
// and garbage ends with a stop reason, never a crash, a hang or a guess.
#include <catch2/catch.hpp>

#include <elf.h>
#include <execinfo.h>
#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "pyhang/target/target.hpp"
#include "pyhang/unwind/unwinder.hpp"
#include "support/cfi_bytes.hpp"
#include "support/eh_object.hpp"
#include "support/elf_builder.hpp"
#include "support/self_registers.hpp"
#include "support/skip.hpp"

using namespace pyhang;
using namespace pyhang::unwind;
using namespace pyhang::testing;

namespace {

// An object written to a file and mapped at kBase, with a stack at
// kStack; the unwinder reads both through one ImageReader.
struct Process {
  static constexpr Addr kBase = 0x7f0000000000;
  static constexpr Addr kStack = 0x7ffd00000000;
  std::filesystem::path path;
  std::vector<std::uint8_t> stack = std::vector<std::uint8_t>(0x1000, 0);
  std::vector<std::pair<Addr, std::vector<std::uint8_t>>> code;  // target memory besides the stack
  std::unique_ptr<AddressSpace> space;

  explicit Process(const std::vector<std::uint8_t>& object, const std::string& name = "obj") {
    path = std::filesystem::temp_directory_path() /
           ("pyhang-unwind-" + name + "-" + std::to_string(::getpid()) + ".so");
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(object.data()), object.size());
    space = std::make_unique<AddressSpace>(
        std::vector<Mapping>{{kBase, kBase + ((object.size() + 0xfff) & ~std::size_t{0xfff}), 0, "r-xp", path}});
  }
  ~Process() { std::filesystem::remove(path); }
  void put(Addr addr, std::uint64_t v) { std::memcpy(&stack.at(addr - kStack), &v, 8); }
  Result unwind(const Regs& regs, std::size_t max = 64, bool as_executable = false) {
    ImageReader memory;
    memory.add(kStack, stack);
    for (auto& [addr, bytes] : code) memory.add(addr, bytes);
    Unwinder u(memory, *space, as_executable ? path.string() : std::string());
    return u.unwind(regs, max);
  }
};

constexpr Addr B = Process::kBase, S = Process::kStack;

// The stack of leaf (pc 0x1010) <- middle (returns to 0x1120) <- outer
// (returns to 0x1210).
void three_frames(Process& p, Regs& regs) {
  p.put(S + 0x100, 0x1234);         // leaf: the caller's rbx
  p.put(S + 0x108, B + 0x1120);     // leaf: return address into middle
  p.put(S + 0x200, S + 0x300);      // middle: the caller's rbp
  p.put(S + 0x208, B + 0x1210);     // middle: return address into outer
  regs = make_regs({{kRip, B + 0x1010}, {kRsp, S + 0x100}, {kRbp, S + 0x200}, {3, 0x99}});
}

}  // namespace

// ---------------------------------------------------------- whole unwinds --

TEST_CASE("three synthetic frames unwind to the outermost, through .eh_frame_hdr or the .eh_frame index",
          "[unwind]") {
  TestObject spec = three_functions();
  const bool hdr = GENERATE(true, false);
  spec.hdr = hdr;
  Process p(build_object(spec), hdr ? "hdr" : "nohdr");
  REQUIRE(p.space->objects().size() == 1);
  CfiTable table(p.space->objects()[0].elf);
  CHECK(table.has_search_table() == hdr);
  Regs regs;
  three_frames(p, regs);

  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, B + 0x1210});
  CHECK(r.stop == Stop::End);

  r = p.unwind(regs, 2);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
  CHECK(r.stop == Stop::Depth);
  CHECK(p.unwind(regs, 0).stop == Stop::Depth);

  // Frame 0 just before the push: the return address is still at rsp.
  regs.r[kRip] = B + 0x1002;
  regs.r[kRsp] = S + 0x108;
  r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1002, B + 0x1120, B + 0x1210});
}

TEST_CASE("a caller that ends in a call which never returns is found from pc - 1", "[unwind]") {
  // middle ends with its call (the return address is the first byte after
  // it); the next function starts there with CFI that would end the unwind.
  TestObject spec = three_functions();
  spec.fdes[1].size = 0x20;
  spec.fdes.push_back({0x1120, 0x20, {cfa::undefined, 16}});
  Process p(build_object(spec));
  Regs regs;
  three_frames(p, regs);
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, B + 0x1210});
  CHECK(r.stop == Stop::End);
}

TEST_CASE("a signal trampoline (S) restores the interrupted frame, which is looked up at its pc", "[unwind]") {
  // Like glibc's __restore_rt: the FDE starts one byte before the address
  // the handler returns to; every register comes from the sigcontext on the
  // stack through DW_CFA_expression, the CFA from the saved rsp.
  TestObject spec = three_functions();
  spec.cies.push_back({"zRS", {}});
  const std::uint8_t oRSP = 0xa0, oRBP = 0x78, oRIP = 0xa8;
  auto at_rsp = [](std::uint8_t off) { return Buf().u8(op::breg0 + 7).sleb(off).b; };
  auto tramp = Buf().u8(cfa::def_cfa_expression).block(Buf().add(at_rsp(oRSP)).u8(op::deref).b);
  tramp.u8(cfa::expression).uleb(6).block(at_rsp(oRBP));
  tramp.u8(cfa::expression).uleb(7).block(at_rsp(oRSP));
  tramp.u8(cfa::expression).uleb(16).block(at_rsp(oRIP));
  spec.fdes.push_back({0x12ff, 0x11, tramp.b, 1});
  // The interrupted function starts exactly at the interrupted pc: pc - 1
  // would find nothing.
  spec.fdes.push_back({0x1400, 0x40, {}});
  Process p(build_object(spec));
  // frame 0: leaf, called by the kernel with the trampoline as return address
  p.put(S + 0x500, 0x1234);
  p.put(S + 0x508, B + 0x1300);
  // the sigcontext at the trampoline's rsp (S + 0x510); the interrupted
  // stack lies below the handler's, as on an alternate signal stack
  p.put(S + 0x510 + oRSP, S + 0x040);
  p.put(S + 0x510 + oRBP, S + 0x777);
  p.put(S + 0x510 + oRIP, B + 0x1400);
  p.put(S + 0x040, B + 0x1210);  // the interrupted function's return address into outer
  Regs regs = make_regs({{kRip, B + 0x1010}, {kRsp, S + 0x500}});
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1300, B + 0x1400, B + 0x1210});
  CHECK(r.stop == Stop::End);
}

TEST_CASE("the unwind ends after the executable's main, as gdb's backtrace past-main off", "[unwind]") {
  TestObject spec = three_functions();
  spec.symbols.push_back({"main", 0x1100, 0x80, false});
  Process p(build_object(spec));
  Regs regs;
  three_frames(p, regs);
  Result r = p.unwind(regs, 64, /*as_executable=*/true);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
  CHECK(r.stop == Stop::End);
  // main of a shared library is nobody's main.
  CHECK(p.unwind(regs, 64, false).pcs.size() == 3);
}

TEST_CASE("frame 0 on a ret takes its return address from rsp, whatever the CFI says, as gdb", "[unwind]") {
  TestObject spec = three_functions();
  Process p(build_object(spec));
  Regs regs;
  three_frames(p, regs);
  // pc in leaf after its push by the CFI, but the instruction there is a ret:
  // the push was undone already.
  p.code.push_back({B + 0x1010, {0xc3}});
  regs.r[kRsp] = S + 0x108;
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, B + 0x1210});
}

TEST_CASE("a zero return address after a normal frame ends the unwind with it; one in page 0 is a bad frame",
          "[unwind]") {
  Process p(build_object(three_functions()));
  Regs regs;
  three_frames(p, regs);
  p.put(S + 0x208, 0);
  Result r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, 0});
  CHECK(r.stop == Stop::End);
  p.put(S + 0x208, 0x10);
  r = p.unwind(regs);
  CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
  CHECK(r.stop == Stop::BadFrame);
}

TEST_CASE("stacks that loop or go down, and pcs without CFI, stop with what is certain", "[unwind]") {
  Process p(build_object(three_functions()));
  Regs regs;
  three_frames(p, regs);
  SECTION("middle's saved rbp points at itself and returns into middle: a cycle") {
    p.put(S + 0x200, S + 0x200);
    p.put(S + 0x208, B + 0x1120);
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120});
    CHECK(r.stop == Stop::BadFrame);
  }
  SECTION("a caller's CFA below its callee's") {
    regs.r[kRbp] = S + 0x010;  // middle's CFA would be S + 0x20, below leaf's S + 0x110
    p.put(S + 0x010, S + 0x300);
    p.put(S + 0x018, B + 0x1210);
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010});
    CHECK(r.stop == Stop::BadFrame);
  }
  SECTION("a return address outside any object is listed, then no-cfi") {
    p.put(S + 0x208, 0x500000);
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010, B + 0x1120, 0x500000});
    CHECK(r.stop == Stop::NoCfi);
  }
  SECTION("a frame 0 in an object gap, with no pc, or with an unreadable stack") {
    regs.r[kRip] = B + 0x1800;
    CHECK(p.unwind(regs).stop == Stop::NoCfi);
    regs.r[kRip].reset();
    CHECK(p.unwind(regs).stop == Stop::RegisterUnknown);
    regs.r[kRip] = B + 0x1010;
    regs.r[kRsp] = 0x1000000;
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010});
    CHECK(r.stop == Stop::Unreadable);
  }
  SECTION("a CFA register that is not known") {
    regs.r[kRbp].reset();  // leaf does not save rbp: middle's CFA needs it
    Result r = p.unwind(regs);
    CHECK(r.pcs == std::vector<Addr>{B + 0x1010});
    CHECK(r.stop == Stop::RegisterUnknown);
  }
}

TEST_CASE("garbage CFI and garbage stacks end within the bound, listing no pc it rejects, never a crash or a hang",
          "[unwind]") {
  const std::vector<std::uint8_t> good = build_object(three_functions());
  std::mt19937_64 rng(12345);
  std::set<Stop> seen;
  for (int round = 0; round < 150; ++round) {
    std::vector<std::uint8_t> bytes = good;
    // Mutate the CFI (header and .eh_frame), or the whole of it at random.
    const std::size_t end = std::min<std::size_t>(bytes.size(), kEhFrame + 0x100);
    const int flips = round < 100 ? 1 + static_cast<int>(rng() % 8) : 400;
    for (int i = 0; i < flips; ++i) bytes[kHdr + rng() % (end - kHdr)] = static_cast<std::uint8_t>(rng());
    Process p(bytes, "garbage");
    for (std::size_t i = 0; i < p.stack.size(); i += 8) {
      const std::uint64_t kinds[] = {rng(), B + 0x1000 + rng() % 0x300, S + rng() % 0x1000, 0};
      p.put(S + i, kinds[rng() % 4]);
    }
    const Regs regs = make_regs({{kRip, B + 0x1000 + rng() % 0x300},
                                 {kRsp, S + rng() % 0x1000},
                                 {kRbp, S + rng() % 0x1000},
                                 {3, rng()}});
    Result r = p.unwind(regs, 32);
    INFO("round " << round << ": " << r.pcs.size() << " pcs, stop " << stop_name(r.stop));
    // Bounded: never more than asked; Depth only when the bound was reached.
    REQUIRE(!r.pcs.empty());
    CHECK(r.pcs.size() <= 32);
    if (r.stop == Stop::Depth) CHECK(r.pcs.size() == 32);
    // Frame 0 is the thread's pc; a return address in the first page is
    // rejected (BadFrame), never listed, except 0 as the last pc, which
    // ends the stack (End after a normal frame, NoCfi after a signal frame).
    CHECK(r.pcs.front() == *regs.r[kRip]);
    for (std::size_t i = 1; i < r.pcs.size(); ++i) {
      if (r.pcs[i] == 0) {
        CHECK(i + 1 == r.pcs.size());
        CHECK((r.stop == Stop::End || r.stop == Stop::NoCfi));
      } else {
        CHECK(r.pcs[i] >= 4096);
      }
    }
    // Nothing uninitialised decides: the same garbage unwinds the same way.
    const Result again = p.unwind(regs, 32);
    CHECK(again.pcs == r.pcs);
    CHECK(again.stop == r.stop);
    seen.insert(r.stop);
  }
  // The garbage reaches the unwinder's checks, not one early exit: these
  // rounds end for at least four different reasons, among them CFI it
  // refuses (Unsupported) and a pc no FDE covers (NoCfi).  (With this seed:
  // end, no-cfi, unreadable and unsupported.)
  std::string reasons;
  for (Stop s : seen) reasons += std::string(stop_name(s)) + " ";
  INFO("stop reasons seen: " << reasons);
  CHECK(seen.size() >= 4);
  CHECK(seen.count(Stop::Unsupported) == 1);
  CHECK(seen.count(Stop::NoCfi) == 1);
}

// ------------------------------------------------------------ real stacks --

namespace {

// A function that stays a real, separate frame: gcc's noipa; clang has no
// noipa (it ignores it, and the sanitizers' build inlined the callers of
// pause() below into one frame), its optnone with noinline does that.
#if defined(__clang__)
#define PYHANG_SEPARATE_FRAME __attribute__((noinline, optnone))
#else
#define PYHANG_SEPARATE_FRAME __attribute__((noipa))
#endif

// This function's registers at the instruction after the asm, unwound
// while its frame is live, next to glibc's backtrace() (libgcc's unwinder).
struct SelfUnwind {
  Result ours;
  std::vector<Addr> libgcc;
};

PYHANG_SEPARATE_FRAME SelfUnwind unwind_self(Unwinder& u) {
  Regs regs;
  PYHANG_CAPTURE_REGS(regs);
  SelfUnwind out;
  out.ours = u.unwind(regs, 64);
  void* frames[64];
  const int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) out.libgcc.push_back(reinterpret_cast<Addr>(frames[i]));
  return out;
}

}  // namespace

// A call chain for the child below, each a real, separate frame.
extern "C" {
PYHANG_SEPARATE_FRAME int pyhang_unwind_test_level3(int fd) {
  const char c = 'r';
  if (write(fd, &c, 1) != 1) return -1;
  pause();
  return 3;
}
PYHANG_SEPARATE_FRAME int pyhang_unwind_test_level2(int fd) { return pyhang_unwind_test_level3(fd) + 2; }
PYHANG_SEPARATE_FRAME int pyhang_unwind_test_level1(int fd) { return pyhang_unwind_test_level2(fd) + 1; }
}

TEST_CASE("this process's own stack unwinds as libgcc's unwinder sees it, and ends at main", "[unwind]") {
  std::shared_ptr<Target> target;
  try {
    target = Target::live(::getpid());
  } catch (const std::exception& e) {
    PYHANG_SKIP("Target::live unavailable: " << e.what());
  }
  Unwinder u(*target);
  const SelfUnwind s = unwind_self(u);
  INFO("stop " << stop_name(s.ours.stop));
  CHECK(s.ours.stop == Stop::End);
  REQUIRE(s.ours.pcs.size() >= 4);
  // backtrace()'s first entries are return addresses in unwind_self (and in
  // an interceptor, under a sanitizer); from unwind_self's caller on, both
  // lists are the same return addresses.
  auto from = std::find(s.libgcc.begin(), s.libgcc.end(), s.ours.pcs[1]);
  REQUIRE(from != s.libgcc.end());
  REQUIRE(from - s.libgcc.begin() <= 2);
  const std::vector<Addr> libgcc(from, s.libgcc.end());
  const std::size_t n = std::min(s.ours.pcs.size() - 1, libgcc.size());
  for (std::size_t i = 0; i < n; ++i) {
    INFO("frame " << i + 1);
    CHECK(s.ours.pcs[i + 1] == libgcc[i]);
  }
  CHECK(target->space().symbolize(s.ours.pcs.back() - 1).function == "main");
}

TEST_CASE("a frame in the vDSO, which has no file on disk, unwinds by the CFI read from memory", "[unwind]") {
  std::shared_ptr<Target> target;
  try {
    target = Target::live(::getpid());
  } catch (const std::exception& e) {
    PYHANG_SKIP("Target::live unavailable: " << e.what());
  }
  const Mapping* vdso = nullptr;
  for (const Mapping& m : target->space().mappings())
    if (m.path == "[vdso]") vdso = &m;
  const auto main_addr = target->space().symbol_address("main");
  if (!vdso || !main_addr) {
    PYHANG_SKIP("no [vdso] mapping or no main symbol");
  }
  auto image = target->memory().read_bytes(vdso->start, vdso->end - vdso->start);
  auto elf = ElfFile::from_image(FileImage::from_bytes(image, "vdso"));
  const auto entry = elf->symbol("__vdso_clock_gettime");
  REQUIRE(entry);
  // Frame 0 on the function's first instruction, called from main: the
  // return address is at rsp.
  std::uint64_t stack[4] = {*main_addr + 1, 0, 0, 0};
  const Regs regs = make_regs({{kRip, vdso->start + entry->value - elf->load_base_vaddr()},
                               {kRsp, reinterpret_cast<Addr>(&stack[0])}});
  Unwinder u(*target);
  const Result r = u.unwind(regs, 8);
  CHECK(r.pcs == std::vector<Addr>{*regs.r[kRip], *main_addr + 1});
  CHECK(r.stop == Stop::End);  // main ends it
}

TEST_CASE("a stopped child blocked in pause() unwinds through its noinline callers", "[unwind]") {
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(pipefd[0]);
    pyhang_unwind_test_level1(pipefd[1]);
    _exit(0);
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{pid};
  close(pipefd[1]);
  pollfd pf{pipefd[0], POLLIN, 0};
  REQUIRE(poll(&pf, 1, 10000) == 1);
  char c;
  REQUIRE(read(pipefd[0], &c, 1) == 1);
  close(pipefd[0]);
  // Wait until it sleeps in pause (system call 34), not on its way there.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::string nr; nr != "34" && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::ifstream("/proc/" + std::to_string(pid) + "/syscall") >> nr;
  }
  if (ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) {
    PYHANG_SKIP("ptrace not permitted: " << std::strerror(errno));
  }
  REQUIRE(ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSTOPPED(status));
  user_regs_struct ur{};
  REQUIRE(ptrace(PTRACE_GETREGS, pid, nullptr, &ur) == 0);

  auto target = Target::live(pid);
  Unwinder u(*target);
  const Regs regs = make_regs({{kRip, ur.rip}, {kRsp, ur.rsp}, {kRbp, ur.rbp}, {3, ur.rbx}, {12, ur.r12},
                               {13, ur.r13}, {14, ur.r14}, {15, ur.r15}, {0, ur.rax}, {1, ur.rdx},
                               {2, ur.rcx}, {4, ur.rsi}, {5, ur.rdi}});
  const Result r = u.unwind(regs, 64);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < r.pcs.size(); ++i) {
    auto s = target->space().symbolize(i == 0 ? r.pcs[i] : r.pcs[i] - 1);
    names.push_back(s.function.empty() ? std::string(s.object ? s.object->basename() : "?") : s.function);
  }
  std::string all;
  for (auto& n : names) all += n + " ";
  INFO(all << "| stop " << stop_name(r.stop));
  CHECK((r.stop == Stop::End || r.stop == Stop::Depth));
  auto level3 = std::find(names.begin(), names.end(), "pyhang_unwind_test_level3");
  REQUIRE(level3 != names.end());
  REQUIRE(names.end() - level3 >= 3);
  CHECK(level3[1] == "pyhang_unwind_test_level2");
  CHECK(level3[2] == "pyhang_unwind_test_level1");
  const LoadedObject* libc = target->space().object_at(r.pcs[0]);
  REQUIRE(libc);
  CHECK(libc->basename().substr(0, 7) == "libc.so");
  ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
}
