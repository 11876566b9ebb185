// 3.6: the GIL's static pthread objects decoded from synthetic x86-64 code
// (a lea of a static reaching pthread_* through a PLT stub), garbage code
// that must end in notes, never a crash or a hang; and the 3.6 GilInfo
// covering them.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "cpython/internal.hpp"
#include "support/cpython_image.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using namespace pyhang::cpython::detail;

namespace {

enum Reg { rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15 };

// Code at link address `base`, data in [data_lo, data_hi) writable, GOT
// slots bound to import names.
struct FakeCode final : CodeImage {
  Addr base = 0x1000;
  std::vector<std::uint8_t> bytes;
  Addr data_lo = 0x80000, data_hi = 0x90000;
  std::map<Addr, std::string> got;
  bool every_slot = false;  // every GOT slot is bound to a pthread function (fuzzing)

  std::size_t read(Addr link, std::uint8_t* buf, std::size_t n) const override {
    if (link < base || link >= base + bytes.size()) return 0;
    std::size_t take = std::min<std::size_t>(n, base + bytes.size() - link);
    std::memcpy(buf, bytes.data() + (link - base), take);
    return take;
  }
  bool executable(Addr link) const override { return link >= base && link < base + bytes.size(); }
  bool writable(Addr link, std::uint64_t size) const override { return link >= data_lo && link + size <= data_hi; }
  std::string import_at(Addr slot) const override {
    if (every_slot) return (slot / 8) % 2 ? "pthread_mutex_lock" : "pthread_cond_timedwait";
    auto it = got.find(slot);
    return it == got.end() ? std::string() : it->second;
  }
};

// A tiny assembler for the forms the decoder tracks.
struct Asm {
  FakeCode& c;
  Addr pc() const { return c.base + c.bytes.size(); }
  Asm& raw(std::initializer_list<int> b) {
    for (int x : b) c.bytes.push_back(static_cast<std::uint8_t>(x));
    return *this;
  }
  Asm& d32(std::int64_t v) {
    auto u = static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
    for (int i = 0; i < 4; ++i) c.bytes.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
    return *this;
  }
  Asm& lea(Reg r, Addr target) {  // lea r64, [rip+disp32]
    Addr next = pc() + 7;
    raw({0x48 | (r >= 8 ? 4 : 0), 0x8d, ((r & 7) << 3) | 5});
    return d32(static_cast<std::int64_t>(target - next));
  }
  Asm& mov(Reg dst, Reg src) {  // mov r64, r64 (89 /r)
    return raw({0x48 | (src >= 8 ? 4 : 0) | (dst >= 8 ? 1 : 0), 0x89, 0xc0 | ((src & 7) << 3) | (dst & 7)});
  }
  Asm& call(Addr target) {
    Addr next = pc() + 5;
    raw({0xe8});
    return d32(static_cast<std::int64_t>(target - next));
  }
  Asm& jmp(Addr target) {
    Addr next = pc() + 5;
    raw({0xe9});
    return d32(static_cast<std::int64_t>(target - next));
  }
  Asm& ret() { return raw({0xc3}); }
  Asm& pad(std::size_t align = 16) {
    while (pc() % align) raw({0x90});
    return *this;
  }
  // A PLT stub `[endbr64; bnd] jmp *slot(%rip)` for an import; returns its address.
  Addr plt(const std::string& name, Addr slot, bool ibt = false) {
    pad();
    Addr at = pc();
    if (ibt) raw({0xf3, 0x0f, 0x1e, 0xfa, 0xf2});
    Addr next = pc() + 6;
    raw({0xff, 0x25});
    d32(static_cast<std::int64_t>(slot - next));
    c.got[slot] = name;
    return at;
  }
};

constexpr Addr kGilMutex = 0x800a0, kGilCond = 0x800e0, kSwitchMutex = 0x80020, kSwitchCond = 0x80060;

struct Plt {
  Addr mutex_init, mutex_lock, cond_init, cond_timedwait, cond_wait, cond_destroy, fatal;
};

Plt make_plt(Asm& a) {
  Plt p{};
  p.mutex_init = a.plt("pthread_mutex_init", 0x70000);
  p.mutex_lock = a.plt("pthread_mutex_lock", 0x70008, true);
  p.cond_init = a.plt("pthread_cond_init", 0x70010);
  p.cond_timedwait = a.plt("pthread_cond_timedwait", 0x70018, true);
  p.cond_wait = a.plt("pthread_cond_wait", 0x70020);
  p.cond_destroy = a.plt("pthread_cond_destroy", 0x70028);
  p.fatal = a.plt("Py_FatalError", 0x70030);
  return p;
}

// The shape gcc gives ceval.c of 3.6: static create_gil and take_gil called
// from PyEval_InitThreads; drop_gil's switch wait in PyEval_SaveThread.
struct Program {
  FakeCode code;
  std::vector<CodeEntry> entries;
  Program() {
    Asm a{code};
    Plt p = make_plt(a);
    // static void create_gil(void)
    a.pad();
    Addr create = a.pc();
    a.raw({0x48, 0x83, 0xec, 0x08});  // sub rsp, 8
    for (auto [obj, fn] : {std::pair{kGilMutex, p.mutex_init}, {kSwitchMutex, p.mutex_init}, {kGilCond, p.cond_init},
                           {kSwitchCond, p.cond_init}}) {
      a.raw({0x31, 0xf6}).lea(rdi, obj).call(fn).raw({0x85, 0xc0}).raw({0x75, 0x00});  // xor esi; ...; test; jne +0
    }
    a.raw({0x48, 0x83, 0xc4, 0x08}).ret();  // add rsp, 8
    a.lea(rdi, 0x3000).call(p.fatal);       // a cold block after the ret: a string in .rodata
    // static void take_gil(PyThreadState *)
    a.pad();
    Addr take = a.pc();
    a.raw({0x53});                                // push rbx
    a.lea(rbx, kGilMutex).mov(rdi, rbx).call(p.mutex_lock);
    a.raw({0x85, 0xc0}).raw({0x0f, 0x85}).d32(0x40);                 // test eax; jne far (forward, past the end)
    a.raw({0x4c, 0x8d, 0x74, 0x24, 0x30});                           // lea r14, [rsp+0x30]
    a.raw({0x49, 0xbd}).d32(0x12345678).d32(0x431bde82);             // movabs r13, imm64
    a.raw({0x48, 0x69, 0xc9}).d32(1000);                             // imul rcx, rcx, 1000
    a.raw({0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0});         // nopw cs:[rax+rax]
    a.raw({0x0f, 0x28, 0xc1});                                       // movaps xmm0, xmm1
    a.raw({0xf7, 0x05}).d32(0x100).d32(1);                           // test dword [rip+..], 1
    a.raw({0x31, 0xf6});                                             // xor esi, esi: rsi unknown
    a.mov(rsi, rbx).lea(rdi, kGilCond).call(p.cond_timedwait);
    a.raw({0x5b}).ret();                                             // pop rbx; ret
    // PyEval_InitThreads
    a.pad();
    Addr init = a.pc();
    a.raw({0x48, 0x83, 0xec, 0x08}).call(create).call(take).raw({0x48, 0x83, 0xc4, 0x08}).ret();
    entries.push_back({"PyEval_InitThreads", init, a.pc() - init});
    // PyEval_SaveThread with drop_gil's switch wait inlined
    a.pad();
    Addr save = a.pc();
    a.raw({0x55}).lea(rbp, kSwitchMutex).mov(rdi, rbp).call(p.mutex_lock);
    a.mov(rsi, rbp).lea(rdi, kSwitchCond).call(p.cond_wait).raw({0x5d}).ret();
    entries.push_back({"PyEval_SaveThread", save, a.pc() - save});
    a.pad();
  }
};

}  // namespace

