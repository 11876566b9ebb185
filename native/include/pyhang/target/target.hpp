// The target as decoders see it: memory, the objects mapped into it with
// their load bias and symbols, and what could not be trusted while opening.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/linux/syscall_record.hpp"
#include "pyhang/target/core_file.hpp"
#include "pyhang/target/elf.hpp"
#include "pyhang/target/issues.hpp"
#include "pyhang/target/mappings.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {

// An ELF object mapped in the target.
struct LoadedObject {
  std::string path;
  Addr start = 0;  // lowest mapped address
  Addr end = 0;    // highest mapped address (exclusive)
  Addr bias = 0;   // runtime address = link-time address + bias
  std::shared_ptr<ElfFile> elf;  // null when the file could not be opened
  std::optional<TargetIssue> problem;  // why elf is null, or a mismatch seen
  std::string_view basename() const;
  // The separate debug file of a stripped object (libc6-dbg's), looked up by
  // build-id the first time a pc in the object has no symbol of its own.
  mutable std::shared_ptr<ElfFile> debug_file;
  mutable bool debug_file_looked_up = false;
};

struct Symbolized {
  const LoadedObject* object = nullptr;  // null: not in any mapped object
  std::string function;                  // empty when no symbol covers pc
  std::uint64_t offset = 0;              // pc - symbol start
  bool from_debug_file = false;          // named by the object's separate debug file, not its own symbols
};

class AddressSpace {
 public:
  using Locate = CoreReader::Locate;
  AddressSpace() = default;
  explicit AddressSpace(std::vector<Mapping> mappings, Locate locate = {});

  const std::vector<Mapping>& mappings() const { return mappings_; }
  const std::vector<LoadedObject>& objects() const { return objects_; }
  const LoadedObject* object_at(Addr addr) const;
  // First object whose file name (basename) starts with prefix, e.g. "libc.so".
  const LoadedObject* object_named(std::string_view prefix) const;

  // Runtime address of a symbol, searched in `in` or in every object.
  std::optional<Addr> symbol_address(std::string_view name, const LoadedObject* in = nullptr) const;
  // A pc's function: the object's own symbols (.dynsym, .symtab), else the
  // symbols of its separate debug file, where one is found; C++ names demangled.
  Symbolized symbolize(Addr pc) const;
  // Names for code no symbol covers, which a decoder proved belongs to a
  // function (a partition gcc split off a function: "fn.cold", see
  // pyhang/unwind/partitions.hpp): symbolize() gives them, offset from the
  // range's start, when the object's own symbols do not cover the pc.
  void name_code(Addr begin, Addr end, std::string name) const;
  // Where separate debug files are (gdb's `debug-file-directory`): each
  // DIR/.build-id/xx/yyyy.debug whose build-id is the object's.
  void set_debug_directories(std::vector<std::string> dirs) { debug_dirs_ = std::move(dirs); }

  // Forget the symbols of every object for which `check` returns an issue
  // (e.g. the file on disk is not the one that was mapped); the issue is
  // kept as the object's problem.
  void drop_mismatched(const std::function<std::optional<TargetIssue>(const LoadedObject&)>& check);

 private:
  std::vector<Mapping> mappings_;
  std::vector<LoadedObject> objects_;  // sorted by start
  std::vector<std::string> debug_dirs_;
  struct NamedCode {
    Addr begin, end;
    std::string name;
  };
  mutable std::vector<NamedCode> named_code_;  // runtime addresses
  const ElfFile* debug_file(const LoadedObject& o) const;
};

enum class TargetKind : std::uint8_t {
  Live,      // a process pyhang reads itself (process_vm_readv, /proc)
  Core,      // a core file
  Callback,  // memory through a function of the host (gdb)
};

inline constexpr std::array<Named<TargetKind>, 3> kTargetKindNames{{
    {TargetKind::Live, "live"},
    {TargetKind::Core, "core"},
    {TargetKind::Callback, "callback"},
}};
constexpr std::string_view to_string(TargetKind k) { return name_in(kTargetKindNames, k); }
constexpr std::optional<TargetKind> parse_target_kind(std::string_view s) { return parse_in(kTargetKindNames, s); }

// Where the files a core names are now, for a core made on another machine
// or before its files moved (pystack's and gdb's names).  Each file the core
// records as PATH is looked for as: the executable given (for the core's
// executable), SYSROOT/PATH, DIR/basename(PATH) for each search directory,
// PATH itself; the first whose build-id is the one the core holds wins,
// else the first that exists (and its build-id mismatch is reported).
struct CoreFileSearch {
  std::string executable;
  std::string sysroot;
  std::vector<std::string> search_path;
};

class Target {
 public:
  // Throws Error when the process or core cannot be opened at all.
  static std::shared_ptr<Target> live(int pid);
  static std::shared_ptr<Target> core(const std::string& core_path, const CoreFileSearch& search = {});
  static std::shared_ptr<Target> from_reader(std::shared_ptr<MemoryReader> source, std::vector<Mapping> mappings,
                                             TargetKind kind);

  MemoryReader& memory() { return *memory_; }
  const AddressSpace& space() const { return space_; }
  void set_debug_directories(std::vector<std::string> dirs) { space_.set_debug_directories(std::move(dirs)); }
  const std::shared_ptr<CoreFile>& core_file() const { return core_; }
  std::optional<int> pid() const { return pid_; }
  TargetKind kind() const { return kind_; }
  // The program's executable (/proc/PID/exe, or where the file of the
  // core's mapping that holds AT_ENTRY was found); empty when unknown.
  const std::string& executable() const { return executable_; }
  // Frame 0's registers of thread `tid`: from the core's NT_PRSTATUS, or live
  // through PTRACE_GETREGS, which answers only the thread's tracer (the
  // debugger pyhang runs in) while the thread is stopped.  nullopt otherwise
  // (no such thread, not traced by this thread, a callback target).
  std::optional<Registers> registers(int tid) const;
  // Frame 0's registers of a thread of a live target that nobody stopped,
  // without ptrace: the kernel's record of where the thread blocked
  // (/proc/PID/task/TID/syscall).  Only some registers are known: the call
  // number, its six arguments, rsp and rip; callee-saved registers (rbx,
  // rbp, r12-r15), rax, rcx, r11, eflags and the segment registers are
  // always absent (pyhang/linux/syscall_record.hpp), and fs_base is the
  // caller's to add (pyhang/glibc/thread_list.hpp).  A running thread has
  // none.  nullopt for a core or a callback target.
  std::optional<linux_abi::ParkedRegisters> parked_registers(int tid) const;
  // One line each: what could not be opened or trusted.
  const std::vector<TargetIssue>& warnings() const { return warnings_; }
  void add_warning(TargetIssue w) { warnings_.push_back(std::move(w)); }
  // The target ran again: drop cached memory.
  void invalidate() { memory_->invalidate(); }

 private:
  Target() = default;
  std::shared_ptr<MemoryReader> memory_;
  AddressSpace space_;
  std::shared_ptr<CoreFile> core_;
  std::optional<int> pid_;
  TargetKind kind_ = TargetKind::Callback;
  std::string executable_;
  std::vector<TargetIssue> warnings_;
};

}  // namespace pyhang
