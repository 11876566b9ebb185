// GIVEN only rsp and rip (a thread read from its syscall record, nobody
// stopped it), WHEN it is unwound, THEN frames whose CFA is rsp + N and
// whose return addresses are on the stack unwind to the thread's start,
// and a frame whose CFA needs rbp (built with a frame pointer) stops with
// register-unknown instead of a guess.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "pyhang/target/target.hpp"
#include "pyhang/unwind/unwinder.hpp"
#include "support/cfi_bytes.hpp"
#include "support/eh_object.hpp"
#include "support/elf_builder.hpp"
#include "support/parked_threads.hpp"

using namespace pyhang;
using namespace pyhang::unwind;
using namespace pyhang::testing;

namespace {

std::vector<std::string> names(const Target& target, const std::vector<Addr>& pcs) {
  std::vector<std::string> out;
  for (Addr pc : pcs) out.push_back(target.space().symbolize(pc).function);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("a thread parked in futex unwinds from rsp and rip alone through its start routine to clone3",
          "[unwind][parked][live]") {
  ParkedThreads parked({ParkIn::Futex, ParkIn::Futex});
  REQUIRE(parked.threads().size() == 2);
  REQUIRE(parked.wait_parked());
  auto target = Target::live(::getpid());
  Unwinder unwinder(*target);
  for (const auto& t : parked.threads()) {
    auto regs = target->parked_registers(t->tid);
    REQUIRE(regs);
    const Regs frame0 = known_regs(*regs);
    CHECK_FALSE(frame0.r[kRbp]);
    CHECK_FALSE(frame0.r[3]);  // rbx
    const Result r = unwinder.unwind(frame0, 64);
    const auto fns = names(*target, r.pcs);
    INFO("stop " << to_string(r.stop));
    for (auto& f : fns) INFO(f);
    REQUIRE(r.pcs.size() >= 2);
    CHECK(r.pcs[0] == regs->regs.rip());
    CHECK(r.pcs.size() >= 3);
    CHECK(fns[1] == "pyhang_test_futex_start");  // frame 0 is libc's syscall()
    // Past the start routine: glibc's start_thread, then clone3, whose
    // return address is undefined.
    CHECK(r.stop == Stop::End);
  }
}

TEST_CASE("a thread parked below a frame-pointer function stops with register-unknown, not a guess",
          "[unwind][parked][live]") {
  ParkedThreads parked({ParkIn::FramePointerFutex});
  REQUIRE(parked.threads().size() == 1);
  REQUIRE(parked.wait_parked());
  auto target = Target::live(::getpid());
  Unwinder unwinder(*target);
  auto regs = target->parked_registers(parked.threads()[0]->tid);
  REQUIRE(regs);
  const Result r = unwinder.unwind(known_regs(*regs), 64);
  // Frame 0 (libc's syscall(), CFA rsp + 8) is listed; its caller's CFA is
  // rbp + 16, and rbp is not known.
  CHECK(r.pcs == std::vector<Addr>{regs->regs.rip()});
  CHECK(r.stop == Stop::RegisterUnknown);
  CHECK(to_string(r.stop) == "register-unknown");

  // The caller it stopped at is the frame-pointer function: frame 0's
  // return address is at rsp (syscall() pushes nothing).
  auto ret = target->memory().read_pointer(regs->regs.rsp());
  REQUIRE(ret);
  CHECK(target->space().symbolize(*ret).function == "pyhang_test_frame_pointer_start");
}

// ------------------------------------------------------------ synthetic --

namespace {

constexpr Addr kBase = 0x7f0000000000, kStack = 0x7ffd00000000;

Result unwind_image(const TestObject& spec, const std::vector<std::pair<Addr, std::uint64_t>>& stack,
                    const Regs& regs) {
  const auto object = build_object(spec);
  const auto path = std::filesystem::temp_directory_path() / ("pyhang-parked-" + std::to_string(::getpid()) + ".so");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(object.data()), object.size());
  AddressSpace space({{kBase, kBase + ((object.size() + 0xfff) & ~std::size_t{0xfff}), 0, "r-xp", path}});
  ImageReader memory;
  std::vector<std::uint8_t> bytes(0x1000, 0);
  for (auto [at, v] : stack) std::memcpy(&bytes.at(at - kStack), &v, 8);
  memory.add(kStack, bytes);
  Unwinder u(memory, space);
  Result r = u.unwind(regs, 64);
  std::filesystem::remove(path);
  return r;
}

}  // namespace

TEST_CASE("with rsp and rip only, an rbp a callee saved on the stack lets a frame-pointer caller unwind",
          "[unwind][parked]") {
  // leaf pushes rbp (CFA rsp + 16, rbp at CFA - 16); middle's CFA is rbp + 16;
  // outer's return address is undefined.
  TestObject spec = three_functions();
  spec.fdes[0] = {0x1000, 0x40, {cfa::advance_loc | 4, cfa::def_cfa_offset, 16, cfa::offset | 6, 2}};
  const Regs regs = make_regs({{kRip, kBase + 0x1010}, {kRsp, kStack + 0x100}});
  const std::vector<std::pair<Addr, std::uint64_t>> stack = {
      {kStack + 0x100, kStack + 0x200},    // leaf: the caller's rbp (middle's frame pointer)
      {kStack + 0x108, kBase + 0x1120},    // leaf: return address into middle
      {kStack + 0x200, kStack + 0x300},    // middle: the caller's rbp
      {kStack + 0x208, kBase + 0x1210}};   // middle: return address into outer
  Result r = unwind_image(spec, stack, regs);
  CHECK(r.pcs == std::vector<Addr>{kBase + 0x1010, kBase + 0x1120, kBase + 0x1210});
  CHECK(r.stop == Stop::End);

  SECTION("a leaf that does not save rbp: the frame-pointer caller stops with register-unknown") {
    r = unwind_image(three_functions(), stack, regs);
    CHECK(r.pcs == std::vector<Addr>{kBase + 0x1010});
    CHECK(r.stop == Stop::RegisterUnknown);
  }
}
