// Debian's libc.so.6 of the root file systems testdata/containers.py makes
// (trixie: glibc 2.41, sid: the newest), as test fixtures: each is copied
// into <build>/testdata/glibc-releases/<root>/ when a test first asks for
// it, so the tests read a file of the build tree that a root being remade
// cannot change under them.  Nothing is committed: a test checks the roots
// there are (a warning names each one missing) and is skipped without any
// (PYHANG_SKIP).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "pyhang/target/elf.hpp"
#include "support/skip.hpp"

namespace pyhang::testing {

inline std::filesystem::path roots_dir() {
  const char* env = std::getenv("PYHANG_ROOTS");
  return env && *env ? env : "/var/cache/pyhang-roots";
}

// The fixture copy of `root`'s libc.so.6, or empty when the root is absent.
inline std::filesystem::path release_libc(const std::string& root) {
  namespace fs = std::filesystem;
  const fs::path source = roots_dir() / root / "usr/lib/x86_64-linux-gnu/libc.so.6";
  if (!fs::exists(roots_dir() / root / ".pyhang-root") || !fs::exists(source)) return {};
  const fs::path dir = fs::canonical("/proc/self/exe").parent_path() / "testdata" / "glibc-releases" / root;
  const fs::path copy = dir / "libc.so.6";
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Copied again when the root's libc changed (a remade root, a newer sid).
  if (!fs::exists(copy) || fs::file_size(copy) != fs::file_size(source) ||
      fs::last_write_time(copy) < fs::last_write_time(source))
    fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
  return ec ? fs::path() : copy;
}

// The ElfFile of release_libc(root), or null after a WARN saying why.
inline std::shared_ptr<ElfFile> open_release_libc(const std::string& root) {
  const auto path = release_libc(root);
  if (path.empty()) {
    WARN("no " << root << " root in " << roots_dir().string() << " (testdata/containers.py makes it): not checked");
    return nullptr;
  }
  return ElfFile::open(path.string());
}

// The release roots the tests check, newest last.
inline constexpr const char* kReleaseRoots[] = {"trixie", "sid"};

// Why a test checked no release libc (PYHANG_SKIP's words).
inline std::string no_release_roots() {
  return "no trixie or sid root in " + roots_dir().string() + " (testdata/containers.py makes them)";
}

}  // namespace pyhang::testing
