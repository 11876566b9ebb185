#include "pyhang/target/mappings.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "pyhang/base/error.hpp"

namespace pyhang {

namespace {

std::string_view next_field(std::string_view& line) {
  std::size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(start);
  std::size_t end = line.find(' ');
  auto field = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return field;
}

bool parse_hex(std::string_view s, std::uint64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::vector<Mapping> parse_proc_maps(std::string_view text) {
  std::vector<Mapping> out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto range = next_field(line);
    auto perms = next_field(line);
    auto offset = next_field(line);
    next_field(line);  // device
    next_field(line);  // inode
    std::size_t path_start = line.find_first_not_of(' ');
    std::string_view path = path_start == std::string_view::npos ? std::string_view{} : line.substr(path_start);
    std::size_t dash = range.find('-');
    Mapping m;
    if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), m.start) ||
        !parse_hex(range.substr(dash + 1), m.end) || !parse_hex(offset, m.offset))
      continue;
    m.perms = std::string(perms);
    m.path = std::string(path);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Mapping> read_proc_maps(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) throw Error(ErrorReason::MapsUnreadable, "/proc/" + std::to_string(pid) + "/maps", pid);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_proc_maps(ss.str());
}

}  // namespace pyhang
