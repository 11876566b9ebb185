// The glibc lock decoders (mutex, rwlock, semaphore, condvar) of every
// layout row, and the identification of what a thread blocked in futex(2)
// waits on; and libc's libthread_db descriptors: their reader, their checks,
// the choice of layouts they vouch for, and pthread_t -> TID with them.
// Input, by the first byte:
//  - bit 7 clear, locks: [u8 layout row][u64 futex address][u32 futex op]
//    [u32 expected value][u8 frames][frames: u8 function, u64 rdi, u64 rsi]
//    [memory (fuzz_input.hpp)];
//  - 0x80, descriptor words: [u8 0x80][u8 glibc minor][u8 exact][u8 present
//    bits][tid, dtvp, list_t next, list_t prev: 3 x u32 each][sizeof
//    pthread, sizeof list_t, const thread area: u32 each][u64 pthread_t]
//    [memory];
//  - 0xc0, an ELF file: [u8 0xc0][u8 glibc minor][the file's bytes], whose
//    .dynsym the descriptor reader and version detection read.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/glibc/thread_db.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/elf.hpp"

using namespace pyhang;
using namespace pyhang::glibc;

namespace {

// Frame names as the debugger gives them: one of each kind identify knows.
constexpr const char* kFunctions[] = {
    "",  "??", "__lll_lock_wait", "__lll_lock_wait_private", "pthread_mutex_lock", "__pthread_mutex_lock_full",
    "__pthread_rwlock_rdlock", "__pthread_rwlock_wrlock", "pthread_rwlock_timedrdlock", "do_futex_wait",
    "__new_sem_wait_slow64", "sem_timedwait", "__pthread_cond_wait", "pthread_cond_timedwait",
    "__pthread_clockjoin_ex", "pthread_join", "__futex_abstimed_wait_common", "futex_wait", "main",
};

constexpr std::uint8_t kDescriptorWords = 0x80, kElfFile = 0x40;

std::optional<DbDesc> desc(fuzz::Input& in, bool present) {
  DbDesc d{in.u32(), in.u32(), in.u32()};
  return present ? std::optional<DbDesc>(d) : std::nullopt;
}

std::optional<std::uint32_t> word(fuzz::Input& in, bool present) {
  const std::uint32_t w = in.u32();
  return present ? std::optional<std::uint32_t>(w) : std::nullopt;
}

ThreadDb thread_db(fuzz::Input& in) {
  const std::uint8_t present = in.u8();
  ThreadDb db;
  db.library = "libc.so.6";
  db.pthread_tid = desc(in, present & 1);
  db.pthread_dtvp = desc(in, present & 2);
  db.list_t_next = desc(in, present & 4);
  db.list_t_prev = desc(in, present & 8);
  db.sizeof_pthread = word(in, present & 16);
  db.sizeof_list_t = word(in, present & 32);
  db.const_thread_area = word(in, present & 64);
  return db;
}

// What the rest of pyhang does with a version and its descriptors: check
// them, choose layouts, and decode a condvar with the layouts chosen.
void use_version(const GlibcVersion& version, MemoryReader& memory, Addr object) {
  if (version.thread_db) {
    const ThreadDbCheck check = check_thread_db(*version.thread_db);
    (void)check.vouches();
  }
  auto choice = choose_layouts(version);
  if (choice) (void)decode_condvar(memory, object, *choice.row->cond);
  else (void)choice.issue;
}

void descriptor_words(fuzz::Input& in) {
  GlibcVersion version{2, in.u8(), "", "__nptl_version", (in.u8() & 1) != 0};
  version.thread_db = thread_db(in);
  const Addr pthread = in.u64();
  ImageReader memory;
  fuzz::add_memory(in, memory);
  use_version(version, memory, pthread);
  if (const auto& tid = version.thread_db->pthread_tid) {
    (void)tid_descriptor_issue(*tid);
    (void)nptl::pthread_tid_from_layout(memory, pthread, {tid->size_bits, tid->count, tid->offset});
  }
}

void elf_file(fuzz::Input& in) {
  const int minor = in.u8();
  auto bytes = in.rest();
  std::shared_ptr<ElfFile> elf;
  try {
    elf = ElfFile::from_image(FileImage::from_bytes({bytes.begin(), bytes.end()}, "libc.so.6"));
  } catch (const Error&) {
    return;  // not an ELF file pyhang reads: refused, as it must be
  }
  ImageReader none;
  GlibcVersion given{2, minor, "", "given", true};
  given.thread_db = read_thread_db(*elf);
  use_version(given, none, 0x1000);
  if (auto detected = detect_version(*elf)) use_version(*detected, none, 0x1000);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t first = in.u8();
  if (first & kDescriptorWords) {
    if (first & kElfFile) elf_file(in);
    else descriptor_words(in);
    return 0;
  }
  const auto& rows = all_layouts();
  const Layouts& layouts = rows[first % rows.size()];
  const Addr futex = in.u64();
  const std::uint32_t op = in.u32();
  const std::uint32_t value = in.u32();
  BlockedThread thread;
  thread.tid = 4242;
  const std::size_t nframes = in.u8() % 9;
  for (std::size_t i = 0; i < nframes; ++i) {
    NativeFrame f;
    f.pc = 0x7f0000001000 + i;
    f.function = kFunctions[in.u8() % std::size(kFunctions)];
    f.rdi = in.u64();
    f.rsi = in.u64();
    thread.frames.push_back(f);
  }
  ImageReader memory;
  fuzz::add_memory(in, memory);

  if (layouts.mutex) decode_mutex(memory, futex, *layouts.mutex);
  if (layouts.rwlock) decode_rwlock(memory, futex, *layouts.rwlock);
  if (layouts.sem) decode_semaphore(memory, futex, *layouts.sem);
  if (layouts.cond) decode_condvar(memory, futex, *layouts.cond);

  Registers regs;
  regs.r[15] = 202;  // orig_rax: futex(2)
  regs.r[14] = futex;
  regs.r[13] = op;
  regs.r[12] = value;
  thread.regs = regs;
  (void)identify_blocked(memory, layouts, thread);
  thread.regs.reset();  // no registers: frames alone
  (void)identify_blocked(memory, layouts, thread);
  return 0;
}
