// Every CPython line-table format: lnotab (3.6-3.9), the 3.10 co_linetable
// and the 3.11+ location table.  Input: [u8 version][i32 co_firstlineno]
// [i64 byte offset][table]; the first byte picks 3.6 .. 3.15 (or 3.16 through a stand-in table).
#include <cstdint>
#include <vector>

#include "cpython_input.hpp"

using namespace pyhang;
using namespace pyhang::cpython;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const Layout* layout = &fuzz::cpython_layout(in);
  const auto firstlineno = static_cast<int>(in.u32());
  const auto offset = static_cast<std::int64_t>(in.u64());
  auto rest = in.rest();
  const std::vector<std::uint8_t> table(rest.begin(), rest.end());
  auto check = [&](std::int64_t at) {
    const int line = line_for_offset(*layout, table, firstlineno, at);
    if (line < -1 && at >= 0) __builtin_trap();  // a line is -1 (none) or a line number
  };
  check(offset);
  for (std::int64_t at = 0; at < static_cast<std::int64_t>(table.size()) * 16 && at < 4096; at += 2) check(at);
  return 0;
}
