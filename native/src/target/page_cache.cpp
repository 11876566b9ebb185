#include "pyhang/target/page_cache.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pyhang {

CachedReader::CachedReader(std::shared_ptr<MemoryReader> source, std::size_t max_pages)
    : source_(std::move(source)), half_(std::max<std::size_t>(1, max_pages / 2)) {}

void CachedReader::invalidate() {
  forget();
  ++generation_;
  source_->invalidate();
}

void CachedReader::forget() {
  recent_.fill(Recent{});
  pages_.clear();
  old_.clear();
}

void CachedReader::make_room(std::size_t pages) {
  if (pages_.size() + pages <= half_) return;
  // The old half goes (and every pointer the recent table holds into it); the young becomes the old.
  recent_.fill(Recent{});
  old_ = std::move(pages_);
  pages_.clear();
}

const CachedReader::Page* CachedReader::cached(Addr page_addr) {
  Recent& r = recent_[(page_addr / kPageSize) % kRecent];
  if (r.page_addr == page_addr) return r.page;
  auto it = pages_.find(page_addr);
  if (it == pages_.end()) {
    auto old = old_.find(page_addr);
    if (old == old_.end()) return nullptr;
    // Read again: back to the young half, the node (and its Page) where it was.
    auto node = old_.extract(old);
    make_room(1);
    it = pages_.insert(std::move(node)).position;
  }
  r = {page_addr, &it->second};
  return &it->second;
}

const ReaderStats& CachedReader::stats() const {
  merged_ = source_->stats();
  merged_.cache_hits = stats_.cache_hits;
  merged_.cache_misses = stats_.cache_misses;
  return merged_;
}

void CachedReader::fetch(std::span<const Addr> page_addrs) {
  make_room(page_addrs.size());  // (none of page_addrs is kept: cached() found none of them)
  // One request per page, each read straight into the buffer the cache keeps
  // (no staging copy: every buffer is fresh memory to fault in); the source
  // reads the set as one batch, adjacent pages in as few system calls as it
  // can, and reports each page's own bytes, so an unreadable page fails alone.
  std::vector<std::unique_ptr<std::uint8_t[]>> buffers(page_addrs.size());
  std::vector<ReadRequest> reqs(page_addrs.size());
  for (std::size_t i = 0; i < page_addrs.size(); ++i) {
    buffers[i] = std::make_unique_for_overwrite<std::uint8_t[]>(kPageSize);
    reqs[i] = {page_addrs[i], buffers[i].get(), kPageSize, 0};
  }
  stats_.cache_misses += page_addrs.size();
  source_->read_batch(reqs);
  for (std::size_t i = 0; i < page_addrs.size(); ++i) {
    Page page;
    page.valid = std::min(kPageSize, reqs[i].done);
    page.readable = page.valid > 0;
    if (page.readable) page.data = std::move(buffers[i]);
    pages_[page_addrs[i]] = std::move(page);  // (a page fetched again is assigned in place: its Page* stays valid)
  }
}

const CachedReader::Page& CachedReader::page(Addr page_addr) {
  if (const Page* p = cached(page_addr)) {
    ++stats_.cache_hits;
    return *p;
  }
  fetch(std::span<const Addr>(&page_addr, 1));
  return pages_[page_addr];
}

std::size_t CachedReader::read_partial(Addr addr, void* buf, std::size_t n) {
  if (n == 0) return 0;
  if (addr + n < addr) n = ~Addr{0} - addr;  // no wrap-around
  Addr first = addr & ~(kPageSize - 1);
  Addr last = (addr + n - 1) & ~(kPageSize - 1);
  if (first == last) {  // within one page already read: most reads
    if (const Page* pg = cached(first)) {
      ++stats_.cache_hits;
      std::size_t in_page = addr - first;
      if (!pg->readable || in_page >= pg->valid) return 0;
      std::size_t take = std::min(n, pg->valid - in_page);
      std::memcpy(buf, pg->data.get() + in_page, take);
      return take;
    }
  }
  // Fetch every missing page of the range in one batch first.
  std::vector<Addr> missing;
  for (Addr p = first;; p += kPageSize) {
    if (!cached(p)) missing.push_back(p);
    if (p == last) break;
  }
  if (!missing.empty()) fetch(missing);
  std::size_t done = 0;
  while (done < n) {
    Addr a = addr + done;
    Addr p = a & ~(kPageSize - 1);
    const Page& pg = page(p);
    std::size_t in_page = a - p;
    if (!pg.readable || in_page >= pg.valid) break;
    std::size_t take = std::min(n - done, pg.valid - in_page);
    std::memcpy(static_cast<char*>(buf) + done, pg.data.get() + in_page, take);
    done += take;
    if (pg.valid < kPageSize) break;
  }
  return done;
}

void CachedReader::read_batch(std::span<ReadRequest> requests) {
  std::vector<Addr> missing;
  for (auto& r : requests) {
    if (r.size == 0) continue;
    Addr first = r.addr & ~(kPageSize - 1);
    Addr last = (r.addr + r.size - 1) & ~(kPageSize - 1);
    for (Addr p = first;; p += kPageSize) {
      if (!cached(p)) missing.push_back(p);
      if (p >= last) break;
    }
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (!missing.empty()) fetch(missing);
  for (auto& r : requests) r.done = read_partial(r.addr, r.buf, r.size);
}

}  // namespace pyhang
