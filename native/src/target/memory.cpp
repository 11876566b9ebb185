#include "pyhang/target/memory.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace pyhang {

// ---------------------------------------------------------------- base ----

void MemoryReader::read_batch(std::span<ReadRequest> requests) {
  for (auto& r : requests) r.done = read_partial(r.addr, r.buf, r.size);
}

std::optional<std::string> MemoryReader::read_cstring(Addr addr, std::size_t max_len) {
  std::string out;
  char chunk[256];
  while (out.size() < max_len) {
    // Never cross a page boundary in one read: the next page may be unmapped.
    std::size_t to_page_end = 4096 - static_cast<std::size_t>((addr + out.size()) % 4096);
    std::size_t want = std::min({sizeof(chunk), to_page_end, max_len - out.size()});
    std::size_t got = read_partial(addr + out.size(), chunk, want);
    if (got == 0) return std::nullopt;
    const char* nul = static_cast<const char*>(std::memchr(chunk, 0, got));
    if (nul) {
      out.append(chunk, nul - chunk);
      return out;
    }
    out.append(chunk, got);
    if (got < want) return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::uint8_t> MemoryReader::read_bytes(Addr addr, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  out.resize(read_partial(addr, out.data(), n));
  return out;
}

// ---------------------------------------------------------------- live ----

LiveReader::LiveReader(int pid) : pid_(pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  mem_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (mem_fd_ < 0 && ::kill(pid, 0) != 0 && errno == ESRCH)
    throw Error(ErrorReason::NoSuchProcess, "process " + std::to_string(pid) + " does not exist");
}

LiveReader::~LiveReader() {
  if (mem_fd_ >= 0) ::close(mem_fd_);
}

std::string LiveReader::describe() const { return "live process " + std::to_string(pid_); }

std::size_t LiveReader::read_mem_file(Addr addr, void* buf, std::size_t n) {
  if (mem_fd_ < 0) return 0;
  std::size_t done = 0;
  while (done < n) {
    ++stats_.syscalls;
    ssize_t got = ::pread64(mem_fd_, static_cast<char*>(buf) + done, n - done, static_cast<off64_t>(addr + done));
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

std::size_t LiveReader::read_partial(Addr addr, void* buf, std::size_t n) {
  ReadRequest r{addr, buf, n, 0};
  read_batch(std::span<ReadRequest>(&r, 1));
  return r.done;
}

void LiveReader::read_batch(std::span<ReadRequest> requests) {
  ++stats_.calls;
  std::size_t i = 0;
  while (i < requests.size()) {
    if (!vm_readv_ok_) {
      for (; i < requests.size(); ++i) {
        requests[i].done = read_mem_file(requests[i].addr, requests[i].buf, requests[i].size);
        stats_.bytes += requests[i].done;
      }
      return;
    }
    // process_vm_readv stops at the first remote range it cannot read and
    // reports the bytes before it; requests are retried one by one from there.
    std::size_t count = std::min<std::size_t>(requests.size() - i, IOV_MAX);
    std::vector<iovec> local(count), remote(count);
    for (std::size_t k = 0; k < count; ++k) {
      auto& r = requests[i + k];
      local[k] = {r.buf, r.size};
      remote[k] = {reinterpret_cast<void*>(r.addr), r.size};
    }
    ++stats_.syscalls;
    ssize_t got = ::process_vm_readv(pid_, local.data(), count, remote.data(), count, 0);
    if (got < 0) {
      if (errno == ENOSYS || errno == EPERM) {
        vm_readv_ok_ = false;
        continue;
      }
      got = 0;
    }
    std::size_t left = static_cast<std::size_t>(got);
    std::size_t k = 0;
    for (; k < count && left >= requests[i + k].size; ++k) {
      requests[i + k].done = requests[i + k].size;
      left -= requests[i + k].size;
    }
    stats_.bytes += static_cast<std::size_t>(got);
    if (k == count) {
      i += count;
      continue;
    }
    // Request i+k failed part-way: finish it through /proc/PID/mem, which
    // reads up to the exact unreadable byte, then go on after it.
    auto& r = requests[i + k];
    r.done = left;
    if (left < r.size) r.done += read_mem_file(r.addr + left, static_cast<char*>(r.buf) + left, r.size - left);
    i += k + 1;
  }
}

// ------------------------------------------------------------ callback ----

CallbackReader::CallbackReader(Fn fn, std::string description)
    : fn_(std::move(fn)), description_(std::move(description)) {}

std::size_t CallbackReader::read_partial(Addr addr, void* buf, std::size_t n) {
  ++stats_.calls;
  ++stats_.syscalls;
  std::size_t got = fn_(addr, buf, n);
  stats_.bytes += got;
  return got;
}

// --------------------------------------------------------------- image ----

void ImageReader::add(Addr addr, std::vector<std::uint8_t> bytes) {
  auto it = std::lower_bound(regions_.begin(), regions_.end(), addr,
                             [](const auto& r, Addr a) { return r.first < a; });
  regions_.insert(it, {addr, std::move(bytes)});
}

void ImageReader::add(Addr addr, const void* data, std::size_t n) {
  auto p = static_cast<const std::uint8_t*>(data);
  add(addr, std::vector<std::uint8_t>(p, p + n));
}

std::size_t ImageReader::read_partial(Addr addr, void* buf, std::size_t n) {
  ++stats_.calls;
  std::size_t done = 0;
  while (done < n) {
    Addr a = addr + done;
    // Last region starting at or before a.
    auto it = std::upper_bound(regions_.begin(), regions_.end(), a,
                               [](Addr x, const auto& r) { return x < r.first; });
    if (it == regions_.begin()) break;
    --it;
    Addr end = it->first + it->second.size();
    if (a >= end) break;
    std::size_t take = std::min<std::size_t>(n - done, end - a);
    std::memcpy(static_cast<char*>(buf) + done, it->second.data() + (a - it->first), take);
    done += take;
  }
  stats_.bytes += done;
  return done;
}

// -------------------------------------------------------------- cached ----

CachedReader::CachedReader(std::shared_ptr<MemoryReader> source, std::size_t max_pages)
    : source_(std::move(source)), max_pages_(max_pages) {}

void CachedReader::invalidate() {
  pages_.clear();
  source_->invalidate();
}

const ReaderStats& CachedReader::stats() const {
  merged_ = source_->stats();
  merged_.cache_hits = stats_.cache_hits;
  merged_.cache_misses = stats_.cache_misses;
  return merged_;
}

void CachedReader::fetch(std::span<const Addr> page_addrs) {
  if (pages_.size() + page_addrs.size() > max_pages_) pages_.clear();
  // Adjacent pages become one request of the source; the whole set one batch.
  std::vector<std::unique_ptr<std::uint8_t[]>> buffers;
  std::vector<ReadRequest> reqs;
  std::vector<std::pair<Addr, std::size_t>> runs;  // first page, page count
  for (std::size_t i = 0; i < page_addrs.size();) {
    std::size_t j = i + 1;
    while (j < page_addrs.size() && page_addrs[j] == page_addrs[j - 1] + kPageSize) ++j;
    runs.push_back({page_addrs[i], j - i});
    i = j;
  }
  for (auto& [first, count] : runs) {
    buffers.push_back(std::make_unique<std::uint8_t[]>(count * kPageSize));
    reqs.push_back({first, buffers.back().get(), count * kPageSize, 0});
  }
  stats_.cache_misses += page_addrs.size();
  source_->read_batch(reqs);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    auto [first, count] = runs[r];
    for (std::size_t p = 0; p < count; ++p) {
      Page page;
      std::size_t start = p * kPageSize;
      std::size_t valid = reqs[r].done > start ? std::min(kPageSize, reqs[r].done - start) : 0;
      if (valid > 0) {
        page.data = std::make_unique<std::uint8_t[]>(kPageSize);
        std::memcpy(page.data.get(), buffers[r].get() + start, valid);
      }
      // A run that failed part-way may have failed on this page only because
      // an earlier one did not read: look at this page alone once.
      if (valid < kPageSize && reqs[r].done <= start && count > 1) {
        auto buf = std::make_unique<std::uint8_t[]>(kPageSize);
        std::size_t got = source_->read_partial(first + start, buf.get(), kPageSize);
        if (got > 0) {
          page.data = std::move(buf);
          valid = got;
        }
      }
      page.valid = valid;
      page.readable = valid > 0;
      pages_[first + start] = std::move(page);
    }
  }
}

const CachedReader::Page& CachedReader::page(Addr page_addr) {
  auto it = pages_.find(page_addr);
  if (it != pages_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  fetch(std::span<const Addr>(&page_addr, 1));
  return pages_[page_addr];
}

std::size_t CachedReader::read_partial(Addr addr, void* buf, std::size_t n) {
  if (n == 0) return 0;
  if (addr + n < addr) n = ~Addr{0} - addr;  // no wrap-around
  // Fetch every missing page of the range in one batch first.
  Addr first = addr & ~(kPageSize - 1);
  Addr last = (addr + n - 1) & ~(kPageSize - 1);
  std::vector<Addr> missing;
  for (Addr p = first;; p += kPageSize) {
    if (!pages_.count(p)) missing.push_back(p);
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
      if (!pages_.count(p)) missing.push_back(p);
      if (p >= last) break;
    }
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (!missing.empty()) fetch(missing);
  for (auto& r : requests) r.done = read_partial(r.addr, r.buf, r.size);
}

}  // namespace pyhang
