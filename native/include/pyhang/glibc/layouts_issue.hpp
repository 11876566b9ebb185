// Why glibc's lock layouts cannot be used for a target, or the caveat of
// using them: a kind and the facts it is about (the version, libc's file,
// the rows' range, libc's thread descriptors).  Words for people are
// python/pyhang/render/glibc.py's.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/glibc/thread_db.hpp"

namespace pyhang::glibc {

enum class LayoutsProblem : std::uint8_t {
  None,
  LibcNotMapped,     // libc is not mapped in the target (a static binary, or musl)
  LibcUnreadable,    // libc's file (library) cannot be opened (detail: why, as the target read it)
  NoVersion,         // no glibc version in libc's file (library): no __nptl_version, banner or GLIBC_2.x
  NotAVersion,       // the version given (version) is no glibc version
  NotRead,           // the version has not been read (a LockReader before it looked)
  Outside,           // the version is outside every row of layouts (oldest .. newest, open_ended)
  Contradicted,      // libc's thread descriptors (library) differ from what the layouts assume (differs)
  Unvouched,         // newer than the newest checked release (newest), or only known to be at least one, and
                     // libc's descriptors cannot confirm the newest layouts (layouts): `missing` ones, or none
                     // at all when the version was not read from libc (source)
  NewerThanChecked,  // the caveat of such a release whose descriptors vouch: the newest layouts are used
};

inline constexpr std::array<Named<LayoutsProblem>, 10> kLayoutsProblemNames{{
    {LayoutsProblem::None, ""},
    {LayoutsProblem::LibcNotMapped, "libc-not-mapped"},
    {LayoutsProblem::LibcUnreadable, "libc-unreadable"},
    {LayoutsProblem::NoVersion, "no-version"},
    {LayoutsProblem::NotAVersion, "not-a-version"},
    {LayoutsProblem::NotRead, "not-read"},
    {LayoutsProblem::Outside, "outside"},
    {LayoutsProblem::Contradicted, "contradicted"},
    {LayoutsProblem::Unvouched, "unvouched"},
    {LayoutsProblem::NewerThanChecked, "newer-than-checked"},
}};
constexpr std::string_view to_string(LayoutsProblem p) { return name_in(kLayoutsProblemNames, p); }

struct LayoutsIssue {
  LayoutsProblem kind = LayoutsProblem::None;
  std::string version;         // the version ("2.45"), or the text given that is none
  bool exact = true;           // false: only a lower bound of the release (from `source`)
  std::string source;          // where the version was read (GlibcVersion::source)
  std::string library;         // the file it is about: libc's path, or the descriptors' library
  std::string detail;          // LibcUnreadable: why, as the target read it (an ErrorReason name, or
                               // "build-id-mismatch": the file here is another build than the core's)
  std::int64_t error_number = 0;  // LibcUnreadable: the errno that came with it
  std::string build_id, core_build_id;  // LibcUnreadable after a build-id mismatch: the file's, the core's
  std::string oldest, newest;  // Outside: the releases the rows cover; Unvouched, NewerThanChecked: newest checked
  bool open_ended = false;     // Outside: the newest row also takes later releases
  std::string layouts;         // Unvouched, NewerThanChecked: the newest row ("glibc 2.41+")
  std::vector<DescriptorIssue> differs;  // Contradicted: each descriptor against its assumption
  std::vector<std::string> missing;      // Unvouched: the descriptors libc does not export
  explicit operator bool() const { return kind != LayoutsProblem::None; }
};

}  // namespace pyhang::glibc
