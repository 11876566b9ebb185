// Finding the interpreter in the target and its exact version, with only
// the dynamic symbol table (.dynsym): no .symtab, no debug info.
//
// The object holding the interpreter is the one that *defines* _PyRuntime
// (3.7+) or PyInterpreterState_Head and _PyThreadState_Current (3.6): a
// libpython3.X*.so, or the executable when it links libpython statically
// (Debian's /usr/bin/python3.11).
//
// Version, most robust first:
//  1. Py_Version (3.11+), an exported const uint32 = PY_VERSION_HEX.
//  2. PY_VERSION ("3.10.13") in the object's .rodata.  Py_GetVersion() is no
//     use: it formats its result into a static buffer only when called.
//     The PY_VERSION literal is always in .rodata (Py_GetVersion passes it
//     to snprintf), but the linker may merge it into the tail of a longer
//     string ("/prefix/versions/3.10.13"), so every NUL-terminated tail of
//     the form 3.X.Y is a candidate, filtered by the minor version the
//     object's name gives (libpython3.10.so, python3.10).
//  3. The name alone: minor version only, patch unknown (warned).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <regex>

#include "cpython/internal.hpp"
#include "pyhang/arch/x86_64/decoder.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::cpython {

namespace {

// A symbol *defined* in .dynsym of obj, as a runtime address.
std::optional<Addr> dynsym(const LoadedObject& obj, std::string_view name) {
  if (!obj.elf) return std::nullopt;
  auto sym = obj.elf->symbol(name);
  if (!sym || !sym->from_dynsym || sym->value == 0) return std::nullopt;
  return sym->value + obj.bias;
}

// 3.14+ also places _PyRuntime in a section of its own, .PyRuntime, so that
// tools find it where the symbol is not exported: the section's start, when
// the target's memory there starts with the _Py_DebugOffsets cookie.
std::optional<Addr> runtime_section(const LoadedObject& obj, MemoryReader& memory) {
  if (!obj.elf) return std::nullopt;
  const ElfSection* s = obj.elf->section(".PyRuntime");
  if (!s || s->addr == 0 || s->size < 8) return std::nullopt;
  char cookie[8] = {};
  if (memory.read_partial(s->addr + obj.bias, cookie, sizeof cookie) != sizeof cookie ||
      std::memcmp(cookie, "xdebugpy", sizeof cookie) != 0)
    return std::nullopt;
  return s->addr + obj.bias;
}

// The minor version in an object's name: libpython3.10.so.1.0, python3.6m.
std::optional<int> minor_from_name(std::string_view name) {
  static const std::regex re(R"(python3\.(\d+))");
  std::cmatch m;
  std::string s(name);
  if (std::regex_search(s.c_str(), m, re)) return std::stoi(m[1].str());
  return std::nullopt;
}

// PY_VERSION candidates in .rodata: NUL-terminated tails "3.X.Y[abrc N][+]"
// not preceded by a digit or a dot.
std::map<std::string, int> rodata_versions(const ElfFile& elf) {
  std::map<std::string, int> found;
  const ElfSection* ro = elf.section(".rodata");
  if (!ro) return found;
  auto bytes = elf.image().bytes(ro->offset, ro->size);
  static const std::regex re(R"(3\.(\d{1,2})\.(\d{1,2})((a|b|rc)\d{1,2})?\+?)");
  for (std::size_t i = 0; i + 5 < bytes.size(); ++i) {
    if (bytes[i] != '3' || bytes[i + 1] != '.') continue;
    if (i > 0 && (std::isdigit(bytes[i - 1]) || bytes[i - 1] == '.')) continue;
    std::size_t end = i;
    while (end < bytes.size() && end - i < 16 && bytes[end] != 0) ++end;
    if (end >= bytes.size() || bytes[end] != 0) continue;
    std::string s(reinterpret_cast<const char*>(bytes.data() + i), end - i);
    if (std::regex_match(s, re)) found[s]++;
  }
  return found;
}

// 3.6: the address of a static variable loaded by an exported function
// of the form [endbr64;] mov reg, [rip+disp32] (PyInterpreterState_Head:
// interp_head; PyEval_ThreadsInitialized: gil_locked).  The target must lie
// in a writable segment of the same object.
std::optional<Addr> rip_relative_load(const LoadedObject& obj, std::string_view function) {
  if (!obj.elf) return std::nullopt;
  auto sym = obj.elf->symbol(function);
  if (!sym || !sym->from_dynsym || sym->value == 0) return std::nullopt;
  std::uint8_t code[16] = {};
  if (obj.elf->read_vaddr(sym->value, code, sizeof code) != sizeof code) return std::nullopt;
  std::size_t p = x86_64::is_endbr64(code, sizeof code) ? x86_64::kEndbr64Length : 0;
  // mov disp32(%rip),%reg: 32-bit (8b), or REX.W (48 / 4c with REX.R) 8b; no prefixes.
  auto in = x86_64::decode(code + p, sizeof code - p);
  if (!in || in->map != 0 || in->op != 0x8b || !in->rip_relative || in->prefixes != 0) return std::nullopt;
  if (in->rex != 0 && in->rex != 0x48 && in->rex != 0x4c) return std::nullopt;
  Addr link = sym->value + p + in->len + in->disp;
  for (const auto& seg : obj.elf->segments()) {
    constexpr std::uint32_t kLoad = 1, kWrite = 2;
    if (seg.type == kLoad && (seg.flags & kWrite) && link >= seg.vaddr && link + 8 <= seg.vaddr + seg.memsz)
      return link + obj.bias;
  }
  return std::nullopt;
}

// The object's code as the GIL decoder reads it: bytes from the file,
// segments' permissions, and the imports bound to GOT slots, from the
// relocations the dynamic section lists (section headers are not needed).
class ElfCodeImage final : public detail::CodeImage {
 public:
  explicit ElfCodeImage(const ElfFile& elf) : elf_(elf) { load_imports(); }

