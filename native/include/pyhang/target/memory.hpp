// Target memory: one interface, several sources (live process, core file,
// a callback into the debugger, byte images); the page cache in front of
// any of them is pyhang/target/page_cache.hpp.
//
// Unreadable memory is an ordinary outcome, never an exception: every read
// says how many bytes it got.  Only opening a source that cannot be opened
// at all throws (pyhang::Error, pyhang/base/error.hpp).  Decoders must treat a short read as "this
// object cannot be trusted" and move on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "pyhang/base/error.hpp"
#include "pyhang/base/names.hpp"
#include "pyhang/base/types.hpp"

namespace pyhang {

struct ReaderStats {
  std::uint64_t calls = 0;        // read requests that reached the source
  std::uint64_t syscalls = 0;     // system calls the source made for them
  std::uint64_t bytes = 0;        // bytes delivered by the source
  std::uint64_t cache_hits = 0;   // page-cache hits (CachedReader only)
  std::uint64_t cache_misses = 0; // pages fetched (CachedReader only)
};

// One read of a batch: `done` is set to the bytes read from the start of the
// range (a short count means the rest could not be read).
struct ReadRequest {
  Addr addr = 0;
  void* buf = nullptr;
  std::size_t size = 0;
  std::size_t done = 0;
};

class MemoryReader {
 public:
  virtual ~MemoryReader() = default;

  // Reads up to n bytes from addr; returns how many were read from the start.
  virtual std::size_t read_partial(Addr addr, void* buf, std::size_t n) = 0;

  // Reads several ranges; sources that can do this in fewer system calls
  // override it.
  virtual void read_batch(std::span<ReadRequest> requests);

  // The reader below any cache: for a large read whose bytes are looked at
  // once (a scan), which a cache would only copy into memory of its own.
  virtual MemoryReader& uncached() { return *this; }

  // One line for users: "live process 1234", "core file /tmp/core.1".
  virtual std::string describe() const = 0;

  // Forget anything remembered about the target (it ran again).
  virtual void invalidate() {}

  // Changes whenever bytes read before may read differently now (the
  // target ran again: invalidate()): what a decoder remembers of the bytes
  // it read holds while the generation is the same.  A cache that drops
  // pages to make room keeps its generation: what was read holds for the
  // look it was read in.
  virtual std::uint64_t generation() const { return 0; }

  // How many pages one batch (prefetch) may bring in and still find kept
  // when it is used; 0: no bound (a reader with no cache).
  virtual std::size_t batch_pages() const { return 0; }

  virtual const ReaderStats& stats() const { return stats_; }

  // All or nothing.
  bool read(Addr addr, void* buf, std::size_t n) { return n == 0 || read_partial(addr, buf, n) == n; }

  template <class T>
  std::optional<T> read_value(Addr addr) {
    T value;
    if (!read(addr, &value, sizeof(T))) return std::nullopt;
    return value;
  }

  std::optional<Addr> read_pointer(Addr addr) { return read_value<Addr>(addr); }

  // A NUL-terminated string of at most max_len bytes; nullopt when the
  // first byte cannot be read or no NUL is found within max_len.
  std::optional<std::string> read_cstring(Addr addr, std::size_t max_len = 4096);

  std::vector<std::uint8_t> read_bytes(Addr addr, std::size_t n);  // short on failure

 protected:
  ReaderStats stats_;
};

// The live process, while it is stopped (by gdb or anyone else):
// process_vm_readv with many ranges per call, /proc/PID/mem as fallback.
class LiveReader final : public MemoryReader {
 public:
  explicit LiveReader(int pid);
  ~LiveReader() override;
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) override;
  void read_batch(std::span<ReadRequest> requests) override;
  std::string describe() const override;
  int pid() const { return pid_; }

 private:
  std::size_t read_mem_file(Addr addr, void* buf, std::size_t n);
  int pid_;
  int mem_fd_ = -1;
  bool vm_readv_ok_ = true;
};

// ---- memory a running thread may be writing ----

// A process nobody stopped can change memory while it is read, and one read
// may then hold half of the old bytes and half of the new (a torn read).
enum class Stability : std::uint8_t {
  Stable,      // two reads in a row gave the same bytes
  Unstable,    // every pair of reads differed: the memory is being written
  Unreadable,  // a read came back short (or the range is over kMaxStableRead)
};
inline constexpr std::array<Named<Stability>, 3> kStabilityNames{{
    {Stability::Stable, "stable"},
    {Stability::Unstable, "unstable"},
    {Stability::Unreadable, "unreadable"},
}};
constexpr std::string_view to_string(Stability s) { return name_in(kStabilityNames, s); }

struct StableRead {
  Stability state = Stability::Unreadable;
  std::vector<std::uint8_t> bytes;  // the agreed bytes; empty unless Stable
  unsigned reads = 0;               // reads made
};

inline constexpr std::size_t kMaxStableRead = 1u << 20;
inline constexpr unsigned kStableReads = 4;

// Reads the pages holding `addresses` (8 bytes at each) in one batch, ahead
// of the reads that need them: behind a page cache, a thousand threads'
// stacks are then a few system calls instead of one a page.
void prefetch(MemoryReader& memory, std::span<const Addr> addresses);

// Calls each(i) for every i in [0, n), in order, in runs: before a run, the pages of the addresses
// pages_of(i, into) appends for each of its items are read in one batch, as many items as the
// reader keeps the pages of until their run is done (batch_pages()).  A reader with no cache
// (batch_pages() 0: a core's mapping) is read as each() reads, with nothing ahead.
void in_prefetched_runs(MemoryReader& memory, std::size_t n,
                        const std::function<void(std::size_t, std::vector<Addr>&)>& pages_of,
                        const std::function<void(std::size_t)>& each);

// Reads [addr, addr + n) until two reads in a row agree, at most max_reads
// reads (at least 2), through memory.uncached(): a page cache would answer
// the second read with the first's bytes.  Agreeing reads prove no write
// landed between them, not that none did before (a value changed and
// changed back reads as stable).
StableRead read_stable(MemoryReader& memory, Addr addr, std::size_t n, unsigned max_reads = kStableReads);

// Bytes through a function of the host (gdb's inferior.read_memory): the
// source of last resort, for targets pyhang cannot open itself.
class CallbackReader final : public MemoryReader {
 public:
  using Fn = std::function<std::size_t(Addr, void*, std::size_t)>;
  CallbackReader(Fn fn, std::string description);
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) override;
  std::string describe() const override { return description_; }

 private:
  Fn fn_;
  std::string description_;
};

// Memory made of byte regions: synthetic images in unit tests, recorded
// images in benchmarks.
class ImageReader final : public MemoryReader {
 public:
  void add(Addr addr, std::vector<std::uint8_t> bytes);
  void add(Addr addr, const void* data, std::size_t n);
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) override;
  std::string describe() const override { return "memory image"; }

 private:
  std::vector<std::pair<Addr, std::vector<std::uint8_t>>> regions_;  // sorted by address
};

}  // namespace pyhang
