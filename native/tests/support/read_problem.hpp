// Checking a ReadProblem in tests: its parts and addresses, and the words
// Catch2 prints for one that did not match ("unreadable [frame 0x10, code-object 0x20]").
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

#include "pyhang/cpython/unread.hpp"

namespace pyhang::cpython::testing {

// The parts of p's path, outermost first, with their addresses.
inline std::vector<std::pair<ReadPart, Addr>> parts(const ReadProblem& p) {
  std::vector<std::pair<ReadPart, Addr>> out;
  for (const auto& s : p.path) out.emplace_back(s.part, s.address);
  return out;
}

// Whether p says `why` about exactly the path `path` (parts and addresses).
inline bool says(const ReadProblem& p, ReadWhy why, std::initializer_list<std::pair<ReadPart, Addr>> path) {
  return p.why == why && parts(p) == std::vector<std::pair<ReadPart, Addr>>(path);
}

}  // namespace pyhang::cpython::testing

namespace Catch {
template <>
struct StringMaker<pyhang::cpython::ReadProblem> {
  static std::string convert(const pyhang::cpython::ReadProblem& p) {
    std::string out = std::string(to_string(p.why)) + " [";
    for (std::size_t i = 0; i < p.path.size(); ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s0x%llx", i ? ", " : "", static_cast<unsigned long long>(p.path[i].address));
      out += std::string(to_string(p.path[i].part)) + " " + (p.path[i].name.empty() ? "" : p.path[i].name + " ") + buf;
    }
    out += "]";
    if (!p.name.empty()) out += " name=" + p.name;
    if (p.number) out += " number=" + std::to_string(*p.number);
    if (p.limit) out += " limit=" + std::to_string(p.limit);
    if (p.at) out += " at=" + std::to_string(p.at);
    return out;
  }
};
}  // namespace Catch