  std::size_t read(Addr link, std::uint8_t* buf, std::size_t n) const override {
    return elf_.read_vaddr(link, buf, n);
  }
  bool executable(Addr link) const override {
    for (const auto& seg : elf_.segments())
      if (seg.type == kLoad && (seg.flags & kExec) && link >= seg.vaddr && link < seg.vaddr + seg.filesz) return true;
    return false;
  }
  bool writable(Addr link, std::uint64_t size) const override {
    for (const auto& seg : elf_.segments())
      if (seg.type == kLoad && (seg.flags & kWrite) && link >= seg.vaddr && link + size <= seg.vaddr + seg.memsz)
        return true;
    return false;
  }
  std::string import_at(Addr slot) const override {
    auto it = imports_.find(slot);
    return it == imports_.end() ? std::string() : it->second;
  }
  bool has_imports() const { return !imports_.empty(); }

 private:
  static constexpr std::uint32_t kLoad = 1, kDynamic = 2, kExec = 1, kWrite = 2;

  template <class T>
  std::optional<T> at(Addr link) const {
    T v;
    if (elf_.read_vaddr(link, &v, sizeof v) != sizeof v) return std::nullopt;
    return v;
  }
  std::string string_at(Addr link) const {
    char buf[128] = {};
    std::size_t n = elf_.read_vaddr(link, buf, sizeof buf - 1);
    return std::string(buf, strnlen(buf, n));
  }

  void load_imports() {
    Addr strtab = 0, symtab = 0, rela = 0, jmprel = 0;
    std::uint64_t relasz = 0, pltrelsz = 0, pltrel = 7;
    for (const auto& seg : elf_.segments()) {
      if (seg.type != kDynamic) continue;
      for (std::uint64_t off = 0; off + 16 <= seg.filesz && off < (1u << 16); off += 16) {
        auto tag = at<std::int64_t>(seg.vaddr + off);
        auto val = at<std::uint64_t>(seg.vaddr + off + 8);
        if (!tag || !val || *tag == 0) break;
        switch (*tag) {
          case 5: strtab = *val; break;     // DT_STRTAB
          case 6: symtab = *val; break;     // DT_SYMTAB
          case 7: rela = *val; break;       // DT_RELA
          case 8: relasz = *val; break;     // DT_RELASZ
          case 23: jmprel = *val; break;    // DT_JMPREL
          case 2: pltrelsz = *val; break;   // DT_PLTRELSZ
          case 20: pltrel = *val; break;    // DT_PLTREL
          default: break;
        }
      }
    }
    if (!strtab || !symtab) return;
    auto add = [&](Addr table, std::uint64_t bytes) {
      constexpr std::uint64_t kRela = 24, kMax = 1 << 20;
      for (std::uint64_t off = 0; off + kRela <= bytes && off < kMax * kRela; off += kRela) {
        auto r_offset = at<std::uint64_t>(table + off);
        auto r_info = at<std::uint64_t>(table + off + 8);
        if (!r_offset || !r_info) return;
        std::uint32_t type = static_cast<std::uint32_t>(*r_info), sym = static_cast<std::uint32_t>(*r_info >> 32);
        if ((type != 7 && type != 6) || sym == 0) continue;  // R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT
        auto st_name = at<std::uint32_t>(symtab + std::uint64_t{sym} * 24);
        if (!st_name) continue;
        std::string name = string_at(strtab + *st_name);
        if (!name.empty()) imports_.emplace(*r_offset, std::move(name));
      }
    };
    if (jmprel && pltrel == 7) add(jmprel, pltrelsz);
    if (rela) add(rela, relasz);
  }

