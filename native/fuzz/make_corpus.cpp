// Writes the seed corpus of every fuzz target (native/fuzz/corpus/<target>)
// from the unit tests' synthetic builders: make_corpus DIR.  The seeds are
// committed; run again after changing a target's input format.
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "glibc/layout_tables.hpp"
#include "pyhang/glibc/layouts.hpp"
#include "support/cpython_objects.hpp"
#include "support/eh_object.hpp"
#include "support/elf_builder.hpp"

using namespace pyhang;
namespace fs = std::filesystem;
using fuzz::Output;

namespace {

fs::path out_dir;

void seed(const std::string& target, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(out_dir / target);
  std::ofstream(out_dir / target / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// ---- ELF files, cores, CFI and the unwinder --------------------------------

void elf_and_cfi_seeds() {
  using namespace pyhang::testing;
  seed("elf", "shared-object", build_shared_object({{"_PyRuntime", 0x2000, 0x100, true, STT_OBJECT},
                                                    {"Py_Version", 0x2100, 4, true, STT_OBJECT},
                                                    {"main", 0x1000, 0x40, false}},
                                                   ".PyRuntime", std::vector<std::uint8_t>(64, 1)));
  TestObject spec = three_functions();
  spec.symbols.push_back({"main", 0x1100, 0x80, false});
  const auto object = build_object(spec);
  seed("elf", "eh-frame-hdr", object);
  spec.hdr = false;
  seed("elf", "eh-frame-index", build_object(spec));

  CoreSpec core;
  core.threads = {{4242, 0x401000}, {4243, 0x402000}};
  core.files = {{0x400000, 0x402000, 0, "/usr/bin/python3.11"}, {0x7f0000000000, 0x7f0000001000, 0x3000, "/lib/x.so"}};
  core.segments = {{0x600000, std::vector<std::uint8_t>(256, 7), 4096}, {0x700000, {}, 0x2000}};
  core.auxv = {9, 0x401234, 33, 0x7fff0000, 0, 0};
  seed("core", "two-threads", build_core(core));

  // .eh_frame alone, at its link-time address, with an expression reading
  // the stack (DW_OP_breg7 8; DW_OP_deref).
  std::vector<std::uint8_t> eh(object.begin() + kEhFrame, object.begin() + (kEhFrame + 0x200));
  Output cfi;
  cfi.u64(kEhFrame).u64(0x10).u64(kEhFrame + 0x40).u64(kEhFrame).u16(3).u8(0x77).u8(8).u8(0x06).add(eh);
  seed("cfi", "three-functions", cfi.bytes);

  // The unwinder: the object and the stack of leaf <- middle <- outer
  // (native/tests/unwind/test_unwind.cpp), the object mapped at kBase.
  constexpr Addr kBase = 0x7f0000000000, kStack = 0x7ffd00000000;
  std::vector<std::uint8_t> stack(0x300, 0);
  auto put = [&](Addr at, std::uint64_t v) { std::memcpy(&stack[at - kStack], &v, 8); };
  put(kStack + 0x100, 0x1234);
  put(kStack + 0x108, kBase + 0x1120);
  put(kStack + 0x200, kStack + 0x300);
  put(kStack + 0x208, kBase + 0x1210);
  for (std::uint8_t flags : {0, 1}) {
    Output u;
    u.u16(static_cast<std::uint16_t>(object.size())).add(object);
    u.u32(0x1010).u64(kStack + 0x100).u64(kStack + 0x200).u8(flags).memory(kStack, stack);
    seed("unwind", flags ? "three-frames-main" : "three-frames", u.bytes);
  }
}

// ---- CPython ---------------------------------------------------------------

// A table whose entries say "line first+1" over the whole code.
std::vector<std::uint8_t> whole_code(const cpython::Layout& l) {
  switch (l.linetable) {
    case cpython::LineTableFormat::Lnotab: return {0, 1, 8, 1};
    case cpython::LineTableFormat::LineTable310: return {8, 1, 200, 1};
    case cpython::LineTableFormat::LocationTable: {
      std::vector<std::uint8_t> t;
      for (int i = 0; i < 8; ++i) t.insert(t.end(), {static_cast<std::uint8_t>(0x80 | (13 << 3) | 7), 2});
      t.insert(t.end(), {0x80 | (14 << 3) | 3, 3, 0, 5, 9, 0x80 | (10 << 3), 3, 7, 0x80 | (15 << 3)});
      return t;
    }
  }
  return {};
}

void linetable_seeds() {
  const int max = std::numeric_limits<int>::max();
  for (int minor = 6; minor <= 15; ++minor) {
    const auto& l = cpython::testing::layout(minor);
    Output o;
    o.u8(static_cast<std::uint8_t>(minor - 6)).u32(10).u64(6).add(whole_code(l));
    seed("linetable", "3." + std::to_string(minor), o.bytes);
  }
  // The tables of the issue whose sums overflowed an int
  // (native/tests/cpython/test_linetables.cpp).
  auto overflow = [&](int minor, int first, const std::string& hex, const std::string& name) {
    Output o;
    o.u8(static_cast<std::uint8_t>(minor - 6)).u32(static_cast<std::uint32_t>(first)).u64(2).add(from_hex(hex));
    seed("linetable", name, o.bytes);
  };
  overflow(11, 1, "9e01ffffff0c00030380ffbcffefffffffffffffffffffffff45", "overflow-location-table");
  overflow(9, max - 10, "ffffffff7f60fc012ef8f041000102", "overflow-lnotab");
  overflow(10, max, "02000201", "overflow-3.10");
}

using namespace pyhang::cpython;
namespace testing = pyhang::cpython::testing;

// A CPython image of one version (its objects) with one interpreter the
// walkers find from `roots`: through _PyRuntime (3.7+) or the static
// interp_head and _PyThreadState_Current (3.6).
struct CpythonImage {
  testing::Objects o;
  Roots roots;
  Addr interp = 0;
  explicit CpythonImage(int minor) : o(minor) {
    const Layout& l = o.l;
    interp = o.img.interpreter(0);
    if (l.has(l.runtime_interpreters_head)) {
      roots.runtime = o.img.runtime(interp);
    } else {
      roots.interp_head_var = o.img.alloc(8);
      o.img.put<Addr>(roots.interp_head_var, 0, interp);
      roots.tstate_current_var = o.img.alloc(8);
    }
  }
  // [u8 version][u64 _PyRuntime][u64 interp_head][u64 _PyThreadState_Current]
  void header(Output& out, int says = 0) const {
    out.u8(static_cast<std::uint8_t>((says ? says : o.l.minor) - 6)).u64(roots.runtime).u64(roots.interp_head_var);
    out.u64(roots.tstate_current_var);
  }
  // Everything written into the image, in add_memory()'s format.
  void memory(Output& out) const {
    ImageReader reader = o.img.reader();
    std::vector<std::uint8_t> mem(1 << 21);
    mem.resize(reader.read_partial(testing::Image::kBase, mem.data(), mem.size()));
    out.memory(testing::Image::kBase, mem);
  }
};

// One interpreter with two threads of two frames each, and sys.modules
// holding sys and threading (whose _active maps an ident to a Thread).
// With `says` (a newer minor): the same image, whose _Py_DebugOffsets give
// that version, read with the table of `minor` standing in for it.
void cpython_seed(int minor, int says = 0) {
  CpythonImage image(minor);
  testing::Objects& o = image.o;
  testing::Image& img = o.img;
  const Layout& l = o.l;
  std::vector<Addr> tstates;
  for (int t = 0; t < 2; ++t) {
    Addr outer = img.code("main", "/app/main.py", 1, whole_code(l));
    Addr inner = img.code("worker.run", "/app/worker.py", 40, whole_code(l));
    Addr top;
    if (l.frame_model == FrameModel::FrameObject) {
      top = img.frame_object(inner, 8, img.frame_object(outer, 2, 0));
    } else {
      top = img.interpreter_frame(inner, 8, img.interpreter_frame(outer, 2, 0, 0, true));
    }
    tstates.push_back(img.thread_state(image.interp, top, 0x7f0000700000 + t * 0x1000, 1000 + t));
  }
  img.link_threads(image.interp, tstates);
  if (image.roots.tstate_current_var) img.put<Addr>(image.roots.tstate_current_var, 0, tstates[0]);

  Addr thread_type = o.type_with_dict("Thread");
  Addr thread = o.instance(thread_type, {{"name", img.str("worker")}, {"_ident", o.integer(0x7f0000701000)},
                                         {"daemon", o.boolean(true)}, {"_started", o.none}});
  Addr active = o.dict_of({{o.integer(0x7f0000701000), thread}});
  Addr threading = o.module(o.dict({{"_active", active}, {"_limbo", o.dict({})}}));
  Addr misc = o.list({o.integer(-12345678901234), o.real(2.5), img.str(U"\u00e9\u4e2d\U0001F600"), o.none});
  Addr sys = o.module(o.dict({{"argv", misc}}));
  Addr modules = o.dict({{"sys", sys}, {"threading", threading}});
  PythonState st = o.state(modules);

  if (says)
    img.put<std::uint64_t>(image.roots.runtime, l.dbg_version, (3u << 24) | (static_cast<unsigned>(says) << 16) | 0xf0);

  Output out;
  image.header(out, says);
  out.u64(image.roots.finalizing_var).u64(image.roots.gil_locked_var);
  out.u64(st.threads[0].interp).u64(thread).u64(active).u64(misc).u64(sys);
  image.memory(out);
  seed("cpython", says ? "3." + std::to_string(says) + "-stand-in" : "3." + std::to_string(minor), out.bytes);
}

// What names a lock and which threads reach it: __main__'s global
// `config_lock`, `cache._lock` of an instance __main__ holds, mymod.LOCK,
// and a lock a thread's frame reaches through its local `self` (a Worker
// whose `_lock` it is) and its local `lock`.  The thread is found by the
// walkers and also given as the input's own thread (its frame and code).
void names_seed(int minor) {
  CpythonImage image(minor);
  testing::Objects& o = image.o;
  testing::Image& img = o.img;
  const Layout& l = o.l;
  Addr lock_type = img.type("_thread.lock", 0);
  Addr config = o.object(lock_type), cached = o.object(lock_type), module_lock = o.object(lock_type);
  Addr held = o.object(lock_type);
  Addr worker = o.instance(o.type_with_dict("Worker"), {{"_lock", held}, {"jobs", o.integer(3)}});
  Addr cache = o.instance(o.type_with_dict("Cache"), {{"_lock", cached}});
  Addr main = o.module(o.dict({{"config_lock", config}, {"cache", cache}}));
  Addr mymod = o.module(o.dict({{"LOCK", module_lock}}));
  PythonState st = o.state(o.dict({{"__main__", main}, {"mymod", mymod}}));

  // Worker.run(self, lock), suspended at its first instruction.
  Addr code = img.code("Worker.run", "/app/worker.py", 40, whole_code(l));
  Addr frame;
  if (l.frame_model == FrameModel::FrameObject) {
    img.put<Addr>(code, l.code_varnames, o.names({"self", "lock"}));
    img.put<std::int32_t>(code, l.code_nlocals, 2);
    frame = img.frame_object(code, 0, 0);
    img.put<Addr>(frame, l.frame_localsplus, worker);
    img.put<Addr>(frame, l.frame_localsplus + 8, held);
  } else {
    const auto local = static_cast<std::uint8_t>(l.co_fast_local);
    img.put<Addr>(code, l.code_localsplusnames, o.names({"self", "lock"}));
    img.put<Addr>(code, l.code_localspluskinds, img.bytes({local, local}));
    img.put<std::int32_t>(code, l.code_nlocalsplus, 2);
    frame = img.interpreter_frame(code, 0, 0, 0, true);
    img.put<Addr>(frame, l.iframe_localsplus, worker);
    img.put<Addr>(frame, l.iframe_localsplus + 8, held);
  }
  Addr tstate = img.thread_state(image.interp, frame, 0x7f0000700000, 1000);
  img.link_threads(image.interp, {tstate});
  if (image.roots.tstate_current_var) img.put<Addr>(image.roots.tstate_current_var, 0, tstate);

  Output out;
  image.header(out);
  out.u64(st.threads[0].interp).u64(config).u64(cached).u64(module_lock).u64(held);
  out.u8(1).u64(frame).u64(code);
  image.memory(out);
  seed("names", "3." + std::to_string(minor), out.bytes);
}

// ---- glibc -----------------------------------------------------------------

void glibc_seeds() {
  constexpr Addr kLock = 0x7f0000100000;
  const auto& rows = glibc::all_layouts();
  for (std::size_t row = 0; row < rows.size(); ++row) {
    struct Case {
      const char* name;
      std::uint8_t frame;  // fuzz_glibc.cpp's kFunctions
      std::vector<std::uint32_t> words;
      std::uint32_t op, val;
    };
    const Case cases[] = {
        {"mutex", 2, {2, 0, 4243, 1, 0}, 128, 2},                 // locked with waiters by 4243
        {"mutex-recursive", 4, {2, 3, 4243, 1, 1}, 128, 2},
        {"rwlock-read", 6, {0x1b, 0, 0, 0, 0, 0, 4243}, 137, 0x1b},
        {"semaphore", 9, {0, 1, 0, 0}, 393, 0},
        {"condvar", 12, {4, 0, 2, 0, 8, 0, 0, 0, 0, 0, 4, 0}, 393, 4},
    };
    for (const Case& c : cases) {
      std::vector<std::uint8_t> mem(256 + 64, 0);
      std::memcpy(mem.data() + 256, c.words.data(), c.words.size() * 4);
      Output o;
      o.u8(static_cast<std::uint8_t>(row)).u64(kLock).u32(c.op).u32(c.val);
      o.u8(2).u8(c.frame).u64(kLock).u64(c.op).u8(18).u64(0).u64(0);
      o.memory(kLock - 256, mem);
      seed("glibc", std::string(c.name) + "-" + std::to_string(row), o.bytes);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR (native/fuzz/corpus)\n");
    return 2;
  }
  out_dir = argv[1];
  elf_and_cfi_seeds();
  linetable_seeds();
  for (int minor = 6; minor <= 15; ++minor) cpython_seed(minor);
  cpython_seed(15, 16);
  for (int minor = 6; minor <= 15; ++minor) names_seed(minor);
  glibc_seeds();
  return 0;
}