TEST_CASE("3.6: gil_mutex, gil_cond, switch_mutex and switch_cond come from lea + call through the PLT", "[cpython][gil36]") {
  Program prog;
  auto g = decode_gil_statics(prog.code, prog.entries);
  INFO((g.notes.empty() ? std::string() : Catch::StringMaker<ReadProblem>::convert(g.notes[0])));
  CHECK(g.gil_mutex == kGilMutex);
  CHECK(g.gil_cond == kGilCond);
  CHECK(g.switch_mutex == kSwitchMutex);
  CHECK(g.switch_cond == kSwitchCond);
  CHECK(g.notes.empty());

  SECTION("roles come from the waits, whatever the order of the entries") {
    std::reverse(prog.entries.begin(), prog.entries.end());
    auto h = decode_gil_statics(prog.code, prog.entries);
    CHECK(h.gil_mutex == kGilMutex);
    CHECK(h.gil_cond == kGilCond);
    CHECK(h.switch_mutex == kSwitchMutex);
    CHECK(h.switch_cond == kSwitchCond);
  }
  SECTION("without the waits, the first of each kind initialised is the GIL's") {
    auto only_init = prog.entries;
    only_init.pop_back();  // no PyEval_SaveThread
    prog.code.got[0x70018] = "not_pthread";  // no timedwait either
    auto h = decode_gil_statics(prog.code, only_init);
    CHECK(h.gil_mutex == kGilMutex);
    CHECK(h.gil_cond == kGilCond);
    CHECK(h.switch_mutex == kSwitchMutex);
    CHECK(h.switch_cond == kSwitchCond);
  }
}