  const ElfFile& elf_;
  std::map<Addr, std::string> imports_;
};

// 3.6: gil_mutex, gil_cond, switch_mutex, switch_cond from the code of the
// exported functions around the GIL (ceval.c): _PyEval_FiniThreads
// (destroy_gil, inlined), PyEval_InitThreads / PyEval_ReInitThreads
// (create_gil, take_gil), PyEval_AcquireLock / PyEval_RestoreThread /
// PyEval_AcquireThread (take_gil), PyEval_SaveThread / PyEval_ReleaseLock /
// PyEval_ReleaseThread (drop_gil).
void decode_gil_statics(const LoadedObject& obj, Roots& roots, std::vector<StateWarning>& warnings) {
  ElfCodeImage code(*obj.elf);
  if (!code.has_imports()) {
    warnings.push_back({StateProblem::NoGilRelocations, 0, 0, 0, 0, 0, obj.path, {}, {}});
    return;
  }
  std::vector<detail::CodeEntry> entries;
  for (const char* f : {"PyEval_InitThreads", "PyEval_ReInitThreads", "_PyEval_FiniThreads", "PyEval_AcquireLock",
                        "PyEval_RestoreThread", "PyEval_AcquireThread", "PyEval_SaveThread", "PyEval_ReleaseLock",
                        "PyEval_ReleaseThread"}) {
    auto sym = obj.elf->symbol(f);
    if (sym && sym->from_dynsym && sym->value) entries.push_back({f, sym->value, sym->size});
  }
  auto g = detail::decode_gil_statics(code, entries);
  auto runtime = [&](Addr link) { return link ? link + obj.bias : 0; };
  roots.gil_mutex_var = runtime(g.gil_mutex);
  roots.gil_cond_var = runtime(g.gil_cond);
  roots.switch_mutex_var = runtime(g.switch_mutex);
  roots.switch_cond_var = runtime(g.switch_cond);
  if (!g.gil_mutex || !g.gil_cond) {
    // what was not decoded, as ReadPart names: "mutex", "condition-variable", or both
    const std::string what = g.gil_cond    ? std::string(to_string(ReadPart::Mutex))
                             : g.gil_mutex ? std::string(to_string(ReadPart::CondVar))
                                           : std::string(to_string(ReadPart::Mutex)) + "+" +
                                                 std::string(to_string(ReadPart::CondVar));
    warnings.push_back({StateProblem::GilStaticsUndecoded, 0, 0, 0, 0, 0, obj.path, what, {}, std::move(g.notes)});
  }
}

std::string describe_version(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + (patch >= 0 ? "." + std::to_string(patch) : "");
}

}  // namespace

std::string version_from_hex(std::uint32_t v) {
  return describe_version(static_cast<int>(v >> 24), static_cast<int>((v >> 16) & 0xff),
                          static_cast<int>((v >> 8) & 0xff));
}

std::optional<Located> locate(Target& target) {
  for (const auto& obj : target.space().objects()) {
    if (!obj.elf) continue;
    Located loc;
    auto runtime = dynsym(obj, "_PyRuntime");
    if (!runtime) runtime = runtime_section(obj, target.memory());
    auto head_fn = dynsym(obj, "PyInterpreterState_Head");
    auto current = dynsym(obj, "_PyThreadState_Current");
    if (!runtime && !(head_fn && current)) continue;
    loc.library = obj.path;

    // Version.
    auto name_minor = minor_from_name(obj.path);
    if (auto pv = dynsym(obj, "Py_Version")) {
      if (auto v = target.memory().read_value<std::uint32_t>(*pv)) {
        loc.major = static_cast<int>(*v >> 24);
        loc.minor = static_cast<int>((*v >> 16) & 0xff);
        loc.patch = static_cast<int>((*v >> 8) & 0xff);
      }
    }
    if (loc.major == 0) {
      auto found = rodata_versions(*obj.elf);
      std::string best;
      int best_count = 0;
      for (const auto& [s, n] : found) {
        int minor = std::stoi(s.substr(2));
        if (name_minor ? minor != *name_minor : (minor < 6 || minor > 13)) continue;
        if (n > best_count) best = s, best_count = n;
      }
      if (!best.empty()) {
        loc.major = 3;
        loc.minor = std::stoi(best.substr(2));
        loc.patch = std::stoi(best.substr(best.find('.', 2) + 1));
      } else if (name_minor) {
        loc.major = 3;
        loc.minor = *name_minor;
        loc.warnings.push_back({StateProblem::PatchNotFound, 0, 0, 0, *name_minor, 0, obj.path, {}, {}});
      }
    }
    if (loc.major == 0) {
      loc.warnings.push_back({StateProblem::VersionNotFound, 0, 0, 0, 0, 0, obj.path, {}, {}});
    }
    loc.version = loc.major ? describe_version(loc.major, loc.minor, loc.patch) : "";

    // Roots.
    if (runtime) {
      loc.roots.runtime = *runtime;
    } else {
      loc.roots.tstate_current_var = *current;
      loc.roots.finalizing_var = dynsym(obj, "_Py_Finalizing").value_or(0);
      if (auto head = rip_relative_load(obj, "PyInterpreterState_Head")) loc.roots.interp_head_var = *head;
      else loc.warnings.push_back({StateProblem::InterpHeadUndecoded, 0, 0, 0, 0, 0, obj.path, {}, {}});
      if (auto locked = rip_relative_load(obj, "PyEval_ThreadsInitialized")) loc.roots.gil_locked_var = *locked;
      decode_gil_statics(obj, loc.roots, loc.warnings);
    }
    return loc;
  }
  return std::nullopt;
}

}  // namespace pyhang::cpython
