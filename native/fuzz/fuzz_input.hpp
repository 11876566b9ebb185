// Reading a fuzzer's input as fields, and the memory images the targets
// share (add_memory).  make_corpus.cpp writes seeds in the same format.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "pyhang/target/memory.hpp"

namespace pyhang::fuzz {

// Fields from the front of the input; past its end every field reads zero.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data, size) {}
  std::size_t remaining() const { return data_.size() - pos_; }
  std::uint8_t u8() { return fixed<std::uint8_t>(); }
  std::uint16_t u16() { return fixed<std::uint16_t>(); }
  std::uint32_t u32() { return fixed<std::uint32_t>(); }
  std::uint64_t u64() { return fixed<std::uint64_t>(); }
  std::span<const std::uint8_t> take(std::size_t n) {
    n = std::min(n, remaining());
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::span<const std::uint8_t> rest() { return take(remaining()); }

 private:
  template <class T>
  T fixed() {
    T v{};
    auto s = take(sizeof(T));
    std::memcpy(&v, s.data(), s.size());
    return v;
  }
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

inline constexpr std::size_t kMaxRegions = 256;
inline constexpr std::size_t kMaxZeroed = std::size_t{1} << 16;

// The rest of the input as target memory: [u64 base][u32 size] of zeroed
// memory (at most kMaxZeroed bytes), then regions written over it, or
// beside it where they do not fit in it.
inline void add_memory(Input& in, ImageReader& memory) {
  const std::uint64_t base = in.u64();
  std::vector<std::uint8_t> zeroed(std::min<std::size_t>(in.u32(), kMaxZeroed), 0);
  for (std::size_t i = 0; i < kMaxRegions && in.remaining() >= 10; ++i) {
    const std::uint64_t addr = in.u64();
    auto bytes = in.take(in.u16());
    if (addr >= base && addr - base <= zeroed.size() && bytes.size() <= zeroed.size() - (addr - base))
      std::copy(bytes.begin(), bytes.end(), zeroed.begin() + static_cast<std::ptrdiff_t>(addr - base));
    else
      memory.add(addr, bytes.data(), bytes.size());
  }
  if (!zeroed.empty()) memory.add(base, std::move(zeroed));
}

// The writer of the same format, for seeds.
struct Output {
  std::vector<std::uint8_t> bytes;
  template <class T>
  Output& fixed(T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
    return *this;
  }
  Output& u8(std::uint8_t v) { return fixed(v); }
  Output& u16(std::uint16_t v) { return fixed(v); }
  Output& u32(std::uint32_t v) { return fixed(v); }
  Output& u64(std::uint64_t v) { return fixed(v); }
  Output& add(std::span<const std::uint8_t> b) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    return *this;
  }
  // Memory at `base` in add_memory()'s format: zeroed, and the runs of
  // bytes that are not zero as regions.
  Output& memory(std::uint64_t base, std::span<const std::uint8_t> mem) {
    u64(base).u32(static_cast<std::uint32_t>(mem.size()));
    std::size_t i = 0;
    while (i < mem.size()) {
      while (i < mem.size() && mem[i] == 0) ++i;
      if (i == mem.size()) break;
      std::size_t end = i, zeros = 0;
      while (end < mem.size() && zeros < 16 && end - i < 0xffff) {
        zeros = mem[end] == 0 ? zeros + 1 : 0;
        ++end;
      }
      end -= zeros;
      u64(base + i).u16(static_cast<std::uint16_t>(end - i)).add(mem.subspan(i, end - i));
      i = end;
    }
    return *this;
  }
};

}  // namespace pyhang::fuzz
