// The page cache every target reads through (pyhang/target/memory.hpp has
// the sources it sits in front of).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <unordered_map>

#include "pyhang/target/memory.hpp"

namespace pyhang {

// Page cache in front of any source.  Misses are fetched a run of pages at a
// time, batches are turned into one batch of the source; unreadable pages
// are remembered too.
//
// Two halves: pages fetched go to the young half; when it is full, the old
// half is dropped and the young becomes the old.  A page read again from the
// old half moves back to the young, so the pages every thread's read shares
// (code objects, the interpreter, a lock all threads wait on) stay while each
// thread's own pages pass through.  Dropping a half for room is not a change
// of the memory: generation() moves only at invalidate().
class CachedReader final : public MemoryReader {
 public:
  static constexpr std::size_t kPageSize = 4096;
  // At most max_pages pages are kept (32 MiB by default): pyhang must add
  // little to the memory of the gdb it runs in, whatever the target's size.
  // (A batch larger than half of it is kept whole until the next miss.)
  explicit CachedReader(std::shared_ptr<MemoryReader> source, std::size_t max_pages = 8192);
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) override;
  void read_batch(std::span<ReadRequest> requests) override;
  std::string describe() const override { return source_->describe(); }
  MemoryReader& uncached() override { return source_->uncached(); }
  void invalidate() override;
  const ReaderStats& stats() const override;
  std::uint64_t generation() const override { return generation_; }
  MemoryReader& source() { return *source_; }
  // The pages a batch may bring in and find all still kept when it is used: half of max_pages.
  std::size_t batch_pages() const override { return half_; }

 private:
  struct Page {
    bool readable = false;
    std::size_t valid = 0;  // bytes readable from the start of the page
    std::unique_ptr<std::uint8_t[]> data;
  };
  const Page& page(Addr page_addr);
  // The cached page at page_addr, or nullptr: a direct-mapped table of the
  // pages read last in front of the map (a report reads the same few pages
  // of a frame or an object many times in a row).
  const Page* cached(Addr page_addr);
  void forget();  // every page
  void make_room(std::size_t pages);  // for `pages` more in the young half: the old one dropped if need be
  void fetch(std::span<const Addr> page_addrs);
  std::shared_ptr<MemoryReader> source_;
  std::size_t half_;
  // Node-based: a Page stays where it is until erased, and a node moved from old_ to pages_ keeps its
  // address (extract/insert).
  std::unordered_map<Addr, Page> pages_;  // the young half
  std::unordered_map<Addr, Page> old_;
  static constexpr std::size_t kRecent = 64;
  struct Recent {
    Addr page_addr = 1;  // never a page address
    const Page* page = nullptr;
  };
  std::array<Recent, kRecent> recent_{};
  std::uint64_t generation_ = 0;
  mutable ReaderStats merged_;
};

}  // namespace pyhang
