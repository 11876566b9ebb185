// /proc facts of a live fork child and its parent (see pyhang/analysis/fork.hpp).
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pyhang/analysis/fork.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/glibc/libraries.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::fork {

namespace {

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string link_of(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::string cmdline_of(int pid) {
  auto s = slurp("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

// Start of the first mapping of the executable, libc and [heap].
using Landmarks = ProcessFacts::Landmarks;
Landmarks landmarks(const std::vector<Mapping>& maps, const std::string& exe) {
  Landmarks l;
  for (const auto& m : maps) {
    if (!l.exe && !exe.empty() && m.path == exe) l.exe = m.start;
    if (!l.libc && glibc::is_libc(m.path)) l.libc = m.start;
    if (!l.heap && m.path == "[heap]") l.heap = m.start;
  }
  return l;
}

}  // namespace

std::map<std::string, std::uint64_t> parse_smaps_rollup(const std::string& text) {
  std::map<std::string, std::uint64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || line.find(" kB") == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    char* end = nullptr;
    auto v = std::strtoull(line.c_str() + colon + 1, &end, 10);
    if (end == line.c_str() + colon + 1) continue;
    out[key] = v;
  }
  return out;
}

ProcessFacts process_facts(int pid, int ppid) {
  ProcessFacts p;
  p.pid = pid;
  p.ppid = ppid;
  std::string dir = "/proc/" + std::to_string(pid);
  p.exe = link_of(dir + "/exe");
  p.cmdline = cmdline_of(pid);
  if (auto r = slurp(dir + "/smaps_rollup")) p.smaps_rollup = parse_smaps_rollup(*r);
  if (p.ppid <= 1) return p;
  std::string pdir = "/proc/" + std::to_string(p.ppid);
  p.parent_exe = link_of(pdir + "/exe");
  p.parent_cmdline = cmdline_of(p.ppid);
  if (auto r = slurp(pdir + "/smaps_rollup")) p.parent_smaps_rollup = parse_smaps_rollup(*r);
  if (DIR* d = ::opendir((pdir + "/task").c_str())) {
    while (auto* e = ::readdir(d)) {
      int tid = std::atoi(e->d_name);
      if (tid > 0) p.parent_threads.push_back(tid);
    }
    ::closedir(d);
    std::sort(p.parent_threads.begin(), p.parent_threads.end());
    for (int tid : p.parent_threads) {
      auto comm = slurp(pdir + "/task/" + std::to_string(tid) + "/comm").value_or("");
      while (!comm.empty() && comm.back() == '\n') comm.pop_back();
      p.parent_thread_names.push_back(comm);
    }
  }
  if (p.exe.empty() || p.parent_exe.empty()) {
    p.problem = {ForkProblem::NoExecutables, pid, p.ppid, {}};
    return p;
  }
  try {
    auto mine = landmarks(read_proc_maps(pid), p.exe);
    auto theirs = landmarks(read_proc_maps(p.ppid), p.parent_exe);
    bool same = p.exe == p.parent_exe && mine.exe && mine.exe == theirs.exe && mine.libc && mine.libc == theirs.libc &&
                mine.heap == theirs.heap;
    p.same_address_space = same;
    p.mapped = mine;
    p.parent_mapped = theirs;
  } catch (const Error& e) {
    p.problem = {ForkProblem::MapsUnreadable, pid, p.ppid, e.path()};  // /proc/PID/maps of one of the two
  }
  return p;
}

}  // namespace pyhang::fork
