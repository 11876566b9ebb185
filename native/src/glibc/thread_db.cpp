// libc's libthread_db descriptors, read from its file and checked against
// the assumptions of pyhang's glibc decoders (pyhang/glibc/thread_db.hpp).
#include "pyhang/glibc/thread_db.hpp"

#include <algorithm>

#include "pyhang/glibc/nptl.hpp"
#include "pyhang/target/elf.hpp"

namespace pyhang::glibc {
namespace {

// What the decoders assume of x86_64 glibc, and where each assumption is used.
constexpr std::uint32_t kTidBits = 32;      // pid_t tid: what lock words and __owner hold
constexpr std::uint32_t kPointerBits = 64;  // LP64: the layouts' pointer fields
constexpr std::uint32_t kDtvOffset = 8;     // tcbhead_t.dtv, between tcb (+0) and self (+16)
constexpr std::uint32_t kFsRegister = 25;   // sys/reg.h FS: the thread pointer is the FS base
constexpr std::uint32_t kListTSize = 16;    // list_t: two pointers

struct DescSymbol {
  const char* symbol;
  std::optional<DbDesc> ThreadDb::*member;
};
constexpr DescSymbol kDescSymbols[] = {
    {"_thread_db_pthread_tid", &ThreadDb::pthread_tid},
    {"_thread_db_pthread_dtvp", &ThreadDb::pthread_dtvp},
    {"_thread_db_list_t_next", &ThreadDb::list_t_next},
    {"_thread_db_list_t_prev", &ThreadDb::list_t_prev},
    {"_thread_db_pthread_list", &ThreadDb::pthread_list},
    {"_thread_db_rtld_global__dl_stack_used", &ThreadDb::rtld_global_dl_stack_used},
    {"_thread_db_rtld_global__dl_stack_user", &ThreadDb::rtld_global_dl_stack_user},
};

struct WordSymbol {
  const char* symbol;
  std::optional<std::uint32_t> ThreadDb::*member;
};
constexpr WordSymbol kWordSymbols[] = {
    {"_thread_db_sizeof_pthread", &ThreadDb::sizeof_pthread},
    {"_thread_db_sizeof_list_t", &ThreadDb::sizeof_list_t},
    {"_thread_db_const_thread_area", &ThreadDb::const_thread_area},
};

// `n` uint32 words at the symbol, when it is defined, at least that large
// (a size of 0 says nothing) and inside the file.
bool read_words(const ElfFile& elf, const char* name, std::uint32_t* out, std::size_t n) {
  auto sym = elf.symbol(name);
  if (!sym || sym->value == 0) return false;
  if (sym->size != 0 && sym->size < 4 * n) return false;
  return elf.read_vaddr(sym->value, out, 4 * n) == 4 * n;
}

std::string file_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// ---- the checks: each names its descriptor and the assumption it would break

std::optional<DescriptorIssue> check_sizeof_pthread(const ThreadDb& db) {
  if (!db.sizeof_pthread) return std::nullopt;
  // The TCB header's self pointer (+16) and the tid must fit in the struct.
  std::uint32_t least = static_cast<std::uint32_t>(nptl::kTcbSelfOffset) + 8;
  if (db.pthread_tid && db.pthread_tid->offset < nptl::kMaxPthreadSize)
    least = std::max(least, db.pthread_tid->offset + db.pthread_tid->size_bits / 8);
  const std::uint32_t size = *db.sizeof_pthread;
  if (size >= least && size <= nptl::kMaxPthreadSize) return std::nullopt;
  return DescriptorIssue{DescriptorCheck::SizeofPthread, {}, size, least,
                         static_cast<std::uint32_t>(nptl::kMaxPthreadSize)};
}

std::optional<DescriptorIssue> check_tcb_header(const ThreadDb& db) {
  if (!db.pthread_dtvp || *db.pthread_dtvp == DbDesc{kPointerBits, 1, kDtvOffset}) return std::nullopt;
  return DescriptorIssue{DescriptorCheck::TcbHeader, *db.pthread_dtvp, 0, 0, kDtvOffset};
}

std::optional<DescriptorIssue> check_thread_pointer(const ThreadDb& db) {
  if (!db.const_thread_area || *db.const_thread_area == kFsRegister) return std::nullopt;
  return DescriptorIssue{DescriptorCheck::ThreadPointer, {}, *db.const_thread_area, 0, kFsRegister};
}

// The lock layouts assume x86_64's 64-bit pointers (mutex __list, the pre-2.25 condvar's __mutex).
std::vector<DescriptorIssue> check_pointer_width(const ThreadDb& db) {
  std::vector<DescriptorIssue> out;
  if (db.sizeof_list_t && *db.sizeof_list_t != kListTSize)
    out.push_back({DescriptorCheck::SizeofListT, {}, *db.sizeof_list_t, 0, kListTSize});
  if (db.list_t_next && *db.list_t_next != DbDesc{kPointerBits, 1, 0})
    out.push_back({DescriptorCheck::ListTNext, *db.list_t_next, 0, 0, 0});
  if (db.list_t_prev && *db.list_t_prev != DbDesc{kPointerBits, 1, kPointerBits / 8})
    out.push_back({DescriptorCheck::ListTPrev, *db.list_t_prev, 0, 0, kPointerBits / 8});
  return out;
}

}  // namespace

bool ThreadDb::empty() const {
  return !pthread_tid && !pthread_dtvp && !list_t_next && !list_t_prev && !pthread_list &&
         !rtld_global_dl_stack_used && !rtld_global_dl_stack_user && !sizeof_pthread && !sizeof_list_t &&
         !const_thread_area;
}

ThreadDb read_thread_db(const ElfFile& elf) {
  ThreadDb db;
  db.library = file_name(elf.path());
  for (const auto& [symbol, member] : kDescSymbols) {
    std::uint32_t w[3] = {};
    if (read_words(elf, symbol, w, 3)) db.*member = DbDesc{w[0], w[1], w[2]};
  }
  for (const auto& [symbol, member] : kWordSymbols) {
    std::uint32_t w = 0;
    if (read_words(elf, symbol, &w, 1)) db.*member = w;
  }
  return db;
}

std::optional<DescriptorIssue> tid_descriptor_issue(const DbDesc& tid) {
  if (tid.size_bits == kTidBits && tid.count == 1 && tid.offset < nptl::kMaxPthreadSize) return std::nullopt;
  return DescriptorIssue{DescriptorCheck::TidNotOneWord, tid, 0, 0, kTidBits};
}

ThreadDbCheck check_thread_db(const ThreadDb& db) {
  ThreadDbCheck c;
  if (db.pthread_tid)
    if (auto p = tid_descriptor_issue(*db.pthread_tid)) c.differs.push_back(*p);
  for (auto p : {check_sizeof_pthread(db), check_tcb_header(db), check_thread_pointer(db)})
    if (p) c.differs.push_back(*p);
  for (auto& p : check_pointer_width(db)) c.differs.push_back(std::move(p));
  if (!db.pthread_tid) c.missing.push_back("_thread_db_pthread_tid");
  if (!db.sizeof_pthread) c.missing.push_back("_thread_db_sizeof_pthread");
  return c;
}

}  // namespace pyhang::glibc
