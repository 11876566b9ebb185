#include "pyhang/base/format.hpp"

#include <cstdio>

namespace pyhang {

std::string hex(std::uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace pyhang
