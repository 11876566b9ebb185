// The unwinder over a fuzzed ELF object and stack.  Input: [u16 ELF length]
// [ELF bytes][u32 rip, from the object's base][u64 rsp][u64 rbp][u8 flags]
// [memory (fuzz_input.hpp)].  The object is mapped at kBase, from a memfd,
// since the unwinder opens the files of the address space by path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "pyhang/target/target.hpp"
#include "pyhang/unwind/unwinder.hpp"

using namespace pyhang;
using namespace pyhang::unwind;

namespace {
constexpr Addr kBase = 0x7f0000000000;

int object_fd() {
  static int fd = memfd_create("pyhang-fuzz-object", 0);
  return fd;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  auto elf = in.take(in.u16());
  const Addr rip = kBase + in.u32();
  Regs regs;
  regs.r[kRip] = rip;
  regs.r[kRsp] = in.u64();
  regs.r[kRbp] = in.u64();
  const std::uint8_t flags = in.u8();

  const int fd = object_fd();
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      pwrite(fd, elf.data(), elf.size(), 0) != static_cast<ssize_t>(elf.size()))
    return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);

  ImageReader memory;
  memory.add(kBase, elf.data(), elf.size());
  fuzz::add_memory(in, memory);
  const Addr end = kBase + ((elf.size() + 0xfff) & ~std::size_t{0xfff}) + 0x1000;
  AddressSpace space({{kBase, end, 0, "r-xp", path}});
  Unwinder unwinder(memory, space, (flags & 1) ? path : std::string());
  Result r = unwinder.unwind(regs, 256);
  if (r.pcs.size() > 256) __builtin_trap();  // more frames than asked for
  for (Addr pc : r.pcs) space.symbolize(pc);
  return 0;
}
