// The kernel's record of a blocked thread (pyhang/linux/syscall_record.hpp).
#include "pyhang/linux/syscall_record.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

namespace pyhang::linux_abi {
namespace {

// Fields split on blanks; at most `max` (a longer record is garbled).
std::vector<std::string_view> fields(std::string_view text, std::size_t max) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size() && out.size() <= max) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n' && text[j] != '\t') ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

// "0x1f" as the kernel prints a u64 (%llx after 0x).
std::optional<std::uint64_t> hex(std::string_view s) {
  if (s.size() < 3 || s[0] != '0' || s[1] != 'x') return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> decimal(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

constexpr std::size_t kArgRegisters[6] = {Registers::kRdi, Registers::kRsi, Registers::kRdx,
                                          Registers::kR10, Registers::kR8,  Registers::kR9};

}  // namespace

ParkedRegisters parse_syscall_record(std::string_view text) {
  ParkedRegisters out;
  out.state = ParkState::Garbled;
  const auto f = fields(text, 9);
  if (f.size() == 1 && f[0] == "running") {
    out.state = ParkState::Running;
    return out;
  }
  if (f.size() != 3 && f.size() != 9) return out;
  const auto nr = decimal(f[0]);
  std::optional<std::uint64_t> values[8];
  for (std::size_t i = 1; i < f.size(); ++i)
    if (!(values[i - 1] = hex(f[i]))) return out;
  const std::size_t sp = f.size() - 3, pc = f.size() - 2;  // the last two fields, as indices in values
  if (!nr || (f.size() == 3) != (*nr < 0)) return out;
  ParkedRegisters parked;
  parked.state = *nr < 0 ? ParkState::Blocked : ParkState::InCall;
  if (*nr >= 0) {
    parked.set(Registers::kOrigRax, static_cast<std::uint64_t>(*nr));
    for (std::size_t i = 0; i < 6; ++i) parked.set(kArgRegisters[i], *values[i]);
  }
  parked.set(Registers::kRsp, *values[sp]);
  parked.set(Registers::kRip, *values[pc]);
  return parked;
}

ParkedRegisters read_syscall_record(int pid, int tid) {
  ParkedRegisters out;
  const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.state = errno == ENOENT || errno == ESRCH ? ParkState::Gone : ParkState::Unreadable;
    return out;
  }
  // The longest record: 9 fields of at most 20 characters.
  char buf[256];
  std::size_t got = 0;
  ssize_t n = 0;
  int error = 0;
  // The record is one line: read until its newline (one read: no second read to see the end of the file).
  while (got < sizeof buf && (n = ::read(fd, buf + got, sizeof buf - got)) > 0) {
    got += static_cast<std::size_t>(n);
    if (std::memchr(buf, '\n', got) != nullptr) break;
  }
  if (n < 0) error = errno;
  ::close(fd);
  if (n < 0) {
    // The file opens for anyone; the permission check (ptrace access) is on read.
    out.state = error == ESRCH ? ParkState::Gone : ParkState::Unreadable;
    return out;
  }
  return parse_syscall_record(std::string_view(buf, got));
}

}  // namespace pyhang::linux_abi
