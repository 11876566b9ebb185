#include "pyhang/target/target.hpp"

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <map>

#include "pyhang/target/page_cache.hpp"

namespace pyhang {

namespace {

// Objects worth opening as ELF: real files, not [heap], [vdso], memfd or
// deleted files (a deleted file's bytes on disk are not what is mapped).
bool is_file_path(const std::string& path) {
  return !path.empty() && path[0] == '/' && path.find(" (deleted)") == std::string::npos;
}

}  // namespace

// -------------------------------------------------------- AddressSpace ----

std::string_view LoadedObject::basename() const {
  std::string_view p = path;
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

AddressSpace::AddressSpace(std::vector<Mapping> mappings, Locate locate) : mappings_(std::move(mappings)) {
  std::sort(mappings_.begin(), mappings_.end(), [](auto& a, auto& b) { return a.start < b.start; });
  // Group by file; the mapping of file offset 0 at the lowest address is
  // where the loader put the ELF header.
  std::map<std::string, std::vector<const Mapping*>> by_path;
  for (auto& m : mappings_)
    if (is_file_path(m.path)) by_path[m.path].push_back(&m);
  for (auto& [path, maps] : by_path) {
    const Mapping* head = nullptr;
    for (auto* m : maps)
      if (m->offset == 0) {
        head = m;
        break;
      }
    if (!head) continue;  // a data file mapped in pieces, not an ELF object
    LoadedObject obj;
    obj.path = path;
    obj.start = head->start;
    obj.end = head->end;
    // Only the run of mappings belonging to this load (the same file may be
    // mapped again elsewhere as data).
    for (auto* m : maps)
      if (m->start >= head->start && m->start < head->start + (1ull << 32)) obj.end = std::max(obj.end, m->end);
    try {
      obj.elf = ElfFile::open(locate ? locate(path) : path);
      if (obj.elf->type() != ET_DYN && obj.elf->type() != ET_EXEC) {
        obj.elf.reset();
        continue;
      }
      obj.bias = head->start - obj.elf->load_base_vaddr();
    } catch (const Error& e) {
      if (e.reason() == ErrorReason::NotElf) continue;
      obj.problem = TargetIssue{TargetProblem::SymbolsUnreadable, path, static_cast<std::uint64_t>(e.number()), 0,
                                std::string(to_string(e.reason())), e.path()};
    }
    objects_.push_back(std::move(obj));
  }
  std::sort(objects_.begin(), objects_.end(), [](auto& a, auto& b) { return a.start < b.start; });
}

const LoadedObject* AddressSpace::object_at(Addr addr) const {
  auto it = std::upper_bound(objects_.begin(), objects_.end(), addr,
                             [](Addr a, const LoadedObject& o) { return a < o.start; });
  // Objects do not nest, but a big object's range may hide a small one
  // loaded in a hole; check a few candidates.
  for (int n = 0; it != objects_.begin() && n < 4; ++n) {
    --it;
    if (addr < it->end) return &*it;
  }
  return nullptr;
}

const LoadedObject* AddressSpace::object_named(std::string_view prefix) const {
  for (auto& o : objects_)
    if (o.basename().substr(0, prefix.size()) == prefix) return &o;
  return nullptr;
}

std::optional<Addr> AddressSpace::symbol_address(std::string_view name, const LoadedObject* in) const {
  auto look = [&](const LoadedObject& o) -> std::optional<Addr> {
    if (!o.elf) return std::nullopt;
    auto s = o.elf->symbol(name);
    if (!s) return std::nullopt;
    return s->value + o.bias;
  };
  if (in) return look(*in);
  for (auto& o : objects_)
    if (auto a = look(o)) return a;
  return std::nullopt;
}

void AddressSpace::drop_mismatched(const std::function<std::optional<TargetIssue>(const LoadedObject&)>& check) {
  for (auto& o : objects_) {
    if (!o.elf) continue;
    if (auto issue = check(o)) {
      o.elf.reset();
      o.problem = std::move(issue);
    }
  }
}

const ElfFile* AddressSpace::debug_file(const LoadedObject& o) const {
  if (o.debug_file_looked_up) return o.debug_file.get();
  o.debug_file_looked_up = true;
  std::string id = o.elf ? o.elf->build_id() : std::string();
  if (id.size() < 4 || o.elf->section(".symtab")) return nullptr;  // no id, or full symbols already
  for (const auto& dir : debug_dirs_) {
    std::string path = dir + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
    if (access(path.c_str(), R_OK) != 0) continue;
    try {
      auto elf = ElfFile::open(path);
      if (elf->build_id() == id) {
        o.debug_file = std::move(elf);
        break;
      }
    } catch (const Error&) {  // not an ELF file: as if absent
    }
  }
  return o.debug_file.get();
}

namespace {

// A C++ symbol as gdb prints it (`ns::Class::method(int)`); any other name as it is.
std::string demangled(std::string_view name) {
  if (name.substr(0, 2) != "_Z") return std::string(name);
  std::string mangled(name);
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string result = status == 0 && out ? std::string(out) : mangled;
  std::free(out);
  return result;
}

}  // namespace

Symbolized AddressSpace::symbolize(Addr pc) const {
  Symbolized out;
  out.object = object_at(pc);
  if (!out.object || !out.object->elf) return out;
  Addr link = pc - out.object->bias;
  auto s = out.object->elf->symbol_at(link);
  if (!s)
    if (const ElfFile* debug = debug_file(*out.object)) {
      s = debug->symbol_at(link);
      out.from_debug_file = s.has_value();
    }
  if (s) {
    out.function = demangled(s->name);
    out.offset = link - s->value;
    return out;
  }
  for (const auto& n : named_code_)
    if (pc >= n.begin && pc < n.end) {
      out.function = n.name;
      out.offset = pc - n.begin;
      break;
    }
  return out;
}

void AddressSpace::name_code(Addr begin, Addr end, std::string name) const {
  for (const auto& n : named_code_)
    if (n.begin == begin && n.end == end) return;
  named_code_.push_back({begin, end, std::move(name)});
}

// -------------------------------------------------------------- Target ----

namespace {

// The build-id of the object whose ELF header the core's process mapped at
// `header`, from the core's own bytes only (its header, program headers and
// note as the core holds them, never a file on disk, which is what is being
// checked); empty when the core does not hold them.
std::string core_build_id(const CoreFile& core, Addr header) {
  Elf64_Ehdr eh;
  if (core.read_partial(header, &eh, sizeof eh) != sizeof eh || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
    return {};
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  std::size_t bytes = phdrs.size() * sizeof(Elf64_Phdr);
  if (core.read_partial(header + eh.e_phoff, phdrs.data(), bytes) != bytes) return {};
  Addr lowest = ~Addr{0};
  for (auto& ph : phdrs)
    if (ph.p_type == PT_LOAD) lowest = std::min<Addr>(lowest, ph.p_vaddr);
  if (lowest == ~Addr{0}) return {};
  Addr bias = header - (lowest & ~Addr{0xfff});
  for (auto& ph : phdrs) {
    if (ph.p_type != PT_NOTE || ph.p_filesz == 0 || ph.p_filesz > 4096) continue;
    std::vector<std::uint8_t> buf(ph.p_filesz);
    if (core.read_partial(ph.p_vaddr + bias, buf.data(), buf.size()) != buf.size()) continue;
    for (std::size_t pos = 0; pos + 12 <= buf.size();) {
      std::uint32_t namesz, descsz, type;
      std::memcpy(&namesz, &buf[pos], 4);
      std::memcpy(&descsz, &buf[pos + 4], 4);
      std::memcpy(&type, &buf[pos + 8], 4);
      std::size_t name_at = pos + 12, desc_at = name_at + ((namesz + 3) & ~3u);
      if (desc_at > buf.size() || descsz > buf.size() - desc_at) break;
      if (type == NT_GNU_BUILD_ID && namesz == 4 && std::memcmp(&buf[name_at], "GNU", 4) == 0) {
        static const char* hex = "0123456789abcdef";
        std::string out;
        for (std::size_t i = 0; i < descsz; ++i) {
          out += hex[buf[desc_at + i] >> 4];
          out += hex[buf[desc_at + i] & 15];
        }
        return out;
      }
      pos = desc_at + ((descsz + 3) & ~3u);
    }
  }
  return {};
}

std::string link_target(const std::string& path) {
  char buf[256];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

bool in_other_mount_namespace(int pid) {
  std::string theirs = link_target("/proc/" + std::to_string(pid) + "/ns/mnt");
  return !theirs.empty() && theirs != link_target("/proc/self/ns/mnt");
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Where each file a core names is now (CoreFileSearch), decided once per
// recorded path.
class CoreFileFinder {
 public:
  CoreFileFinder(std::shared_ptr<CoreFile> core, CoreFileSearch search, std::string recorded_executable)
      : core_(std::move(core)), search_(std::move(search)), recorded_executable_(std::move(recorded_executable)) {}

  std::string find(const std::string& path) {
    auto [it, fresh] = found_.try_emplace(path);
    if (fresh) it->second = search(path);
    return it->second;
  }

 private:
  std::vector<std::string> candidates(const std::string& path) const {
    std::vector<std::string> out;
    if (!search_.executable.empty() && path == recorded_executable_) out.push_back(search_.executable);
    std::string root = search_.sysroot;
    while (!root.empty() && root.back() == '/') root.pop_back();
    if (!root.empty()) out.push_back(root + path);
    std::string base = path.substr(path.rfind('/') + 1);
    for (auto& dir : search_.search_path)
      if (!dir.empty()) out.push_back(dir + (dir.back() == '/' ? "" : "/") + base);
    out.push_back(path);
    return out;
  }

  // The first candidate whose build-id is the one the core holds; the first
  // that exists when none matches or the core holds no build-id.
  std::string search(const std::string& path) const {
    std::optional<Addr> header;
    for (auto& m : core_->file_mappings())
      if (m.path == path && m.offset == 0 && (!header || m.start < *header)) header = m.start;
    std::string first, in_core;
    for (auto& candidate : candidates(path)) {
      if (!is_regular_file(candidate)) continue;
      if (first.empty()) first = candidate;
      if (!header) break;
      if (in_core.empty()) in_core = core_build_id(*core_, *header);
      if (in_core.empty()) break;  // nothing to compare: take the first
      try {
        if (ElfFile::open(candidate)->build_id() == in_core) return candidate;
      } catch (const Error&) {
        continue;
      }
    }
    return first.empty() ? path : first;
  }

  std::shared_ptr<CoreFile> core_;
  CoreFileSearch search_;
  std::string recorded_executable_;
  std::map<std::string, std::string> found_;
};

void note_object_problems(Target& t, const AddressSpace& space) {
  for (auto& o : space.objects())
    if (o.problem) t.add_warning(*o.problem);
}

}  // namespace

std::shared_ptr<Target> Target::live(int pid) {
  std::shared_ptr<Target> t(new Target());
  t->kind_ = TargetKind::Live;
  t->pid_ = pid;
  auto source = std::make_shared<LiveReader>(pid);
  // A live process's misses cost a process_vm_readv, a few microseconds: 512 pages (2 MiB) are enough.
  // A report reads most pages once (every thread's frames, each thread's own pages in turn, its batches no
  // larger than the cache keeps: batch_pages): at 1,024 threads 50 frames deep the no-stop report misses
  // 15,740 pages with this cache, 15,599 with 1,024 pages, in the same time, and peaks 2 MiB lower.  (gdb's memory,
  // read through Python, keeps the larger default.)
  constexpr std::size_t kLivePages = 512;
  t->memory_ = std::make_shared<CachedReader>(source, kLivePages);
  // A process in another mount namespace (a container) maps files by the
  // paths its own namespace gives them: read them through its root.
  AddressSpace::Locate locate;
  if (in_other_mount_namespace(pid)) {
    std::string root = "/proc/" + std::to_string(pid) + "/root";
    locate = [root](const std::string& path) { return root + path; };
  }
  t->space_ = AddressSpace(read_proc_maps(pid), locate);
  char exe[4096];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe, sizeof exe - 1);
  if (n > 0) t->executable_.assign(exe, static_cast<std::size_t>(n));
  note_object_problems(*t, t->space_);
  return t;
}

std::shared_ptr<Target> Target::core(const std::string& core_path, const CoreFileSearch& search) {
  std::shared_ptr<Target> t(new Target());
  t->kind_ = TargetKind::Core;
  t->core_ = CoreFile::open(core_path);
  t->pid_ = t->core_->pid();
  std::string recorded_executable;
  constexpr std::uint64_t kAtEntry = 9;
  if (auto entry = t->core_->auxv_value(kAtEntry))
    for (auto& m : t->core_->file_mappings())
      if (*entry >= m.start && *entry < m.end) recorded_executable = m.path;
  auto finder = std::make_shared<CoreFileFinder>(t->core_, search, recorded_executable);
  AddressSpace::Locate locate = [finder](const std::string& path) { return finder->find(path); };
  // No page cache: a core's bytes are already in memory (its mapping, and the
  // mapped files'), and copying each page read would touch twice the memory.
  t->memory_ = std::make_shared<CoreReader>(t->core_, locate);
  for (auto& p : t->core_->problems()) t->add_warning(p);
  if (t->core_->file_mappings().empty())
    t->add_warning({TargetProblem::CoreNoFiles, core_path, 0, 0, {}});
  t->space_ = AddressSpace(t->core_->file_mappings(), locate);
  t->space_.drop_mismatched([&](const LoadedObject& o) -> std::optional<TargetIssue> {
    std::string in_core = core_build_id(*t->core_, o.start);
    std::string on_disk = o.elf->build_id();
    if (in_core.empty() || on_disk.empty() || in_core == on_disk) return std::nullopt;
    return TargetIssue{TargetProblem::BuildIdMismatch, o.path, 0, 0, on_disk, in_core};
  });
  note_object_problems(*t, t->space_);
  if (!recorded_executable.empty()) t->executable_ = finder->find(recorded_executable);
  return t;
}

std::shared_ptr<Target> Target::from_reader(std::shared_ptr<MemoryReader> source, std::vector<Mapping> mappings,
                                            TargetKind kind) {
  std::shared_ptr<Target> t(new Target());
  t->kind_ = kind;
  t->memory_ = std::make_shared<CachedReader>(std::move(source));
  t->space_ = AddressSpace(std::move(mappings));
  note_object_problems(*t, t->space_);
  return t;
}

std::optional<Registers> Target::registers(int tid) const {
  if (core_) {
    for (const auto& t : core_->threads())
      if (t.tid == tid) return t.regs;
    return std::nullopt;
  }
  if (kind_ != TargetKind::Live) return std::nullopt;
  // Only the tracer may ask, and only while the thread is stopped: inside
  // gdb, gdb is the tracer (it ptraces from the thread that runs Python
  // commands); anywhere else this fails with ESRCH and says nothing.
  static_assert(sizeof(user_regs_struct) == sizeof(Registers::r));
  user_regs_struct regs{};
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) return std::nullopt;
  Registers out;
  std::memcpy(out.r.data(), &regs, sizeof regs);
  return out;
}

std::optional<linux_abi::ParkedRegisters> Target::parked_registers(int tid) const {
  if (kind_ != TargetKind::Live || !pid_) return std::nullopt;
  return linux_abi::read_syscall_record(*pid_, tid);
}

}  // namespace pyhang
