// Which glibc the target runs, read from libc's own ELF file (no debug info):
// the version picks the lock layouts (pyhang/glibc/layouts.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "pyhang/base/or_why.hpp"
#include "pyhang/glibc/layouts_issue.hpp"
#include "pyhang/glibc/thread_db.hpp"
#include "pyhang/target/elf.hpp"

namespace pyhang {
class AddressSpace;
}

namespace pyhang::glibc {

struct GlibcVersion {
  int major = 0;
  int minor = 0;
  std::string text;    // "2.36"
  // "__nptl_version", "banner", "file-name", "version-definitions", "given",
  // "nptl_version@libpthread.so.0" (a symbol of libpthread)
  std::string source;
  bool exact = true;   // false: a lower bound (highest GLIBC_2.x version definition)
  // libc's libthread_db descriptors, read from the same file as the version
  // (libpthread's before 2.34); unset when the version was not read from a
  // file (given by the user).  They let layouts_for() use the newest layouts
  // for a release newer than the newest checked one, or refuse a libc whose
  // thread ABI is not the one the layouts assume.
  std::optional<ThreadDb> thread_db;
  bool operator<(const GlibcVersion& o) const { return std::pair(major, minor) < std::pair(o.major, o.minor); }
};

// The version, or why it is unknown.
using VersionResult = OrWhy<GlibcVersion, LayoutsIssue>;

// "2.36" / "2.36.9000" / "2.17-326.el7" → {2, 36}; nullopt for anything else.
std::optional<GlibcVersion> parse_glibc_version(std::string_view text);

// From libc's file alone, in this order: the __nptl_version string (.dynsym,
// 2.34+; libpthread's before), the "release version 2.X" banner in
// .rodata, the file name (libc-2.31.so), the highest GLIBC_2.X of
// .gnu.version_d (a lower bound, exact=false).  thread_db: the file's own
// descriptors (empty before 2.34, when libpthread has them).
VersionResult detect_version(const ElfFile& libc);
// Finds libc (libc.so*, libc-2.*.so) among the mapped objects; falls back to
// libpthread for __nptl_version and for the thread descriptors.
VersionResult detect_version(const AddressSpace& space);

}  // namespace pyhang::glibc
