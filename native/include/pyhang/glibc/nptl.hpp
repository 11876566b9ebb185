// pthread_t → LWP (the kernel TID), the way libthread_db does it, without
// libthread_db.
//
// A pthread_t on Linux is the address of the thread's `struct pthread`.
// libc (libpthread before 2.34) exports, for libthread_db, descriptors of
// that struct's fields: `_thread_db_pthread_tid` is three uint32 {size in
// bits, element count, byte offset} of `tid`.  pyhang reads those exact
// descriptors from libc's ELF file and then the field from target memory.
//
// Why not load libthread_db itself, the obvious first choice: inside gdb,
// libthread_db's ps_* callbacks (ps_pdread, ps_pglobal_lookup, ...) resolve
// to gdb's own exported proc_service, so a second libthread_db opened by our
// module would have gdb's ps_pdread called with our ps_prochandle: wrong
// memory or a crash.  Reading the descriptors gives the same answer libthread_db's
// td_thr_get_info would, over pyhang's own MemoryReader, live or core.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/base/or_why.hpp"
#include "pyhang/glibc/thread_db.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {
class AddressSpace;
class Target;
}  // namespace pyhang

namespace pyhang::nptl {

// struct pthread on x86_64 starts with the TCB header (tcbhead_t), whose
// `tcb` (+0) and `self` (+16) both point to the struct itself: what tells a
// thread descriptor from other memory.
inline constexpr Addr kTcbOffset = 0;        // tcbhead_t.tcb
inline constexpr Addr kTcbSelfOffset = 16;   // tcbhead_t.self
inline constexpr std::uint32_t kMaxPthreadSize = 1u << 16;  // struct pthread is ~2.3 KB

// One libthread_db field descriptor (db_desc_t): {size in bits, count, offset}.
struct TidDescriptor {
  std::uint32_t size_bits = 32;
  std::uint32_t count = 1;
  std::uint32_t offset = 0;
};

struct Descriptors {
  TidDescriptor tid;
  std::optional<std::uint32_t> sizeof_pthread;  // _thread_db_sizeof_pthread
  // Byte offsets of more struct pthread fields, from the same descriptors:
  std::optional<std::uint32_t> cancelhandling;  // _thread_db_pthread_cancelhandling (32-bit)
  std::optional<std::uint32_t> start_routine;   // _thread_db_pthread_start_routine (pointer)
  std::string source;                           // "libc.so.6 _thread_db_pthread_tid"
};

// Why pthread_t cannot be mapped to TIDs (words for people:
// python/pyhang/render/glibc.py).
enum class DescriptorsProblem : std::uint8_t {
  None,
  LibcNotMapped,    // libc is not mapped
  NoTidDescriptor,  // no _thread_db_pthread_tid in the libraries tried (`tried`; `unopened` could not be opened)
  TidNotOneWord,    // `library`'s _thread_db_pthread_tid is not one 32-bit TID (`tid` says what it describes)
};

inline constexpr std::array<Named<DescriptorsProblem>, 4> kDescriptorsProblemNames{{
    {DescriptorsProblem::None, ""},
    {DescriptorsProblem::LibcNotMapped, "libc-not-mapped"},
    {DescriptorsProblem::NoTidDescriptor, "no-tid-descriptor"},
    {DescriptorsProblem::TidNotOneWord, "tid-not-one-word"},
}};
constexpr std::string_view to_string(DescriptorsProblem p) { return name_in(kDescriptorsProblemNames, p); }

struct DescriptorsIssue {
  DescriptorsProblem kind = DescriptorsProblem::None;
  std::string library;                // TidNotOneWord: the library's file name
  std::vector<std::string> tried;     // NoTidDescriptor: the libraries' paths, in the order tried
  std::vector<std::string> unopened;  // ... those of them whose file could not be opened
  glibc::DescriptorIssue tid;         // TidNotOneWord: the descriptor against its assumption
  explicit operator bool() const { return kind != DescriptorsProblem::None; }
};

// The descriptors, or why pthread_t cannot be mapped to TIDs.
using DescriptorResult = OrWhy<Descriptors, DescriptorsIssue>;

// Reads the descriptors from the ELF file of libc (then libpthread) mapped
// in `space`.  No target memory is read.  A tid descriptor that is not one
// 32-bit field is refused (TidNotOneWord, with what it describes):
// read with it, every TID would be garbage.  The checks of all descriptors
// the lock decoders rely on are in pyhang/glibc/thread_db.hpp.
DescriptorResult read_descriptors(const AddressSpace& space);

// The TID stored in the struct pthread at `pthread`, or nullopt when the
// descriptor is unusable, the memory unreadable, the TID not > 0, or the
// block does not look like a thread descriptor: on x86_64 the TCB header
// starts the struct (tcbhead_t: tcb at +0 and self at +16 both point to the
// struct itself), which rules out garbage pointers.
std::optional<int> pthread_tid_from_layout(MemoryReader& mem, Addr pthread, const TidDescriptor& desc);

// pthread_t → TID for a target; reads the descriptors each call (use
// PthreadMapper to map many).
std::optional<int> pthread_tid(Target& target, Addr pthread);

// Maps many pthread_t values with one descriptor lookup.
class PthreadMapper {
 public:
  explicit PthreadMapper(Target& target);
  std::optional<int> tid(Addr pthread);
  // Why tid() can never succeed (no descriptors); kind None when it can.
  const DescriptorsIssue& problem() const { return problem_; }
  const std::optional<Descriptors>& descriptors() const { return desc_; }

 private:
  Target& target_;
  std::optional<Descriptors> desc_;
  DescriptorsIssue problem_;
};

}  // namespace pyhang::nptl
