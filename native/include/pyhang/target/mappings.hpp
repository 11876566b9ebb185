// The target's memory mappings, and /proc/PID/maps, where a live process
// lists them (a core lists them in NT_FILE: pyhang/target/core_file.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pyhang/base/types.hpp"

namespace pyhang {

// One mapping of the target's address space, from /proc/PID/maps or NT_FILE.
struct Mapping {
  Addr start = 0;
  Addr end = 0;
  std::uint64_t offset = 0;  // in the file
  std::string perms;         // "r-xp"; empty when the source does not say
  std::string path;          // empty for anonymous memory
};

std::vector<Mapping> parse_proc_maps(std::string_view text);
std::vector<Mapping> read_proc_maps(int pid);  // throws Error

}  // namespace pyhang
