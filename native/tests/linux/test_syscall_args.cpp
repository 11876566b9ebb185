// Kernel ABI structures behind system call pointers: pollfd arrays, fd_sets,
// timespec and timeval, read from synthetic memory, garbage included.
#include <catch2/catch.hpp>
#include <cstring>

#include "pyhang/linux/syscall_args.hpp"

using namespace pyhang;
using namespace pyhang::linux_abi;

namespace {

std::vector<std::uint8_t> pollfds(std::initializer_list<std::pair<int, short>> entries) {
  std::vector<std::uint8_t> out;
  for (auto [fd, events] : entries) {
    std::uint8_t raw[8] = {};
    std::memcpy(raw, &fd, 4);
    std::memcpy(raw + 4, &events, 2);
    out.insert(out.end(), raw, raw + 8);
  }
  return out;
}

std::vector<std::uint8_t> pair64(std::int64_t a, std::int64_t b) {
  std::vector<std::uint8_t> out(16);
  std::memcpy(out.data(), &a, 8);
  std::memcpy(out.data() + 8, &b, 8);
  return out;
}

}  // namespace

TEST_CASE("a pollfd array gives each fd with the events it waits for", "[syscall_args]") {
  ImageReader m;
  m.add(0x1000, pollfds({{3, 1}, {7, 4}, {-1, 1}}));
  auto got = read_pollfds(m, 0x1000, 3);
  REQUIRE(got);
  REQUIRE(got->size() == 3);
  CHECK((*got)[0].fd == 3);
  CHECK((*got)[0].events == 1);
  CHECK((*got)[1].fd == 7);
  CHECK((*got)[1].events == 4);
  CHECK((*got)[2].fd == -1);
}

TEST_CASE("a pollfd array is read up to its bound, and not at all when cut short", "[syscall_args]") {
  ImageReader m;
  m.add(0x1000, pollfds({{3, 1}, {4, 1}}));
  auto bounded = read_pollfds(m, 0x1000, 1ULL << 40, 2);
  REQUIRE(bounded);
  CHECK(bounded->size() == 2);
  CHECK_FALSE(read_pollfds(m, 0x1000, 3));   // the third entry is unmapped
  CHECK_FALSE(read_pollfds(m, 0, 1));
  auto none = read_pollfds(m, 0, 0);
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("an fd_set gives the fds whose bits are set below nfds", "[syscall_args]") {
  ImageReader m;
  std::vector<std::uint8_t> set(16, 0);
  set[0] = 0x09;        // fds 0 and 3
  set[8] = 0x02;        // fd 65
  m.add(0x2000, set);
  auto got = read_fd_set(m, 0x2000, 66);
  REQUIRE(got);
  CHECK(*got == std::vector<int>{0, 3, 65});
  auto below = read_fd_set(m, 0x2000, 3);   // fd 3 is not below nfds 3
  REQUIRE(below);
  CHECK(*below == std::vector<int>{0});
  CHECK_FALSE(read_fd_set(m, 0x2000, 129));  // the second word is all there is
  CHECK_FALSE(read_fd_set(m, 0x2000, 5000));  // beyond __FD_SETSIZE
  CHECK_FALSE(read_fd_set(m, 0, 8));
}

TEST_CASE("timespec and timeval give a duration, garbage none", "[syscall_args]") {
  ImageReader m;
  m.add(0x3000, pair64(3600, 500000000));
  m.add(0x4000, pair64(2, 250000));
  m.add(0x5000, pair64(-1, 0));
  m.add(0x6000, pair64(1, 1000000000));
  auto ts = read_timespec(m, 0x3000);
  REQUIRE(ts);
  CHECK(ts->seconds == 3600);
  CHECK(ts->nanoseconds == 500000000);
  auto tv = read_timeval(m, 0x4000);
  REQUIRE(tv);
  CHECK(tv->seconds == 2);
  CHECK(tv->nanoseconds == 250000000);
  CHECK_FALSE(read_timespec(m, 0x5000));   // negative
  CHECK_FALSE(read_timespec(m, 0x6000));   // nanoseconds out of range
  CHECK_FALSE(read_timeval(m, 0x3000));    // 500000000 µs is not a timeval
  CHECK_FALSE(read_timespec(m, 0x7000));   // unmapped
  CHECK_FALSE(read_timespec(m, 0));
}

namespace {

std::vector<std::uint8_t> flock_bytes(short type, short whence, std::int64_t start, std::int64_t length, int pid) {
  std::vector<std::uint8_t> out(32);
  std::memcpy(out.data(), &type, 2);
  std::memcpy(out.data() + 2, &whence, 2);
  std::memcpy(out.data() + 8, &start, 8);
  std::memcpy(out.data() + 16, &length, 8);
  std::memcpy(out.data() + 24, &pid, 4);
  return out;
}

}  // namespace

TEST_CASE("a struct flock gives the range an fcntl lock wait wants, and garbage gives none", "[syscall_args]") {
  ImageReader m;
  m.add(0x1000, flock_bytes(1, 0, 100, 50, 0));
  auto got = read_flock(m, 0x1000);
  REQUIRE(got);
  CHECK(got->type == 1);
  CHECK(got->whence == 0);
  CHECK(got->start == 100);
  CHECK(got->length == 50);
  m.add(0x2000, flock_bytes(7, 0, 0, 0, 0));   // no such lock type
  CHECK_FALSE(read_flock(m, 0x2000));
  m.add(0x3000, flock_bytes(0, 9, 0, 0, 0));   // no such whence
  CHECK_FALSE(read_flock(m, 0x3000));
  m.add(0x4000, std::vector<std::uint8_t>(16)); // cut short
  CHECK_FALSE(read_flock(m, 0x4000));
  CHECK_FALSE(read_flock(m, 0));
}
