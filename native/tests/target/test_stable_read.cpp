// Reading memory a running thread may be writing: read_stable gives the
// bytes once two reads in a row agree, "unstable" when they keep differing
// within the bound, "unreadable" on a short read; and it reads past any
// page cache.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>

#include "pyhang/target/page_cache.hpp"
#include "pyhang/target/target.hpp"

using namespace pyhang;

namespace {

// Memory whose 8 bytes change on each of the first `changes` reads.
class Changing final : public MemoryReader {
 public:
  explicit Changing(unsigned changes) : changes_(changes) {}
  std::size_t read_partial(Addr, void* buf, std::size_t n) override {
    ++reads;
    const std::uint64_t v = reads <= changes_ ? reads : changes_;
    std::memset(buf, 0, n);
    std::memcpy(buf, &v, std::min(n, sizeof v));
    return n;
  }
  std::string describe() const override { return "changing"; }
  unsigned reads = 0;

 private:
  unsigned changes_;
};

}  // namespace

TEST_CASE("memory that holds still reads as stable in two reads", "[target][stable]") {
  Changing still(0);
  const StableRead r = read_stable(still, 0x1000, 8);
  CHECK(r.state == Stability::Stable);
  CHECK(r.reads == 2);
  CHECK(r.bytes == std::vector<std::uint8_t>(8, 0));
}

TEST_CASE("memory that settles is read until two reads agree", "[target][stable]") {
  Changing settling(3);  // reads 1, 2, 3, 3
  const StableRead r = read_stable(settling, 0x1000, 8, 6);
  CHECK(r.state == Stability::Stable);
  CHECK(r.reads == 4);
  CHECK(r.bytes[0] == 3);
}

TEST_CASE("memory that keeps changing is unstable after the bounded reads, with no bytes", "[target][stable]") {
  Changing busy(1000);
  const StableRead r = read_stable(busy, 0x1000, 8, 5);
  CHECK(r.state == Stability::Unstable);
  CHECK(r.bytes.empty());
  CHECK(r.reads == 5);
  CHECK(busy.reads == 5);
  CHECK(to_string(r.state) == "unstable");
  SECTION("at least two reads, whatever the bound") {
    Changing two(1000);
    CHECK(read_stable(two, 0x1000, 8, 0).reads == 2);
  }
}

TEST_CASE("a short read or an oversized range is unreadable", "[target][stable]") {
  ImageReader image;
  image.add(0x1000, std::vector<std::uint8_t>(16, 7));
  CHECK(read_stable(image, 0x1008, 16).state == Stability::Unreadable);
  CHECK(read_stable(image, 0x1000, kMaxStableRead + 1).state == Stability::Unreadable);
  const StableRead ok = read_stable(image, 0x1000, 16);
  CHECK(ok.state == Stability::Stable);
  CHECK(ok.bytes == std::vector<std::uint8_t>(16, 7));
}

TEST_CASE("a live target's changing memory is read past its page cache", "[target][stable][live]") {
  auto target = Target::live(::getpid());
  static std::atomic<std::uint64_t> word{1};
  const Addr at = reinterpret_cast<Addr>(&word);
  // Through the cache: the first read fills the page, later ones see it.
  REQUIRE(target->memory().read_value<std::uint64_t>(at) == 1u);
  word = 2;
  CHECK(target->memory().read_value<std::uint64_t>(at) == 1u);
  const StableRead r = read_stable(target->memory(), at, 8);
  REQUIRE(r.state == Stability::Stable);
  std::uint64_t seen = 0;
  std::memcpy(&seen, r.bytes.data(), 8);
  CHECK(seen == 2u);
}