TEST_CASE("3.6 GIL decode: non-PIC code takes addresses with mov r32, imm32", "[cpython][gil36]") {
  FakeCode code;
  Asm a{code};
  Plt p = make_plt(a);
  a.pad();
  Addr f = a.pc();
  a.raw({0xbf}).d32(kGilMutex).call(p.mutex_init);               // mov edi, imm32
  a.raw({0x48, 0xc7, 0xc3}).d32(kGilCond).mov(rdi, rbx).call(p.cond_init);  // mov rbx, simm32
  a.raw({0x41, 0xbd}).d32(0x12345).ret();                         // mov r13d, imm32 (unused)
  auto g = decode_gil_statics(code, {{"f", f, a.pc() - f}});
  CHECK(g.gil_mutex == kGilMutex);
  CHECK(g.gil_cond == kGilCond);
}

TEST_CASE("3.6 GIL decode: a register overwritten before the call is not taken", "[cpython][gil36]") {
  FakeCode code;
  Asm a{code};
  Plt p = make_plt(a);
  a.pad();
  Addr f = a.pc();
  a.lea(rdi, kGilMutex).raw({0x31, 0xff}).call(p.mutex_lock);                 // xor edi, edi
  a.lea(rbx, kGilCond).raw({0x48, 0x8b, 0x1d}).d32(0x10).mov(rdi, rbx).call(p.cond_init);  // mov rbx, [rip+..]
  a.lea(rdi, kGilCond).call(0x10).call(p.cond_init);                          // a call clobbers rdi
  // two paths joining: rdi differs, so it is unknown after the join
  a.lea(rdi, kGilMutex).raw({0x74, 0x07}).lea(rdi, kSwitchMutex).call(p.mutex_lock).ret();
  std::size_t size = a.pc() - f;
  auto g = decode_gil_statics(code, {{"f", f, size}});
  CHECK_FALSE(g.any());
}

TEST_CASE("3.6 GIL decode: addresses outside writable data, or used as two kinds, are rejected with a note", "[cpython][gil36]") {
  FakeCode code;
  Asm a{code};
  Plt p = make_plt(a);
  a.pad();
  Addr f = a.pc();
  a.lea(rdi, 0x3000).call(p.mutex_init);       // .rodata
  a.lea(rdi, kGilMutex + 4).call(p.mutex_init);  // misaligned
  a.lea(rdi, kGilCond).call(p.cond_init).lea(rdi, kGilCond).call(p.mutex_lock);
  a.ret();
  auto g = decode_gil_statics(code, {{"f", f, a.pc() - f}});
  CHECK_FALSE(g.any());
  REQUIRE(g.notes.size() >= 2);
  auto noted = [&](ReadWhy why) {
    return std::any_of(g.notes.begin(), g.notes.end(), [&](const ReadProblem& n) { return n.why == why; });
  };
  CHECK(noted(ReadWhy::NotWritable));
  CHECK(noted(ReadWhy::MutexAndCond));
}

TEST_CASE("3.6 GIL decode: truncated code, code without the pattern and random bytes give notes, not a crash", "[cpython][gil36]") {
  SECTION("truncated in the middle of a lea") {
    FakeCode code;
    Asm a{code};
    Plt p = make_plt(a);
    a.pad();
    Addr f = a.pc();
    a.lea(rdi, kGilMutex).call(p.mutex_init).lea(rdi, kGilCond);
    code.bytes.resize(code.bytes.size() - 3);
    auto g = decode_gil_statics(code, {{"f", f, 64}});
    CHECK(g.gil_mutex == kGilMutex);  // what came before the cut still counts
    CHECK_FALSE(g.gil_cond);
    REQUIRE_FALSE(g.notes.empty());
    const ReadProblem& cut = g.notes.back();
    CHECK((cut.why == ReadWhy::PartlyUnreadable || (cut.why == ReadWhy::Undecodable && cut.limit == 1)));
    CHECK(cut.path.back().part == ReadPart::Function);
  }
  SECTION("no pattern") {
    FakeCode code;
    Asm a{code};
    a.raw({0x31, 0xc0}).ret();  // xor eax, eax; ret
    auto g = decode_gil_statics(code, {{"f", code.base, 3}});
    CHECK_FALSE(g.any());
  }
  SECTION("an undecodable byte ends the function") {
    FakeCode code;
    Asm a{code};
    a.raw({0xc5, 0xf8, 0x77});  // vzeroupper: VEX, not decoded
    auto g = decode_gil_statics(code, {{"f", code.base, 0}});
    CHECK_FALSE(g.any());
    REQUIRE_FALSE(g.notes.empty());
    CHECK(g.notes[0].why == ReadWhy::Undecodable);
    CHECK(g.notes[0].number == 0);
  }
  SECTION("entries at 0 or outside the code") {
    FakeCode code;
    auto g = decode_gil_statics(code, {{"a", 0, 0}, {"b", 0xdead0000, 100}});
    CHECK_FALSE(g.any());
  }
  SECTION("random bytes, with every GOT slot bound to a pthread function") {
    std::mt19937_64 rng(36);
    for (int round = 0; round < 300; ++round) {
      FakeCode code;
      code.bytes.resize(8192);
      for (auto& b : code.bytes) b = static_cast<std::uint8_t>(rng());
      // sprinkle the patterns so that some calls and leas decode
      for (int k = 0; k < 64; ++k) {
        std::size_t at = rng() % (code.bytes.size() - 8);
        const std::uint8_t pat[][3] = {{0x48, 0x8d, 0x3d}, {0x48, 0x8d, 0x35}, {0xe8, 0, 0}, {0xff, 0x25, 0}};
        std::memcpy(&code.bytes[at], pat[rng() % 4], 3);
      }
      code.every_slot = true;
      code.data_lo = 0;
      code.data_hi = ~Addr{0} / 2;
      std::vector<CodeEntry> entries;
      for (int e = 0; e < 9; ++e) entries.push_back({"f", code.base + rng() % 8192, (round % 2) ? 0 : rng() % 5000});
      auto g = decode_gil_statics(code, entries);
      (void)g;  // any answer, but an answer
    }
    SUCCEED();
  }
}

