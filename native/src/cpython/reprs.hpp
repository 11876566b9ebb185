// The reprs of Python's scalar values from their decoded contents, as
// Python prints them: float (shortest round-trip digits), str (quotes and
// escapes), bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pyhang::cpython::detail {

// Python's repr of a float: the shortest digits that read back the same,
// positional for exponents -4 .. 15, else d.ddde±XX.
std::string float_repr(double d);
// A str's repr from its UTF-8.
std::string str_repr(std::string_view s);
std::string bytes_repr(const std::vector<std::uint8_t>& b);

}  // namespace pyhang::cpython::detail
