// The arguments of a blocking system call that live in target memory: the
// pollfd array of poll/ppoll, the fd_set bitmaps of select/pselect6, and the
// timespec/timeval of a sleep or a timeout.  Which register points at which
// is the caller's business (pyhang.analysis.syscalls names every call); this
// decodes the kernel ABI structures behind the pointers, every read bounded
// and a short read an empty answer.
//
// Layouts: Linux include/uapi/asm-generic/poll.h (struct pollfd: int fd,
// short events, short revents: 8 bytes), include/uapi/linux/posix_types.h
// (__kernel_fd_set: __FD_SETSIZE bits in unsigned longs, bit fd%64 of word
// fd/64), include/uapi/linux/time_types.h (__kernel_timespec: s64 tv_sec,
// long long tv_nsec) and include/uapi/linux/time.h (timeval on x86_64: long
// tv_sec, long tv_usec), include/uapi/asm-generic/fcntl.h (struct flock on
// x86_64: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t
// l_pid: 32 bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "pyhang/base/types.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::linux_abi {

inline constexpr std::size_t kMaxPollFds = 4096;   // read at most this many pollfds
inline constexpr std::uint64_t kFdSetSize = 1024;  // __FD_SETSIZE

struct PollFd {
  std::int32_t fd = -1;
  std::int16_t events = 0;
};

// The first min(count, max) entries of a pollfd array; nullopt when it
// cannot be read whole.
std::optional<std::vector<PollFd>> read_pollfds(MemoryReader& memory, Addr address, std::uint64_t count,
                                                std::size_t max = kMaxPollFds);

// The fds set in an fd_set of `nfds` bits (select's first argument), in
// ascending order; nullopt when it cannot be read or nfds exceeds
// __FD_SETSIZE (the kernel would have refused the call).
std::optional<std::vector<int>> read_fd_set(MemoryReader& memory, Addr address, std::uint64_t nfds);

struct Duration {
  std::int64_t seconds = 0;
  std::int64_t nanoseconds = 0;
};

// A timespec (nanoseconds) or a timeval (microseconds); nullopt when it
// cannot be read or is not one the kernel accepts (negative, or the
// fraction out of range).
std::optional<Duration> read_timespec(MemoryReader& memory, Addr address);
std::optional<Duration> read_timeval(MemoryReader& memory, Addr address);

// The byte range an fcntl F_SETLKW / F_OFD_SETLKW waits to lock.
struct FileLockRange {
  std::int16_t type = 0;      // F_RDLCK 0, F_WRLCK 1, F_UNLCK 2
  std::int16_t whence = 0;    // SEEK_SET 0, SEEK_CUR 1, SEEK_END 2
  std::int64_t start = 0;
  std::int64_t length = 0;    // 0: to the end of the file, however long it grows
  std::int32_t pid = 0;       // F_OFD_SETLKW: must be 0
};

// A struct flock; nullopt when it cannot be read or is not one the kernel
// accepts for a lock (a type or whence out of range).
std::optional<FileLockRange> read_flock(MemoryReader& memory, Addr address);

}  // namespace pyhang::linux_abi