TEST_CASE("3.6: the GIL covers gil_locked and the decoded pthread objects, so their waiters are recognised", "[cpython][gil36]") {
  const Layout& l = testing::layout(6);
  testing::Image img(l);
  Addr interp = img.interpreter(0);
  Addr head = img.alloc(8);
  img.put<Addr>(head, 0, interp);
  Addr t1 = img.thread_state(interp, 0, 1, 1);
  Addr t2 = img.thread_state(interp, 0, 2, 2);
  img.link_threads(interp, {t1, t2});
  Addr current = img.alloc(8);
  img.put<Addr>(current, 0, t1);
  Addr locked = img.alloc(8);
  img.put<std::int32_t>(locked, 0, 1);
  Addr block = img.alloc(0x100);  // switch_mutex, switch_cond, gil_mutex, gil_cond as gcc lays them out
  Roots r;
  r.interp_head_var = head;
  r.tstate_current_var = current;
  r.gil_locked_var = locked;
  r.switch_mutex_var = block;
  r.switch_cond_var = block + 0x40;
  r.gil_mutex_var = block + 0x80;
  r.gil_cond_var = block + 0xc0;
  auto mem = img.reader();
  auto st = inspect_memory(mem, l, r);
  REQUIRE(st.gils.size() == 1);
  const GilInfo& g = st.gils[0];
  CHECK(g.locked == true);
  CHECK(g.holder_tstate == t1);
  CHECK(g.address == block);
  CHECK(g.size == 0xc0 + kPthreadCondSize);
  REQUIRE(g.ranges.size() == 5);
  CHECK(g.ranges[0].start == locked);
  CHECK(g.ranges[0].size == 4);
  CHECK(g.ranges[1].start == r.gil_mutex_var);
  CHECK(g.ranges[2].start == r.gil_cond_var);
  CHECK(gil_for_wait_address(st, r.gil_cond_var + 40) == &g);  // __g_signals[0], what take_gil sleeps on
  CHECK(gil_for_wait_address(st, r.gil_mutex_var) == &g);
  CHECK(gil_for_wait_address(st, r.switch_cond_var + 44) == &g);
  CHECK(gil_for_wait_address(st, locked) == &g);
  CHECK(gil_for_wait_address(st, r.gil_cond_var + kPthreadCondSize) == nullptr);
  CHECK(gil_for_wait_address(st, block - 1) == nullptr);

  SECTION("objects far apart: address stays gil_locked and only the ranges cover them") {
    Addr far = img.alloc(0x1000);
    r.switch_cond_var = far + 0xf00;
    auto st2 = inspect_memory(mem, l, r);
    REQUIRE(st2.gils.size() == 1);
    CHECK(st2.gils[0].address == locked);
    CHECK(st2.gils[0].size == 4);
    CHECK(gil_for_wait_address(st2, r.switch_cond_var + 40) == &st2.gils[0]);
    CHECK(gil_for_wait_address(st2, r.gil_cond_var + 40) == &st2.gils[0]);
    CHECK(gil_for_wait_address(st2, far) == nullptr);
  }
  SECTION("nothing decoded: gil_locked alone, as before") {
    Roots bare = r;
    bare.gil_mutex_var = bare.gil_cond_var = bare.switch_mutex_var = bare.switch_cond_var = 0;
    auto st3 = inspect_memory(mem, l, bare);
    REQUIRE(st3.gils.size() == 1);
    CHECK(st3.gils[0].address == locked);
    CHECK(st3.gils[0].ranges.size() == 1);
    CHECK(gil_for_wait_address(st3, r.gil_cond_var + 40) == nullptr);
  }
}
