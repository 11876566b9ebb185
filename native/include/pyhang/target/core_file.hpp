// Core files (ET_CORE): threads and registers from NT_PRSTATUS, the process
// from NT_PRPSINFO, mapped files from NT_FILE, memory from PT_LOAD, and for
// ranges the core left out (read-only text, or a truncated core) the bytes
// of the mapped files themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/arch/x86_64/registers.hpp"
#include "pyhang/target/elf.hpp"
#include "pyhang/target/issues.hpp"
#include "pyhang/target/mappings.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {

struct CoreThread {
  int tid = 0;
  int signal = 0;
  Registers regs;
};

class CoreFile {
 public:
  static std::shared_ptr<CoreFile> open(const std::string& path);  // throws Error
  static std::shared_ptr<CoreFile> from_image(std::shared_ptr<FileImage> image);

  const std::string& path() const { return elf_->path(); }
  int pid() const { return pid_; }
  int parent_pid() const { return ppid_; }                     // NT_PRPSINFO pr_ppid (0: not recorded)
  const std::string& command_name() const { return fname_; }  // NT_PRPSINFO pr_fname
  const std::string& arguments() const { return psargs_; }    // NT_PRPSINFO pr_psargs
  const std::vector<CoreThread>& threads() const { return threads_; }
  const std::vector<Mapping>& file_mappings() const { return files_; }
  const std::vector<std::uint64_t>& auxv() const { return auxv_; }
  std::optional<std::uint64_t> auxv_value(std::uint64_t type) const;

  // Bytes the core's PT_LOAD segments hold for [addr, addr+n).
  // Whether `addr` lies in what the core recorded (a segment's file size)
  // but lost to truncation: those bytes are unknown, and no file may stand
  // in for them (a writable segment's file holds its initial data).
  bool lost(Addr addr) const;
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) const;
  // Whether a PT_LOAD segment covers addr (with or without file bytes).
  bool covers(Addr addr) const;

  // Problems found while reading the core ("truncated: ..."), one line each.
  const std::vector<TargetIssue>& problems() const { return problems_; }

 private:
  explicit CoreFile(std::shared_ptr<ElfFile> elf);
  void parse();
  std::shared_ptr<ElfFile> elf_;
  int pid_ = 0;
  int ppid_ = 0;
  std::string fname_, psargs_;
  std::vector<CoreThread> threads_;
  std::vector<Mapping> files_;
  std::vector<std::uint64_t> auxv_;
  struct Load { Addr vaddr; std::uint64_t offset, filesz, memsz, available; };
  std::vector<Load> loads_;  // sorted by vaddr
  std::vector<TargetIssue> problems_;
};

// Memory of a core: the core's own bytes first, then the files of NT_FILE
// for what it omitted.  `locate` maps a path recorded in the core to where
// the file is now (sysroot, a copied tree); by default the path itself.
class CoreReader final : public MemoryReader {
 public:
  using Locate = std::function<std::string(const std::string&)>;
  explicit CoreReader(std::shared_ptr<CoreFile> core, Locate locate = {});
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) override;
  std::string describe() const override;
  const CoreFile& core() const { return *core_; }

 private:
  std::size_t read_from_files(Addr addr, void* buf, std::size_t n);
  std::shared_ptr<CoreFile> core_;
  Locate locate_;
  std::vector<std::shared_ptr<FileImage>> images_;  // per file mapping, lazily
  std::vector<bool> tried_;
};

}  // namespace pyhang
