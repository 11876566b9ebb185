// What libc itself says of its threads: the descriptors it exports for
// libthread_db (`_thread_db_*` in .dynsym, GLIBC_PRIVATE; libpthread's before
// 2.34), read from its ELF file, and checked against what pyhang's glibc
// decoders assume.
//
// glibc defines them in nptl_db/db_info.c from nptl_db/structs.def: for a
// field, DB_STRUCT_FIELD(type, field) gives `_thread_db_<type>_<field>`, three
// uint32 {8 * sizeof field, element count, offsetof}; for a struct,
// DB_STRUCT(type) gives `_thread_db_sizeof_<type>`, its size in bytes; and
// DB_THREAD_SELF (sysdeps/x86_64/nptl/tls.h) gives `_thread_db_const_thread_area`,
// the register libthread_db reads the thread pointer from.  They are compiled
// from glibc's own structs, so unlike a version number they describe this
// very libc: a release the lock layouts were not checked against can still
// show that its thread ABI is the one they assume (pyhang/glibc/layouts.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"

namespace pyhang {
class ElfFile;
}

namespace pyhang::glibc {

// db_desc_t (nptl_db/thread_dbP.h): {size in bits, element count, byte offset}.
struct DbDesc {
  std::uint32_t size_bits = 0;
  std::uint32_t count = 0;
  std::uint32_t offset = 0;
  bool operator==(const DbDesc&) const = default;
};

// The descriptors the checks below use, each set when the library defines
// the symbol and its words can be read from the file.
struct ThreadDb {
  std::string library;  // file name of the object they were read from ("libc.so.6")
  std::optional<DbDesc> pthread_tid;            // struct pthread's tid
  std::optional<DbDesc> pthread_dtvp;           // header.dtv (x86_64: tcbhead_t at the struct's start)
  std::optional<DbDesc> list_t_next, list_t_prev;
  std::optional<DbDesc> pthread_list;  // struct pthread's list_t on the lists of threads
  // The lists of threads in ld.so's _rtld_global (glibc >= 2.34, in libc):
  // _dl_stack_used (threads on stacks glibc allocated), _dl_stack_user
  // (the main thread, threads on stacks the program gave).
  std::optional<DbDesc> rtld_global_dl_stack_used, rtld_global_dl_stack_user;
  std::optional<std::uint32_t> sizeof_pthread;  // bytes
  std::optional<std::uint32_t> sizeof_list_t;   // bytes
  std::optional<std::uint32_t> const_thread_area;  // register number (sys/reg.h) of the thread pointer
  bool empty() const;
};

// The descriptors of `elf` (libc, or libpthread before 2.34).  Absent
// symbols stay unset: ThreadDb::empty() when the file exports none.
ThreadDb read_thread_db(const ElfFile& elf);

// A descriptor whose value contradicts an assumption of the decoders; each
// kind names its descriptor and the assumption (words for people:
// python/pyhang/render/glibc.py).
enum class DescriptorCheck : std::uint8_t {
  TidNotOneWord,   // _thread_db_pthread_tid (desc) is not one 32-bit TID inside struct pthread
  SizeofPthread,   // _thread_db_sizeof_pthread (value) is not least..most bytes (its TCB header and tid)
  TcbHeader,       // _thread_db_pthread_dtvp (desc) is not x86_64's TCB header (the dtv pointer at +8)
  ThreadPointer,   // _thread_db_const_thread_area (value) is not the FS base (register `most`, sys/reg.h)
  SizeofListT,     // _thread_db_sizeof_list_t (value) is not two 64-bit pointers (`most` bytes)
  ListTNext,       // _thread_db_list_t_next (desc) is not one 64-bit pointer at +0
  ListTPrev,       // _thread_db_list_t_prev (desc) is not one 64-bit pointer at +8
};

inline constexpr std::array<Named<DescriptorCheck>, 7> kDescriptorCheckNames{{
    {DescriptorCheck::TidNotOneWord, "tid-not-one-word"},
    {DescriptorCheck::SizeofPthread, "sizeof-pthread"},
    {DescriptorCheck::TcbHeader, "tcb-header"},
    {DescriptorCheck::ThreadPointer, "thread-pointer"},
    {DescriptorCheck::SizeofListT, "sizeof-list-t"},
    {DescriptorCheck::ListTNext, "list-t-next"},
    {DescriptorCheck::ListTPrev, "list-t-prev"},
}};
constexpr std::string_view to_string(DescriptorCheck c) { return name_in(kDescriptorCheckNames, c); }

struct DescriptorIssue {
  DescriptorCheck kind = DescriptorCheck::TidNotOneWord;
  DbDesc desc{};                 // the descriptor's words, for the kinds that describe a field
  std::uint32_t value = 0;       // the value of a word descriptor (a size, a register)
  std::uint32_t least = 0, most = 0;  // the range (or the one value, `most`) the decoders assume
  bool operator==(const DescriptorIssue&) const = default;
};

// What the descriptors say against the decoders' assumptions.
struct ThreadDbCheck {
  // One issue per descriptor whose value contradicts an assumption.
  std::vector<DescriptorIssue> differs;
  // The descriptors a release the layouts were not checked against must
  // export (the TID and the size of struct pthread), when absent.
  std::vector<std::string> missing;
  bool contradicts() const { return !differs.empty(); }
  // Present and consistent: enough to use the newest layouts for a later release.
  bool vouches() const { return differs.empty() && missing.empty(); }
};

// Checks every descriptor that is present (absent ones contradict nothing),
// and lists the required ones that are absent.
ThreadDbCheck check_thread_db(const ThreadDb& db);

// check_thread_db's issue with `_thread_db_pthread_tid` alone, or nullopt
// when the descriptor is a 32-bit TID: what pthread_t → TID needs.
std::optional<DescriptorIssue> tid_descriptor_issue(const DbDesc& tid);


}  // namespace pyhang::glibc
