#include "pyhang/glibc/libraries.hpp"

#include <utility>

#include "pyhang/target/target.hpp"

namespace pyhang::glibc {

namespace {

// File-name prefixes of glibc's libraries.
constexpr std::pair<std::string_view, Library> kPrefixes[] = {
    {"libc.so", Library::Libc},
    {"libc-2.", Library::Libc},
    {"libpthread.so", Library::Libpthread},
    {"libpthread-2.", Library::Libpthread},  // not libpthreadpool (PyTorch's thread pool)
    {"ld-linux", Library::Loader},
};

}  // namespace

Library library_of(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (const auto& [prefix, library] : kPrefixes)
    if (base.starts_with(prefix)) return library;
  return Library::None;
}

const LoadedObject* find_library(const AddressSpace& space, Library which) {
  for (const auto& obj : space.objects())
    if (library_of(obj.path) == which) return &obj;
  return nullptr;
}

}  // namespace pyhang::glibc
