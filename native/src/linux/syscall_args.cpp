// Kernel ABI structures behind a system call's pointer arguments
// (pyhang/linux/syscall_args.hpp).
#include "pyhang/linux/syscall_args.hpp"

#include <algorithm>
#include <cstring>

namespace pyhang::linux_abi {

std::optional<std::vector<PollFd>> read_pollfds(MemoryReader& memory, Addr address, std::uint64_t count,
                                                std::size_t max) {
  constexpr std::size_t kSize = 8;  // int fd; short events; short revents
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(count, max));
  if (address == 0 && n > 0) return std::nullopt;
  std::vector<std::uint8_t> raw = memory.read_bytes(address, n * kSize);
  if (raw.size() != n * kSize) return std::nullopt;
  std::vector<PollFd> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(&out[i].fd, raw.data() + i * kSize, 4);
    std::memcpy(&out[i].events, raw.data() + i * kSize + 4, 2);
  }
  return out;
}

std::optional<std::vector<int>> read_fd_set(MemoryReader& memory, Addr address, std::uint64_t nfds) {
  if (address == 0 || nfds > kFdSetSize) return std::nullopt;
  std::size_t words = static_cast<std::size_t>((nfds + 63) / 64);
  std::vector<std::uint8_t> raw = memory.read_bytes(address, words * 8);
  if (raw.size() != words * 8) return std::nullopt;
  std::vector<int> fds;
  for (std::uint64_t fd = 0; fd < nfds; ++fd) {
    std::uint64_t word;
    std::memcpy(&word, raw.data() + (fd / 64) * 8, 8);
    if (word >> (fd % 64) & 1) fds.push_back(static_cast<int>(fd));
  }
  return fds;
}

namespace {

std::optional<Duration> read_pair(MemoryReader& memory, Addr address, std::int64_t per_second, std::int64_t scale) {
  if (address == 0) return std::nullopt;
  auto sec = memory.read_value<std::int64_t>(address);
  auto frac = memory.read_value<std::int64_t>(address + 8);
  if (!sec || !frac || *sec < 0 || *frac < 0 || *frac >= per_second) return std::nullopt;
  return Duration{*sec, *frac * scale};
}

}  // namespace

std::optional<Duration> read_timespec(MemoryReader& memory, Addr address) {
  return read_pair(memory, address, 1000000000, 1);
}

std::optional<Duration> read_timeval(MemoryReader& memory, Addr address) {
  return read_pair(memory, address, 1000000, 1000);
}

std::optional<FileLockRange> read_flock(MemoryReader& memory, Addr address) {
  constexpr std::size_t kSize = 32;
  if (address == 0) return std::nullopt;
  std::vector<std::uint8_t> raw = memory.read_bytes(address, kSize);
  if (raw.size() != kSize) return std::nullopt;
  FileLockRange r;
  std::memcpy(&r.type, raw.data(), 2);
  std::memcpy(&r.whence, raw.data() + 2, 2);
  std::memcpy(&r.start, raw.data() + 8, 8);
  std::memcpy(&r.length, raw.data() + 16, 8);
  std::memcpy(&r.pid, raw.data() + 24, 4);
  if (r.type < 0 || r.type > 2 || r.whence < 0 || r.whence > 2) return std::nullopt;
  return r;
}

}  // namespace pyhang::linux_abi
