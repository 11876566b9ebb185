// pthread_t → TID through the field descriptors libc exports for
// libthread_db (see pyhang/glibc/nptl.hpp for why not libthread_db itself).
#include "pyhang/glibc/nptl.hpp"

#include <cstring>

#include "pyhang/glibc/libraries.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::nptl {
namespace {

std::optional<std::uint32_t> read_u32s(const ElfFile& elf, std::string_view name, std::uint32_t* out, int n) {
  auto sym = elf.symbol(name);
  if (!sym || sym->value == 0) return std::nullopt;
  if (sym->size != 0 && sym->size < static_cast<std::uint64_t>(4 * n)) return std::nullopt;
  if (elf.read_vaddr(sym->value, out, 4u * n) != 4u * n) return std::nullopt;
  return out[0];
}

}  // namespace

DescriptorResult read_descriptors(const AddressSpace& space) {
  std::string tried;
  for (glibc::Library lib : {glibc::Library::Libc, glibc::Library::Libpthread}) {
    const LoadedObject* obj = glibc::find_library(space, lib);
    if (!obj) continue;
    if (!obj->elf) {
      tried += (tried.empty() ? "" : ", ") + obj->path + " (cannot open)";
      continue;
    }
    std::uint32_t d[3] = {};
    if (!read_u32s(*obj->elf, "_thread_db_pthread_tid", d, 3)) {
      tried += (tried.empty() ? "" : ", ") + obj->path;
      continue;
    }
    Descriptors desc;
    desc.tid = {d[0], d[1], d[2]};
    std::uint32_t size = 0;
    if (read_u32s(*obj->elf, "_thread_db_sizeof_pthread", &size, 1) && size > 0 && size <= kMaxPthreadSize)
      desc.sizeof_pthread = size;
    // A single field of the given width: {size in bits, count 1, offset}.
    auto field = [&](std::string_view name, std::uint32_t bits) -> std::optional<std::uint32_t> {
      std::uint32_t f[3] = {};
      if (!read_u32s(*obj->elf, name, f, 3) || f[0] != bits || f[1] != 1 || f[2] > kMaxPthreadSize)
        return std::nullopt;
      return f[2];
    };
    desc.cancelhandling = field("_thread_db_pthread_cancelhandling", 32);
    desc.start_routine = field("_thread_db_pthread_start_routine", 64);
    desc.source = std::string(obj->basename()) + " _thread_db_pthread_tid";
    return desc;
  }
  if (tried.empty()) return Error(ErrorReason::NotFound, "libc is not mapped: cannot map pthread_t to TIDs");
  return Error(ErrorReason::NotFound, "no _thread_db_pthread_tid in " + tried + ": cannot map pthread_t to TIDs");
}

std::optional<int> pthread_tid_from_layout(MemoryReader& mem, Addr pthread, const TidDescriptor& desc) {
  if (desc.size_bits != 32 || desc.count > 1 || desc.offset > kMaxPthreadSize) return std::nullopt;
  if (pthread == 0 || pthread % 8 != 0 || pthread >= 0x800000000000ull) return std::nullopt;
  auto tcb = mem.read_pointer(pthread + kTcbOffset);
  auto self = mem.read_pointer(pthread + kTcbSelfOffset);
  if (!tcb || !self || *tcb != pthread || *self != pthread) return std::nullopt;
  auto tid = mem.read_value<std::int32_t>(pthread + desc.offset);
  if (!tid || *tid <= 0) return std::nullopt;
  return *tid;
}

std::optional<int> pthread_tid(Target& target, Addr pthread) {
  auto d = read_descriptors(target.space());
  if (!d) return std::nullopt;
  return pthread_tid_from_layout(target.memory(), pthread, d->tid);
}

PthreadMapper::PthreadMapper(Target& target) : target_(target) {
  auto d = read_descriptors(target.space());
  desc_ = d.value();
  problem_ = d.problem();
}

std::optional<int> PthreadMapper::tid(Addr pthread) {
  if (!desc_) return std::nullopt;
  return pthread_tid_from_layout(target_.memory(), pthread, desc_->tid);
}

}  // namespace pyhang::nptl
