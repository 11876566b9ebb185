#include "pyhang/target/core_file.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace pyhang {

namespace {

// Offsets inside the x86_64 kernel's struct elf_prstatus / elf_prpsinfo.
// These are the kernel's ABI for core files, fixed for the architecture.
constexpr std::size_t kPrstatusCursig = 12;
constexpr std::size_t kPrstatusPid = 32;
constexpr std::size_t kPrstatusRegs = 112;
constexpr std::size_t kPrstatusSize = kPrstatusRegs + Registers::kCount * 8;
constexpr std::size_t kPrpsinfoPid = 24;
constexpr std::size_t kPrpsinfoPpid = 28;
constexpr std::size_t kPrpsinfoFname = 40;
constexpr std::size_t kPrpsinfoPsargs = 56;
constexpr std::size_t kPrpsinfoSize = 136;
constexpr std::uint32_t kNtFile = 0x46494c45;  // "FILE"
constexpr std::size_t kMaxFileEntries = 1 << 20;

template <class T>
T load(std::span<const std::uint8_t> b, std::size_t off) {
  T v{};
  if (off + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

std::string fixed_string(std::span<const std::uint8_t> b, std::size_t off, std::size_t len) {
  if (off >= b.size()) return {};
  len = std::min(len, b.size() - off);
  auto p = reinterpret_cast<const char*>(b.data() + off);
  return std::string(p, strnlen(p, len));
}

}  // namespace

std::shared_ptr<CoreFile> CoreFile::open(const std::string& path) { return from_image(FileImage::map(path)); }

std::shared_ptr<CoreFile> CoreFile::from_image(std::shared_ptr<FileImage> image) {
  auto elf = ElfFile::from_image(std::move(image));
  if (elf->type() != ET_CORE) throw Error(ErrorReason::NotCore, elf->path());
  if (elf->machine() != EM_X86_64) throw Error(ErrorReason::UnsupportedElf, elf->path());
  std::shared_ptr<CoreFile> core(new CoreFile(std::move(elf)));
  core->parse();
  return core;
}

CoreFile::CoreFile(std::shared_ptr<ElfFile> elf) : elf_(std::move(elf)) {}

void CoreFile::parse() {
  const std::uint64_t file_size = elf_->image().size();
  std::uint64_t missing = 0, wanted = 0;
  for (auto& seg : elf_->segments()) {
    if (seg.type != PT_LOAD) continue;
    std::uint64_t available = 0;
    if (seg.offset < file_size) available = std::min(seg.filesz, file_size - seg.offset);
    missing += seg.filesz - available;
    wanted += seg.filesz;
    loads_.push_back({seg.vaddr, seg.offset, seg.filesz, seg.memsz, available});
  }
  std::sort(loads_.begin(), loads_.end(), [](auto& a, auto& b) { return a.vaddr < b.vaddr; });
  if (missing > 0)
    problems_.push_back({TargetProblem::CoreTruncated, path(), missing, wanted, {}});

  for (auto& note : elf_->notes()) {
    if (note.name == "CORE" && note.type == NT_PRSTATUS && note.desc.size() >= kPrstatusSize) {
      CoreThread t;
      t.tid = load<std::int32_t>(note.desc, kPrstatusPid);
      t.signal = load<std::int16_t>(note.desc, kPrstatusCursig);
      std::memcpy(t.regs.r.data(), note.desc.data() + kPrstatusRegs, Registers::kCount * 8);
      threads_.push_back(t);
    } else if (note.name == "CORE" && note.type == NT_PRPSINFO && note.desc.size() >= kPrpsinfoSize) {
      pid_ = load<std::int32_t>(note.desc, kPrpsinfoPid);
      ppid_ = load<std::int32_t>(note.desc, kPrpsinfoPpid);
      fname_ = fixed_string(note.desc, kPrpsinfoFname, 16);
      psargs_ = fixed_string(note.desc, kPrpsinfoPsargs, 80);
    } else if (note.name == "CORE" && note.type == NT_AUXV) {
      for (std::size_t off = 0; off + 8 <= note.desc.size(); off += 8)
        auxv_.push_back(load<std::uint64_t>(note.desc, off));
    } else if (note.name == "CORE" && note.type == kNtFile && note.desc.size() >= 16) {
      auto count = load<std::uint64_t>(note.desc, 0);
      auto page = load<std::uint64_t>(note.desc, 8);
      if (count > kMaxFileEntries || 16 + count * 24 > note.desc.size()) {
        problems_.push_back({TargetProblem::CoreFilesMalformed, path(), 0, 0, {}});
        continue;
      }
      std::size_t names = 16 + count * 24;
      for (std::uint64_t i = 0; i < count; ++i) {
        Mapping m;
        m.start = load<std::uint64_t>(note.desc, 16 + i * 24);
        m.end = load<std::uint64_t>(note.desc, 16 + i * 24 + 8);
        m.offset = load<std::uint64_t>(note.desc, 16 + i * 24 + 16) * page;
        m.path = fixed_string(note.desc, names, note.desc.size() - names);
        names += m.path.size() + 1;
        files_.push_back(std::move(m));
      }
    }
  }
  if (pid_ == 0 && !threads_.empty()) pid_ = threads_.front().tid;
  if (threads_.empty()) problems_.push_back({TargetProblem::CoreNoThread, path(), 0, 0, {}});
}

std::optional<std::uint64_t> CoreFile::auxv_value(std::uint64_t type) const {
  for (std::size_t i = 0; i + 1 < auxv_.size(); i += 2)
    if (auxv_[i] == type) return auxv_[i + 1];
  return std::nullopt;
}

bool CoreFile::covers(Addr addr) const {
  auto it = std::upper_bound(loads_.begin(), loads_.end(), addr, [](Addr a, const Load& l) { return a < l.vaddr; });
  if (it == loads_.begin()) return false;
  --it;
  return addr < it->vaddr + it->memsz;
}

std::size_t CoreFile::read_partial(Addr addr, void* buf, std::size_t n) const {
  std::size_t done = 0;
  while (done < n) {
    Addr a = addr + done;
    auto it =
        std::upper_bound(loads_.begin(), loads_.end(), a, [](Addr x, const Load& l) { return x < l.vaddr; });
    if (it == loads_.begin()) break;
    --it;
    if (a >= it->vaddr + it->available) break;
    std::size_t take = std::min<std::uint64_t>(n - done, it->vaddr + it->available - a);
    std::size_t got = elf_->image().copy(it->offset + (a - it->vaddr), static_cast<char*>(buf) + done, take);
    done += got;
    if (got < take) break;
  }
  return done;
}

bool CoreFile::lost(Addr addr) const {
  auto it = std::upper_bound(loads_.begin(), loads_.end(), addr, [](Addr x, const Load& l) { return x < l.vaddr; });
  if (it == loads_.begin()) return false;
  --it;
  return addr >= it->vaddr + it->available && addr < it->vaddr + it->filesz;
}

// ------------------------------------------------------------ CoreReader ----

CoreReader::CoreReader(std::shared_ptr<CoreFile> core, Locate locate)
    : core_(std::move(core)), locate_(std::move(locate)) {
  images_.resize(core_->file_mappings().size());
  tried_.resize(core_->file_mappings().size());
}

std::string CoreReader::describe() const { return "core file " + core_->path(); }

std::size_t CoreReader::read_from_files(Addr addr, void* buf, std::size_t n) {
  const auto& files = core_->file_mappings();
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& m = files[i];
    if (addr < m.start || addr >= m.end) continue;
    if (!tried_[i]) {
      tried_[i] = true;
      std::string path = locate_ ? locate_(m.path) : m.path;
      try {
        images_[i] = FileImage::map(path);
      } catch (const Error&) {
        // Reported once per file by Target; here the bytes are simply absent.
      }
    }
    if (!images_[i]) return 0;
    std::size_t take = std::min<std::uint64_t>(n, m.end - addr);
    ++stats_.syscalls;
    return images_[i]->copy(m.offset + (addr - m.start), buf, take);
  }
  return 0;
}

std::size_t CoreReader::read_partial(Addr addr, void* buf, std::size_t n) {
  ++stats_.calls;
  std::size_t done = 0;
  while (done < n) {
    auto p = static_cast<char*>(buf) + done;
    std::size_t got = core_->read_partial(addr + done, p, n - done);
    if (got == 0 && !core_->lost(addr + done)) got = read_from_files(addr + done, p, n - done);
    if (got == 0) break;
    done += got;
  }
  stats_.bytes += done;
  return done;
}

}  // namespace pyhang
