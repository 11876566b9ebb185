// Types every area of pyhang shares.
#pragma once

#include <cstdint>

namespace pyhang {

// An address in the target's address space.
using Addr = std::uint64_t;

}  // namespace pyhang
