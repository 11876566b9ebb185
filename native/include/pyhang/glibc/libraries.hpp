// Which of the target's objects are glibc's own libraries, told by their
// file names: the one list every part of pyhang uses.
#pragma once

#include <cstdint>
#include <string_view>

namespace pyhang {
class AddressSpace;
struct LoadedObject;
}  // namespace pyhang

namespace pyhang::glibc {

enum class Library : std::uint8_t {
  None,        // not part of glibc
  Libc,        // libc.so.6, or libc-2.X.so before 2.34's renaming
  Libpthread,  // libpthread.so.0 / libpthread-2.X.so (merged into libc in 2.34)
  Loader,      // ld-linux-x86-64.so.2
};

// The glibc library a path (or a bare file name) names, by its file name.
Library library_of(std::string_view path);
inline bool is_libc(std::string_view path) { return library_of(path) == Library::Libc; }
inline bool is_glibc(std::string_view path) { return library_of(path) != Library::None; }

// The first mapped object (lowest address) that is `which`; null when none.
const LoadedObject* find_library(const AddressSpace& space, Library which);

}  // namespace pyhang::glibc
