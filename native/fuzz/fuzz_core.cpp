// Core files from bytes: notes (NT_PRSTATUS, NT_PRPSINFO, NT_FILE, NT_AUXV),
// PT_LOAD segments and reads through them.  The files a core names are
// never opened: the fuzzer's input is the whole world.
#include <cstdint>
#include <vector>

#include "fuzz_input.hpp"
#include "pyhang/target/core_file.hpp"

using namespace pyhang;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::shared_ptr<CoreFile> core;
  try {
    core = CoreFile::from_image(FileImage::from_bytes({data, data + size}, "fuzz.core"));
  } catch (const Error&) {
    return 0;
  }
  (void)core->pid();
  (void)core->command_name();
  (void)core->arguments();
  for (const CoreThread& t : core->threads()) (void)t.regs;
  for (std::uint64_t type : {3, 9, 33}) (void)core->auxv_value(type);  // AT_PHDR, AT_ENTRY, AT_SYSINFO_EHDR
  CoreReader reader(core, [](const std::string&) { return std::string("/nonexistent/fuzz"); });
  std::uint8_t buf[256];
  std::size_t probes = 0;
  for (const Mapping& m : core->file_mappings()) {
    if (++probes > 64) break;
    core->covers(m.start);
    reader.read_partial(m.start, buf, sizeof buf);
    reader.read_partial(m.end - 8, buf, sizeof buf);
  }
  for (Addr a : {Addr{0}, Addr{0x400000}, Addr{0x7ffff7dd0000}, ~Addr{0} - 16}) {
    core->read_partial(a, buf, sizeof buf);
    reader.read_partial(a, buf, sizeof buf);
  }
  for (auto v : core->auxv()) {
    if (++probes > 128) break;
    reader.read_partial(v, buf, 16);
  }
  (void)reader.describe();
  return 0;
}
