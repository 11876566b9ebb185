// The parts of a function a compiler split off, found from the code alone.
//
// gcc's -freorder-blocks-and-partition (on with profile feedback, as
// distributions build CPython) moves part of a function's blocks into a
// separate range with its own FDE and only a local symbol ("fn.cold"),
// which a stripped object does not keep.  Debian's python3.14 and 3.15 run
// their opcodes in an 84 KB and a 60 KB partition of _PyEval_EvalFrameDefault
// that way, while the exported symbol covers a 1.2 KB entry: a thread inside
// the evaluation loop has no frame that names it.  The partitions are found
// the way the entry reaches them: its direct jumps (jmp, jcc) that land
// inside another FDE, not at that FDE's start (a jump to a start is a tail
// call to another function).
#pragma once

#include <memory>
#include <vector>

#include "pyhang/target/memory.hpp"

namespace pyhang {
class ElfFile;
}

namespace pyhang::unwind {

struct CodeRange {
  Addr begin = 0, end = 0;  // link-time addresses, [begin, end)
};

// The other partitions of the function whose FDE covers `link_pc` (usually
// its symbol's address), by link-time address, without that FDE itself;
// empty when there are none or the object has no CFI.  Bounded: at most
// kMaxScan bytes of the function are decoded, and the first byte that does
// not decode as an instruction ends the scan.
inline constexpr std::size_t kMaxScan = 1 << 18;
std::vector<CodeRange> split_partitions(const std::shared_ptr<const ElfFile>& elf, Addr link_pc);

}  // namespace pyhang::unwind
