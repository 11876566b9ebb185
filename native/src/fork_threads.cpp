// Thread descriptors left behind by fork, and glibc-internal locks fork
// does not reset (see pyhang/fork.hpp).
#include <elf.h>

#include <algorithm>
#include <cstring>

#include "pyhang/fork.hpp"
#include "pyhang/nptl.hpp"
#include "pyhang/target.hpp"

namespace pyhang::fork {

namespace {

constexpr Addr kTcbOffset = 0;    // tcbhead_t.tcb (x86_64)
constexpr Addr kSelfOffset = 16;  // tcbhead_t.self (x86_64)

// Mappings of a core: its PT_LOAD segments, named by NT_FILE where a file
// backs them (anonymous memory has no NT_FILE entry).
std::vector<Mapping> core_mappings(const Target& target) {
  std::vector<Mapping> out;
  const auto& core = target.core_file();
  if (!core) return out;
  std::shared_ptr<ElfFile> elf;
  try {
    elf = ElfFile::open(core->path());
  } catch (const ReaderError&) {
    return out;
  }
  for (const auto& seg : elf->segments()) {
    if (seg.type != PT_LOAD || seg.memsz == 0) continue;
    Mapping m;
    m.start = seg.vaddr;
    m.end = seg.vaddr + seg.memsz;
    m.perms = std::string(seg.flags & PF_R ? "r" : "-") + (seg.flags & PF_W ? "w" : "-") +
              (seg.flags & PF_X ? "x" : "-") + "p";
    for (const auto& f : core->file_mappings())
      if (f.start <= m.start && m.start < f.end) m.path = f.path;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

PthreadFields pthread_fields(const AddressSpace& space) {
  // The descriptors libthread_db reads, as nptl reads them for pthread_t → TID.
  PthreadFields f;
  auto d = nptl::read_descriptors(space);
  if (!d.descriptors) {
    f.problem = d.problem;
    return f;
  }
  const auto& desc = *d.descriptors;
  if (desc.tid.size_bits != 32 || desc.tid.count != 1) {
    f.problem = "unexpected _thread_db_pthread_tid descriptor in " + desc.source;
    return f;
  }
  f.tid = desc.tid.offset;
  f.cancelhandling = desc.cancelhandling ? std::int64_t{*desc.cancelhandling} : -1;
  f.start_routine = desc.start_routine ? std::int64_t{*desc.start_routine} : -1;
  f.size = desc.sizeof_pthread.value_or(0);
  f.source = desc.source.substr(0, desc.source.find(' '));
  return f;
}

DescriptorScan scan_thread_descriptors(MemoryReader& mem, const std::vector<Mapping>& mappings,
                                       const PthreadFields& fields, const std::vector<Addr>& own,
                                       const ScanOptions& opts) {
  DescriptorScan out;
  if (fields.tid < 0) {
    out.problem = fields.problem.empty() ? "no struct pthread field descriptors" : fields.problem;
    return out;
  }
  std::vector<std::uint8_t> buf;
  for (const auto& m : mappings) {
    if (out.mappings_scanned >= opts.max_mappings) {
      out.problem = "more than " + std::to_string(opts.max_mappings) + " candidate mappings; the rest not scanned";
      break;
    }
    if (!m.path.empty() || m.perms.size() < 2 || m.perms[0] != 'r' || m.perms[1] != 'w') continue;
    if (m.end <= m.start || m.end - m.start < opts.min_mapping) continue;
    // A stack of one of this process's threads holds that thread's own
    // descriptor (one per stack): nothing to find there, nothing to read.
    if (std::any_of(own.begin(), own.end(), [&](Addr a) { return a >= m.start && a < m.end; })) continue;
    ++out.mappings_scanned;
    Addr lo = std::max(m.start, m.end - std::min<std::uint64_t>(opts.top_bytes, m.end - m.start));
    buf.resize(static_cast<std::size_t>(m.end - lo));
    std::size_t got = mem.read_partial(lo, buf.data(), buf.size());
    // A short read keeps what was read from the start of the range.
    for (std::size_t off = 0; off + kSelfOffset + 8 <= got; off += 8) {
      Addr at = lo + off, tcb, self;
      std::memcpy(&tcb, buf.data() + off + kTcbOffset, 8);
      if (tcb != at) continue;
      std::memcpy(&self, buf.data() + off + kSelfOffset, 8);
      if (self != at) continue;
      if (std::find(own.begin(), own.end(), at) != own.end()) continue;
      ThreadDescriptor d;
      d.address = at;
      d.stack_start = m.start;
      d.stack_end = m.end;
      auto read32 = [&](std::int64_t field) -> std::optional<std::uint32_t> {
        if (field < 0) return std::nullopt;
        std::size_t p = off + static_cast<std::size_t>(field);
        if (p + 4 <= got) {
          std::uint32_t v;
          std::memcpy(&v, buf.data() + p, 4);
          return v;
        }
        return mem.read_value<std::uint32_t>(at + static_cast<Addr>(field));
      };
      d.tid = static_cast<std::int32_t>(read32(fields.tid).value_or(0));
      d.cancelhandling = read32(fields.cancelhandling);
      d.exited = d.cancelhandling && (*d.cancelhandling & kExitingBit);
      if (fields.start_routine >= 0)
        d.start_routine = mem.read_pointer(at + static_cast<Addr>(fields.start_routine)).value_or(0);
      out.descriptors.push_back(d);
      break;  // one descriptor per stack
    }
  }
  std::sort(out.descriptors.begin(), out.descriptors.end(),
            [](const ThreadDescriptor& a, const ThreadDescriptor& b) { return a.address < b.address; });
  return out;
}

DescriptorScan scan_thread_descriptors(Target& target, const std::vector<Addr>& own, const ScanOptions& opts) {
  std::vector<Mapping> mappings;
  if (target.kind() == "core") {
    mappings = core_mappings(target);
  } else if (target.kind() == "live" && target.pid()) {
    try {
      mappings = read_proc_maps(*target.pid());
    } catch (const ReaderError&) {
      mappings = target.space().mappings();
    }
  } else {
    mappings = target.space().mappings();
  }
  auto fields = pthread_fields(target.space());
  auto out = scan_thread_descriptors(target.memory(), mappings, fields, own, opts);
  if (mappings.empty() && out.problem.empty()) out.problem = "the target's memory mappings are unknown";
  return out;
}

// ---- glibc-internal locks ----------------------------------------------

std::optional<Addr> decode_locked_cmpxchg(const std::uint8_t* code, std::size_t size, Addr link, std::size_t window) {
  // lea disp32(%rip),%reg: REX.W (0x48 / 0x4C with REX.R) 0x8D, ModRM mod=00 rm=101.
  for (std::size_t i = 0; i + 7 <= size; ++i) {
    if ((code[i] != 0x48 && code[i] != 0x4C) || code[i + 1] != 0x8D) continue;
    std::uint8_t modrm = code[i + 2];
    if ((modrm & 0xC7) != 0x05) continue;
    int reg = ((modrm >> 3) & 7) | (code[i] == 0x4C ? 8 : 0);
    std::int32_t disp;
    std::memcpy(&disp, code + i + 3, 4);
    Addr target = link + i + 7 + static_cast<Addr>(static_cast<std::int64_t>(disp));
    // lock cmpxchg %r32,(%reg): F0 [REX] 0F B1 ModRM(mod=00, rm=reg).
    for (std::size_t j = i + 7; j + 4 <= size && j < i + 7 + window; ++j) {
      if (code[j] != 0xF0) continue;
      std::size_t k = j + 1;
      std::uint8_t rex = 0;
      if ((code[k] & 0xF0) == 0x40) rex = code[k++];
      if (k + 3 > size || code[k] != 0x0F || code[k + 1] != 0xB1) continue;
      std::uint8_t m = code[k + 2];
      int rm = (m & 7) | ((rex & 1) ? 8 : 0);
      if ((m & 0xC0) != 0 || (m & 7) == 4 || (m & 7) == 5) continue;  // (%reg) only: no SIB, no disp
      if (rex & 8) continue;                                           // cmpxchg of a 64-bit word: not an int lock
      if (rm == reg) return target;
    }
  }
  return std::nullopt;
}

InternalLocks glibc_internal_locks(const AddressSpace& space) {
  InternalLocks out;
  const LoadedObject* libc = space.object_named("libc.so");
  if (!libc) libc = space.object_named("libc-2.");
  if (!libc || !libc->elf) {
    out.problem = "libc is not mapped or cannot be opened";
    return out;
  }
  // With symbols (a libc with .symtab or debug info), the name is enough.
  if (auto sym = libc->elf->symbol("__exit_funcs_lock"); sym && sym->value) {
    out.locks.push_back({"__exit_funcs_lock", sym->value + libc->bias, "symbol __exit_funcs_lock of " + libc->path});
    return out;
  }
  // Without: the hidden lock is the one exported __cxa_finalize takes first.
  auto fn = libc->elf->symbol("__cxa_finalize");
  if (!fn || !fn->value) {
    out.problem = "__exit_funcs_lock: no symbol, and no __cxa_finalize in " + libc->path + " to decode it from";
    return out;
  }
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(fn->size ? fn->size : 512, 4096));
  std::vector<std::uint8_t> code(n);
  n = libc->elf->read_vaddr(fn->value, code.data(), n);
  auto lock = decode_locked_cmpxchg(code.data(), n, fn->value);
  if (!lock) {
    out.problem = "__exit_funcs_lock: hidden in " + libc->path +
                  " (no symbol), and __cxa_finalize's code has no lea/lock cmpxchg pair to find it by";
    return out;
  }
  // It must be in libc's writable data.
  bool writable = false;
  for (const auto& seg : libc->elf->segments())
    if (seg.type == PT_LOAD && (seg.flags & PF_W) && *lock >= seg.vaddr && *lock + 4 <= seg.vaddr + seg.memsz)
      writable = true;
  if (!writable) {
    out.problem = "__exit_funcs_lock: the address decoded from __cxa_finalize is not in libc's data";
    return out;
  }
  out.locks.push_back({"__exit_funcs_lock", *lock + libc->bias,
                       "decoded from __cxa_finalize's code (the lock its inlined __libc_lock_lock takes); "
                       "the symbol is hidden in " + std::string(libc->basename())});
  return out;
}

}  // namespace pyhang::fork
