// Text for addresses and numbers, the one way every part of pyhang writes
// them into problems, warnings and evidence.
#pragma once

#include <cstdint>
#include <string>

namespace pyhang {

// "0x7f12ab": lower-case hexadecimal with a 0x prefix, no padding.
std::string hex(std::uint64_t value);

}  // namespace pyhang
