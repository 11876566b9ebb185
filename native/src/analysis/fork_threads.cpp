// Thread descriptors left behind by fork, and glibc-internal locks fork
// does not reset (see pyhang/analysis/fork.hpp).
#include <elf.h>

#include <algorithm>
#include <cstring>

#include "pyhang/analysis/fork.hpp"
#include "pyhang/arch/x86_64/decoder.hpp"
#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::fork {

namespace {

// Mappings of a core: its PT_LOAD segments, named by NT_FILE where a file
// backs them (anonymous memory has no NT_FILE entry).
std::vector<Mapping> core_mappings(const Target& target) {
  std::vector<Mapping> out;
  const auto& core = target.core_file();
  if (!core) return out;
  std::shared_ptr<ElfFile> elf;
  try {
    elf = ElfFile::open(core->path());
  } catch (const Error&) {
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

DescriptorScan scan_thread_descriptors(MemoryReader& mem, const std::vector<Mapping>& mappings,
                                       const nptl::DescriptorResult& fields, const std::vector<Addr>& own,
                                       const ScanOptions& opts) {
  DescriptorScan out;
  if (!fields) {
    out.descriptors_problem = fields.problem();
    return out;
  }
  const nptl::Descriptors& desc = *fields;
  if (desc.tid.size_bits != 32 || desc.tid.count != 1) {
    out.problem = {ForkProblem::UnexpectedTidDescriptor, 0, 0, desc.source};
    return out;
  }
  using nptl::kTcbOffset, nptl::kTcbSelfOffset;
  std::vector<std::uint8_t> buf;
  for (const auto& m : mappings) {
    if (out.mappings_scanned >= opts.max_mappings) {
      out.problem = {ForkProblem::TooManyMappings, static_cast<std::int64_t>(opts.max_mappings), 0, {}};
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
    // Read past the cache: most of these bytes are looked at once, here.
    std::size_t got = mem.uncached().read_partial(lo, buf.data(), buf.size());
    // A short read keeps what was read from the start of the range.
    for (std::size_t off = 0; off + kTcbSelfOffset + 8 <= got; off += 8) {
      Addr at = lo + off, tcb, self;
      std::memcpy(&tcb, buf.data() + off + kTcbOffset, 8);
      if (tcb != at) continue;
      std::memcpy(&self, buf.data() + off + kTcbSelfOffset, 8);
      if (self != at) continue;
      if (std::find(own.begin(), own.end(), at) != own.end()) continue;
      ThreadDescriptor d;
      d.address = at;
      d.stack_start = m.start;
      d.stack_end = m.end;
      auto read32 = [&](std::optional<std::uint32_t> field) -> std::optional<std::uint32_t> {
        if (!field) return std::nullopt;
        std::size_t p = off + *field;
        if (p + 4 <= got) {
          std::uint32_t v;
          std::memcpy(&v, buf.data() + p, 4);
          return v;
        }
        return mem.read_value<std::uint32_t>(at + *field);
      };
      d.tid = static_cast<std::int32_t>(read32(desc.tid.offset).value_or(0));
      d.cancelhandling = read32(desc.cancelhandling);
      d.exited = d.cancelhandling && (*d.cancelhandling & kExitingBit);
      if (desc.start_routine) d.start_routine = mem.read_pointer(at + *desc.start_routine).value_or(0);
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
  if (target.kind() == TargetKind::Core) {
    mappings = core_mappings(target);
  } else if (target.kind() == TargetKind::Live && target.pid()) {
    try {
      mappings = read_proc_maps(*target.pid());
    } catch (const Error&) {
      mappings = target.space().mappings();
    }
  } else {
    mappings = target.space().mappings();
  }
  auto fields = nptl::read_descriptors(target.space());
  auto out = scan_thread_descriptors(target.memory(), mappings, fields, own, opts);
  if (mappings.empty() && !out.problem && !out.descriptors_problem)
    out.problem = {ForkProblem::MappingsUnknown, 0, 0, {}};
  return out;
}

// ---- glibc-internal locks ----------------------------------------------

std::optional<Addr> decode_locked_cmpxchg(const std::uint8_t* code, std::size_t size, Addr link, std::size_t window) {
  // Every byte offset is tried: the code is searched, not followed.
  for (std::size_t i = 0; i < size; ++i) {
    // lea disp32(%rip),%reg: REX.W (0x48 / 0x4C with REX.R) 0x8D, no prefixes.
    auto lea = x86_64::decode(code + i, size - i);
    if (!lea || lea->map != 0 || lea->op != 0x8d || !lea->rip_relative || lea->prefixes != 0 ||
        (lea->rex != 0x48 && lea->rex != 0x4c))
      continue;
    Addr target = link + i + lea->len + static_cast<Addr>(lea->disp);
    // lock cmpxchg %r32,(%reg): F0 [REX] 0F B1 ModRM(mod=00, rm=reg).
    for (std::size_t j = i + lea->len; j < size && j < i + lea->len + window; ++j) {
      if (code[j] != 0xF0) continue;
      auto cmpxchg = x86_64::decode(code + j, size - j);
      if (!cmpxchg || !cmpxchg->lock || cmpxchg->prefixes != 1 || cmpxchg->map != 1 || cmpxchg->op != 0xb1) continue;
      // (%reg) only: no SIB, no displacement
      if (cmpxchg->mod != 0 || cmpxchg->rm_low == 4 || cmpxchg->rm_low == 5) continue;
      if (cmpxchg->rex_w()) continue;  // cmpxchg of a 64-bit word: not an int lock
      if (cmpxchg->rm == lea->reg) return target;
    }
  }
  return std::nullopt;
}

InternalLocks glibc_internal_locks(const AddressSpace& space) {
  InternalLocks out;
  const LoadedObject* libc = glibc::find_library(space, glibc::Library::Libc);
  if (!libc || !libc->elf) {
    out.problem = {ForkProblem::NoLibc, 0, 0, {}};
    return out;
  }
  // With symbols (a libc with .symtab or debug info), the name is enough.
  if (auto sym = libc->elf->symbol("__exit_funcs_lock"); sym && sym->value) {
    out.locks.push_back({"__exit_funcs_lock", sym->value + libc->bias, LockFound::Symbol, libc->path});
    return out;
  }
  // Without: the hidden lock is the one exported __cxa_finalize takes first.
  auto fn = libc->elf->symbol("__cxa_finalize");
  if (!fn || !fn->value) {
    out.problem = {ForkProblem::NoCxaFinalize, 0, 0, libc->path};
    return out;
  }
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(fn->size ? fn->size : 512, 4096));
  std::vector<std::uint8_t> code(n);
  n = libc->elf->read_vaddr(fn->value, code.data(), n);
  auto lock = decode_locked_cmpxchg(code.data(), n, fn->value);
  if (!lock) {
    out.problem = {ForkProblem::CxaFinalizeUndecoded, 0, 0, libc->path};
    return out;
  }
  // It must be in libc's writable data.
  bool writable = false;
  for (const auto& seg : libc->elf->segments())
    if (seg.type == PT_LOAD && (seg.flags & PF_W) && *lock >= seg.vaddr && *lock + 4 <= seg.vaddr + seg.memsz)
      writable = true;
  if (!writable) {
    out.problem = {ForkProblem::DecodedNotData, static_cast<std::int64_t>(*lock + libc->bias), 0, libc->path};
    return out;
  }
  out.locks.push_back({"__exit_funcs_lock", *lock + libc->bias, LockFound::CxaFinalizeCode, libc->path});
  return out;
}

}  // namespace pyhang::fork
