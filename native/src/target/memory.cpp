#include "pyhang/target/memory.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <unordered_set>

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

void prefetch(MemoryReader& memory, std::span<const Addr> addresses) {
  std::vector<std::uint64_t> sink(addresses.size());
  std::vector<ReadRequest> requests;
  requests.reserve(addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i)
    if (addresses[i] >= 4096) requests.push_back({addresses[i], &sink[i], sizeof(std::uint64_t), 0});
  memory.read_batch(requests);
}

void in_prefetched_runs(MemoryReader& memory, std::size_t n,
                        const std::function<void(std::size_t, std::vector<Addr>&)>& pages_of,
                        const std::function<void(std::size_t)>& each) {
  const std::size_t bound = memory.batch_pages();
  if (bound == 0) {
    for (std::size_t i = 0; i < n; ++i) each(i);
    return;
  }
  constexpr Addr kPage = 4096;
  std::vector<Addr> run, item;
  std::unordered_set<Addr> pages;
  for (std::size_t first = 0; first < n;) {
    std::size_t last = first;
    run.clear();
    pages.clear();
    for (; last < n; ++last) {
      item.clear();
      pages_of(last, item);
      std::size_t added = 0;
      for (Addr a : item) added += a >= kPage && !pages.count(a & ~(kPage - 1));
      if (last > first && pages.size() + added > bound) break;  // the next run's first
      for (Addr a : item) {
        if (a < kPage || !pages.insert(a & ~(kPage - 1)).second) continue;
        run.push_back(a);
      }
    }
    prefetch(memory, run);
    for (std::size_t i = first; i < last; ++i) each(i);
    first = last;
  }
}

StableRead read_stable(MemoryReader& memory, Addr addr, std::size_t n, unsigned max_reads) {
  StableRead out;
  if (n > kMaxStableRead) return out;
  MemoryReader& source = memory.uncached();
  std::vector<std::uint8_t> last(n), next(n);
  max_reads = std::max(max_reads, 2u);
  for (out.reads = 1; out.reads <= max_reads; ++out.reads) {
    std::vector<std::uint8_t>& into = out.reads == 1 ? last : next;
    if (!source.read(addr, into.data(), n)) return out;
    if (out.reads == 1) continue;
    if (next == last) {
      out.state = Stability::Stable;
      out.bytes = std::move(next);
      return out;
    }
    std::swap(last, next);
  }
  out.reads = max_reads;
  out.state = Stability::Unstable;
  return out;
}

// ---------------------------------------------------------------- live ----

LiveReader::LiveReader(int pid) : pid_(pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  mem_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (mem_fd_ < 0 && ::kill(pid, 0) != 0 && errno == ESRCH)
    throw Error(ErrorReason::NoSuchProcess, "/proc/" + std::to_string(pid), pid);
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

}  // namespace pyhang
