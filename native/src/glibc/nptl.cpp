// pthread_t → TID through the field descriptors libc exports for
// libthread_db (see pyhang/glibc/nptl.hpp for why not libthread_db itself).
#include "pyhang/glibc/nptl.hpp"

#include <cstring>

#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/thread_db.hpp"
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

// The descriptors of one library whose tid descriptor was read and is a
// 32-bit TID; the optional fields only when they have the expected widths.
Descriptors descriptors_of(const LoadedObject& obj, const glibc::ThreadDb& db) {
  const ElfFile& elf = *obj.elf;
  Descriptors desc;
  desc.tid = {db.pthread_tid->size_bits, db.pthread_tid->count, db.pthread_tid->offset};
  if (db.sizeof_pthread && *db.sizeof_pthread > 0 && *db.sizeof_pthread <= kMaxPthreadSize)
    desc.sizeof_pthread = db.sizeof_pthread;
  // A single field of the given width: {size in bits, count 1, offset}.
  auto field = [&](std::string_view name, std::uint32_t bits) -> std::optional<std::uint32_t> {
    std::uint32_t f[3] = {};
    if (!read_u32s(elf, name, f, 3) || f[0] != bits || f[1] != 1 || f[2] > kMaxPthreadSize) return std::nullopt;
    return f[2];
  };
  desc.cancelhandling = field("_thread_db_pthread_cancelhandling", 32);
  desc.start_routine = field("_thread_db_pthread_start_routine", 64);
  desc.source = std::string(obj.basename()) + " _thread_db_pthread_tid";
  return desc;
}

}  // namespace

DescriptorResult read_descriptors(const AddressSpace& space) {
  DescriptorsIssue why;
  for (glibc::Library lib : {glibc::Library::Libc, glibc::Library::Libpthread}) {
    const LoadedObject* obj = glibc::find_library(space, lib);
    if (!obj) continue;
    why.tried.push_back(obj->path);
    if (!obj->elf) {
      why.unopened.push_back(obj->path);
      continue;
    }
    const glibc::ThreadDb db = glibc::read_thread_db(*obj->elf);
    if (!db.pthread_tid) continue;
    // A tid that is not one 32-bit field would be read as garbage TIDs.
    if (auto p = glibc::tid_descriptor_issue(*db.pthread_tid)) {
      why.kind = DescriptorsProblem::TidNotOneWord;
      why.library = std::string(obj->basename());
      why.tid = *p;
      return why;
    }
    return descriptors_of(*obj, db);
  }
  why.kind = why.tried.empty() ? DescriptorsProblem::LibcNotMapped : DescriptorsProblem::NoTidDescriptor;
  return why;
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
