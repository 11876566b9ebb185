// Which glibc a target runs, from its libc file alone (no debug info, no
// running code in the target).
#include <algorithm>
#include <cstring>

#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::glibc {
namespace {

constexpr std::uint32_t kShtGnuVerdef = 0x6ffffffd;
constexpr std::size_t kMaxBannerScan = 8u << 20;  // .rodata of libc is ~0.5 MB
constexpr int kMaxVerdefs = 4096;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<int> take_number(std::string_view& s) {
  int n = 0, digits = 0;
  while (!s.empty() && is_digit(s.front()) && digits < 6) {
    n = n * 10 + (s.front() - '0');
    s.remove_prefix(1);
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return n;
}

std::string_view basename_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<GlibcVersion> from_nptl_version(const ElfFile& elf, std::string_view symbol) {
  auto sym = elf.symbol(symbol);
  if (!sym || sym->value == 0) return std::nullopt;
  char buf[32] = {};
  std::size_t n = elf.read_vaddr(sym->value, buf, sizeof buf - 1);
  if (n == 0) return std::nullopt;
  buf[std::min(n, sizeof buf - 1)] = 0;
  auto v = parse_glibc_version(std::string_view(buf, std::strlen(buf)));
  if (v) v->source = std::string(symbol);
  return v;
}

// "GNU C Library (Debian GLIBC 2.36-9+deb12u4) stable release version 2.36."
std::optional<GlibcVersion> from_banner(const ElfFile& elf) {
  const ElfSection* ro = elf.section(".rodata");
  if (!ro) return std::nullopt;
  auto bytes = elf.image().bytes(ro->offset, std::min<std::uint64_t>(ro->size, kMaxBannerScan));
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  constexpr std::string_view kKey = "release version ";
  for (std::size_t pos = text.find(kKey); pos != std::string_view::npos; pos = text.find(kKey, pos + 1)) {
    // Only the banner: it starts with "GNU C Library" within its own string.
    std::size_t start = text.rfind('\0', pos);
    start = start == std::string_view::npos ? 0 : start + 1;
    if (text.substr(start, pos - start).find("GNU C Library") == std::string_view::npos) continue;
    auto v = parse_glibc_version(text.substr(pos + kKey.size(), 16));
    if (v) {
      v->source = "banner";
      return v;
    }
  }
  return std::nullopt;
}

// libc-2.31.so (distributions before 2.34 install the library under this
// name and make libc.so.6 a symlink).
std::optional<GlibcVersion> from_file_name(std::string_view path) {
  std::string_view base = basename_of(path);
  for (std::string_view prefix : {"libc-", "libpthread-"}) {
    if (base.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = base.substr(prefix.size());
    if (rest.size() < 4 || rest.substr(rest.size() - 3) != ".so") continue;
    auto v = parse_glibc_version(rest.substr(0, rest.size() - 3));
    if (v) {
      v->source = "file-name";
      return v;
    }
  }
  return std::nullopt;
}

// Highest GLIBC_2.X in .gnu.version_d: the newest symbol version this libc
// defines, a lower bound of its release.
std::optional<GlibcVersion> from_version_definitions(const ElfFile& elf) {
  const ElfSection* vd = nullptr;
  for (const auto& s : elf.sections())
    if (s.type == kShtGnuVerdef) vd = &s;
  const ElfSection* dynstr = elf.section(".dynstr");
  if (!vd || !dynstr) return std::nullopt;
  auto data = elf.image().bytes(vd->offset, vd->size);
  auto strs = elf.image().bytes(dynstr->offset, dynstr->size);
  auto u16 = [&](std::size_t off) -> std::optional<std::uint16_t> {
    if (off + 2 > data.size()) return std::nullopt;
    std::uint16_t v;
    std::memcpy(&v, data.data() + off, 2);
    return v;
  };
  auto u32 = [&](std::size_t off) -> std::optional<std::uint32_t> {
    if (off + 4 > data.size()) return std::nullopt;
    std::uint32_t v;
    std::memcpy(&v, data.data() + off, 4);
    return v;
  };
  std::optional<GlibcVersion> best;
  std::size_t off = 0;
  for (int i = 0; i < kMaxVerdefs; ++i) {
    auto version = u16(off);
    auto aux = u32(off + 12), next = u32(off + 16);
    if (!version || *version != 1 || !aux || !next) break;
    if (auto name_off = u32(off + *aux); name_off && *name_off < strs.size()) {
      const char* p = reinterpret_cast<const char*>(strs.data()) + *name_off;
      std::string_view name(p, strnlen(p, strs.size() - *name_off));
      if (name.substr(0, 6) == "GLIBC_") {
        auto v = parse_glibc_version(name.substr(6));
        if (v && (!best || *best < *v)) best = v;
      }
    }
    if (*next == 0) break;
    off += *next;
  }
  if (best) {
    best->source = "version-definitions";
    best->exact = false;
  }
  return best;
}

}  // namespace

std::optional<GlibcVersion> parse_glibc_version(std::string_view text) {
  std::string_view s = text;
  auto major = take_number(s);
  if (!major || s.empty() || s.front() != '.') return std::nullopt;
  s.remove_prefix(1);
  auto minor = take_number(s);
  if (!minor) return std::nullopt;
  if (!s.empty() && !(s.front() == '.' || s.front() == '-' || s.front() == '+' || s.front() == '~' ||
                      s.front() == ' ' || s.front() == '\0'))
    return std::nullopt;
  if (*major != 2 || *minor > 200) return std::nullopt;  // glibc has been 2.x since 1997
  GlibcVersion v;
  v.major = *major;
  v.minor = *minor;
  v.text = std::to_string(v.major) + "." + std::to_string(v.minor);
  return v;
}

VersionResult detect_version(const ElfFile& libc) {
  std::optional<GlibcVersion> v = from_nptl_version(libc, "__nptl_version");
  if (!v) v = from_banner(libc);
  if (!v) v = from_file_name(libc.path());
  if (!v) v = from_version_definitions(libc);
  if (!v) {
    LayoutsIssue why;
    why.kind = LayoutsProblem::NoVersion;
    why.library = libc.path();
    return why;
  }
  v->thread_db = read_thread_db(libc);
  return *v;
}

VersionResult detect_version(const AddressSpace& space) {
  const LoadedObject* libc = find_library(space, Library::Libc);
  const LoadedObject* libpthread = find_library(space, Library::Libpthread);
  if (!libc) {
    LayoutsIssue why;
    why.kind = LayoutsProblem::LibcNotMapped;
    return why;
  }
  if (!libc->elf) {
    LayoutsIssue why;
    why.kind = LayoutsProblem::LibcUnreadable;
    why.library = libc->path;
    if (libc->problem && libc->problem->kind == TargetProblem::BuildIdMismatch) {
      why.detail = std::string(to_string(TargetProblem::BuildIdMismatch));
      why.build_id = libc->problem->text;
      why.core_build_id = libc->problem->other_text;
    } else if (libc->problem) {
      why.detail = libc->problem->text;
      why.error_number = static_cast<std::int64_t>(libc->problem->number);
    }
    return why;
  }
  VersionResult r = detect_version(*libc->elf);
  // Before 2.34 the NPTL version string lives in libpthread (nptl_version,
  // .symtab only on most distributions).
  if ((!r || !r->exact) && libpthread && libpthread->elf) {
    for (std::string_view sym : {"__nptl_version", "nptl_version"}) {
      if (auto v = from_nptl_version(*libpthread->elf, sym)) {
        v->source = std::string(sym) + "@" + std::string(libpthread->basename());
        v->thread_db = read_thread_db(*libc->elf);
        r = *v;
        break;
      }
    }
  }
  // Before 2.34 libc exports no descriptors: libpthread does, when loaded.
  if (r && r->thread_db && r->thread_db->empty() && libpthread && libpthread->elf)
    r->thread_db = read_thread_db(*libpthread->elf);
  return r;
}

}  // namespace pyhang::glibc
