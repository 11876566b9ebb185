// The GIL: where its state is (GilModel), whether it is locked, who holds
// it, and which wait addresses belong to it; on 3.6, where the GIL is a set
// of static variables, the decoding of their addresses from machine code.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_set>

#include "cpython_internal.hpp"

namespace pyhang::cpython {

namespace {

using detail::CodeEntry;
using detail::CodeImage;
using detail::GilStatics;
using detail::kPthreadCondSize;
using detail::kPthreadMutexSize;

std::string hex(Addr a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

// One struct _gil_runtime_state at addr.
GilInfo read_gil_state(MemoryReader& mem, const Layout& l, Addr addr, std::int64_t interp_id,
                       std::vector<std::string>& warnings) {
  GilInfo g;
  g.address = addr;
  g.size = static_cast<std::uint64_t>(l.gil_size);
  g.interp_id = interp_id;
  g.source = "gil-state";
  g.ranges.push_back({g.address, g.size});
  detail::RemoteStruct s;
  if (!s.load(mem, addr, static_cast<std::size_t>(l.gil_size))) {
    warnings.push_back("GIL state at " + hex(addr) + " unreadable");
    g.source = "unreadable";
    return g;
  }
  auto locked = s.get<std::int32_t>(l.gil_locked);
  Addr holder = s.ptr(l.gil_last_holder);
  g.switch_number = s.get<std::uint64_t>(l.gil_switch_number);
  if (locked && *locked == -1) {
    g.source = "gil-state (not created yet)";
    g.locked = false;
  } else if (locked && (*locked == 0 || *locked == 1)) {
    g.locked = *locked == 1;
  } else {
    warnings.push_back("layout mismatch? GIL at " + hex(addr) + " has locked = " +
                       (locked ? std::to_string(*locked) : std::string("?")));
  }
  if (holder != 0 && !detail::plausible_pointer(holder)) {
    warnings.push_back("layout mismatch? GIL at " + hex(addr) + " has last_holder " + hex(holder));
    holder = 0;
  }
  if (g.locked.value_or(false)) g.holder_tstate = holder;
  return g;
}


// ---------------------------------------------------------------------------
// A minimal x86-64 decoder: the length of every instruction gcc and clang
// emit for general-purpose code (legacy prefixes, REX, the one-byte map and
// the 0f, 0f38, 0f3a maps; no VEX/EVEX), plus what the GIL analysis needs:
// ModRM fields, RIP-relative displacements, branch displacements.

struct Insn {
  std::size_t len = 0;
  std::uint8_t map = 0;     // 0: one-byte, 1: 0f, 2: 0f38, 3: 0f3a
  std::uint8_t op = 0;
  std::uint8_t rex = 0;
  bool has_modrm = false;
  std::uint8_t mod = 0;
  std::uint8_t ext = 0;     // ModRM.reg without REX.R (the opcode extension of group opcodes)
  std::uint8_t reg = 0;     // ModRM.reg with REX.R
  std::uint8_t rm = 0;      // ModRM.rm with REX.B (a register when mod == 3)
  bool rip_relative = false;
  std::int64_t disp = 0;    // of a RIP-relative operand
  bool has_rel = false;
  std::int64_t rel = 0;     // branch displacement
  std::size_t imm_size = 0;
  std::uint64_t imm = 0;    // immediate of 4 or 8 bytes, zero-extended
  bool rex_w() const { return rex & 8; }
};

std::optional<Insn> decode_insn(const std::uint8_t* p, std::size_t avail) {
  avail = std::min<std::size_t>(avail, 15);
  Insn in;
  std::size_t i = 0;
  bool opsize = false, addr32 = false;
  for (; i < avail; ++i) {
    std::uint8_t b = p[i];
    if (b == 0x66) opsize = true;
    else if (b == 0x67) addr32 = true;
    else if (b != 0xf0 && b != 0xf2 && b != 0xf3 && b != 0x2e && b != 0x36 && b != 0x3e && b != 0x26 &&
             b != 0x64 && b != 0x65)
      break;
  }
  if (i < avail && (p[i] & 0xf0) == 0x40) in.rex = p[i++];
  if (i >= avail) return std::nullopt;
  std::uint8_t op = p[i++];
  std::size_t imm = 0, rel = 0;
  bool modrm = false;
  const std::size_t imm_z = opsize ? 2 : 4;  // Iz
  if (op == 0x0f) {
    if (i >= avail) return std::nullopt;
    std::uint8_t op2 = p[i++];
    if (op2 == 0x38 || op2 == 0x3a) {
      if (i >= avail) return std::nullopt;
      in.map = op2 == 0x38 ? 2 : 3;
      in.op = p[i++];
      modrm = true;
      imm = op2 == 0x3a ? 1 : 0;
    } else {
      in.map = 1;
      in.op = op2;
      if ((op2 >= 0x80 && op2 <= 0x8f)) rel = 4;  // jcc rel32
      else if (op2 == 0x05 || op2 == 0x06 || op2 == 0x07 || op2 == 0x08 || op2 == 0x09 || op2 == 0x0b ||
               op2 == 0x0e || (op2 >= 0x30 && op2 <= 0x37) || op2 == 0x77 || op2 == 0xa0 || op2 == 0xa1 ||
               op2 == 0xa2 || op2 == 0xa8 || op2 == 0xa9 || op2 == 0xaa || (op2 >= 0xc8 && op2 <= 0xcf))
        modrm = false;
      else modrm = true;
      if ((op2 >= 0x70 && op2 <= 0x73) || op2 == 0xa4 || op2 == 0xac || op2 == 0xba || op2 == 0xc2 ||
          op2 == 0xc4 || op2 == 0xc5 || op2 == 0xc6 || op2 == 0x0f)
        imm = 1;
    }
  } else {
    in.map = 0;
    in.op = op;
    switch (op) {
      // invalid in 64-bit mode, or VEX/EVEX which this decoder does not handle
      case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e: case 0x1f: case 0x27: case 0x2f:
      case 0x37: case 0x3f: case 0x60: case 0x61: case 0x62: case 0x82: case 0x9a: case 0xc4: case 0xc5:
      case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
        return std::nullopt;
      default: break;
    }
    if (op < 0x40) {
      switch (op & 7) {
        case 0: case 1: case 2: case 3: modrm = true; break;
        case 4: imm = 1; break;
        case 5: imm = imm_z; break;
        default: break;
      }
    } else if (op >= 0x70 && op <= 0x7f) rel = 1;
    else if (op >= 0xb0 && op <= 0xb7) imm = 1;
    else if (op >= 0xb8 && op <= 0xbf) imm = in.rex_w() ? 8 : imm_z;
    else if (op >= 0xd8 && op <= 0xdf) modrm = true;  // x87
    else switch (op) {
      case 0x63: case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8a: case 0x8b:
      case 0x8c: case 0x8d: case 0x8e: case 0x8f: case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xfe:
      case 0xff:
        modrm = true; break;
      case 0x69: case 0x81: case 0xc7: modrm = true; imm = imm_z; break;
      case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6: modrm = true; imm = 1; break;
      case 0xf6: case 0xf7: modrm = true; break;  // immediate depends on ModRM.reg
      case 0x68: imm = imm_z; break;
      case 0x6a: case 0xa8: case 0xcd: case 0xe4: case 0xe5: case 0xe6: case 0xe7: imm = 1; break;
      case 0xa9: imm = imm_z; break;
      case 0xa0: case 0xa1: case 0xa2: case 0xa3: imm = addr32 ? 4 : 8; break;  // moffs
      case 0xc2: case 0xca: imm = 2; break;
      case 0xc8: imm = 3; break;
      case 0xe0: case 0xe1: case 0xe2: case 0xe3: case 0xeb: rel = 1; break;
      case 0xe8: case 0xe9: rel = 4; break;
      default: break;  // no operand bytes
    }
  }
  if (modrm) {
    if (i >= avail) return std::nullopt;
    std::uint8_t m = p[i++];
    in.has_modrm = true;
    in.mod = m >> 6;
    in.ext = (m >> 3) & 7;
    in.reg = static_cast<std::uint8_t>(in.ext | ((in.rex & 4) ? 8 : 0));
    in.rm = static_cast<std::uint8_t>((m & 7) | ((in.rex & 1) ? 8 : 0));
    std::size_t disp = 0;
    if (in.mod != 3) {
      if ((m & 7) == 4) {
        if (i >= avail) return std::nullopt;
        std::uint8_t sib = p[i++];
        if (in.mod == 0 && (sib & 7) == 5) disp = 4;
      }
      if (in.mod == 0 && (m & 7) == 5) {
        disp = 4;
        in.rip_relative = true;
      }
      if (in.mod == 1) disp = 1;
      if (in.mod == 2) disp = 4;
    }
    if (i + disp > avail) return std::nullopt;
    if (in.rip_relative) {
      std::int32_t d;
      std::memcpy(&d, p + i, 4);
      in.disp = d;
    }
    i += disp;
    if (in.map == 0 && (op == 0xf6 || op == 0xf7) && in.ext <= 1) imm = op == 0xf6 ? 1 : imm_z;
  }
  if (rel) {
    if (i + rel > avail) return std::nullopt;
    if (rel == 1) in.rel = static_cast<std::int8_t>(p[i]);
    else {
      std::int32_t d;
      std::memcpy(&d, p + i, 4);
      in.rel = d;
    }
    in.has_rel = true;
    i += rel;
  }
  if (i + imm > avail) return std::nullopt;
  in.imm_size = imm;
  if (imm == 4 || imm == 8) std::memcpy(&in.imm, p + i, imm);
  in.len = i + imm;
  return in;
}

// ---------------------------------------------------------------------------
// Which static pthread objects reach pthread_* calls.  The register state is
// a map register -> static address, set by RIP-relative lea, copied by
// 64-bit register moves, forgotten by anything that may write the register,
// merged (intersected) where forward branches join.

using Regs = std::array<Addr, 16>;  // 0: unknown.  rax rcx rdx rbx rsp rbp rsi rdi r8..r15
constexpr int kRdi = 7, kRsi = 6;

void kill_writes(const Insn& in, Regs& r) {
  auto kill = [&](int n) { r[static_cast<std::size_t>(n) & 15] = 0; };
  const int b = (in.rex & 1) ? 8 : 0;
  const std::uint8_t op = in.op;
  if (in.map == 0) {
    if (!in.has_modrm) {
      if (op >= 0x58 && op <= 0x5f) kill((op & 7) | b);                      // pop
      else if (op >= 0x91 && op <= 0x97) kill(0), kill((op & 7) | b);         // xchg
      else if (op == 0x90 && b) kill(0), kill(8);                              // xchg r8, rax
      else if (op == 0x98 || op == 0x99) kill(0), kill(2);
      else if (op >= 0xa4 && op <= 0xaf) kill(0), kill(1), kill(6), kill(7);  // string ops
      else if (op >= 0xb0 && op <= 0xbf) kill((op & 7) | b);                 // mov imm
      else if (op == 0xc9) kill(5);                                            // leave
      else if (op < 0x40 && (op & 7) >= 4 && (op & 0x38) != 0x38) kill(0);     // alu al/eax, imm
      else if (op == 0xa0 || op == 0xa1 || op == 0xd7 || op == 0xe4 || op == 0xe5 || op == 0xec || op == 0xed)
        kill(0);
      return;
    }
    const bool dst_rm = in.mod == 3;
    if (op < 0x40) {  // alu r/m, r and r, r/m; cmp writes nothing
      if ((op & 0x38) == 0x38) return;
      if (op & 2) kill(in.reg);
      else if (dst_rm) kill(in.rm);
      return;
    }
    switch (op) {
      case 0x84: case 0x85: return;  // test
      case 0x88: case 0x89: if (dst_rm) kill(in.rm); return;
      case 0x86: case 0x87: kill(in.reg); if (dst_rm) kill(in.rm); return;
      case 0x80: case 0x81: case 0x83: if (in.ext != 7 && dst_rm) kill(in.rm); return;
      case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xc6: case 0xc7: case 0x8f:
      case 0xfe:
        if (dst_rm) kill(in.rm);
        return;
      case 0xf6: case 0xf7:
        if (in.ext >= 4) kill(0), kill(2);
        else if (in.ext >= 2 && dst_rm) kill(in.rm);
        return;
      case 0xff:
        if (in.ext <= 1 && dst_rm) kill(in.rm);
        return;
      default:
        if (op >= 0xd8 && op <= 0xdf) {  // x87: fnstsw ax only
          if (op == 0xdf && in.mod == 3 && in.ext == 4) kill(0);
          return;
        }
        kill(in.reg);
        if (dst_rm) kill(in.rm);
        return;
    }
  }
  if (in.map == 1) {
    if (!in.has_modrm) {
      if (op == 0xa2) kill(0), kill(1), kill(2), kill(3);
      else if (op == 0x31) kill(0), kill(2);
      else if (op == 0x05) kill(0), kill(1), kill(11);
      else if (op >= 0xc8 && op <= 0xcf) kill((op & 7) | b);
      else if (op == 0xa1 || op == 0xa9) kill(0);  // pop fs/gs: harmless, be safe
      return;
    }
    if (op == 0x1f || op == 0x1e || op == 0x18 || op == 0x0d || op == 0xa3) return;  // nop, endbr, prefetch, bt
    const bool sse = (op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2b) || op == 0x2e || op == 0x2f ||
                     (op >= 0x51 && op <= 0x6f) || (op >= 0x70 && op <= 0x76) || op == 0x7f || op == 0xc2 ||
                     op == 0xc4 || op == 0xc6 || (op >= 0xd0 && op <= 0xd6) || op >= 0xd8;
    if (sse) return;  // xmm or memory destinations
    if (op == 0x7e) {
      if (in.mod == 3) kill(in.rm);
      return;
    }
    if (op == 0xb0 || op == 0xb1 || op == 0xc7) kill(0), kill(2);
    kill(in.reg);
    if (in.mod == 3) kill(in.rm);
    return;
  }
  kill(in.reg);  // 0f38, 0f3a: mostly xmm; be conservative
  if (in.mod == 3) kill(in.rm);
}

enum class SyncKind { Mutex, Cond };
enum class SyncRole { Unknown, Gil, Switch };

struct SyncObject {
  SyncKind kind;
  std::set<SyncRole> roles;
  std::size_t order = 0;   // first seen
  bool conflict = false;   // seen as both a mutex and a cond
  std::string seen_in;
};

class GilDecoder {
 public:
  explicit GilDecoder(const CodeImage& code) : code_(code) {}

  void run(const std::vector<CodeEntry>& entries) {
    for (const auto& e : entries) {
      if (e.link == 0) continue;
      Regs none{};
      scan(e.link, e.size, e.name, 0, none);
    }
  }

  GilStatics result() {
    GilStatics g;
    g.notes = notes_;
    // Drop what cannot be a pthread object of the GIL.
    std::vector<std::pair<Addr, SyncObject*>> ok;
    for (auto& [addr, o] : objects_) {
      if (o.conflict) {
        g.notes.push_back("GIL decode: " + hex(addr) + " used both as a mutex and as a condition variable");
        continue;
      }
      ok.emplace_back(addr, &o);
    }
    for (std::size_t i = 0; i + 1 < ok.size(); ++i) {
      Addr end = ok[i].first + size_of(ok[i].second->kind);
      if (end > ok[i + 1].first) {
        g.notes.push_back("GIL decode: overlapping objects at " + hex(ok[i].first) + " and " + hex(ok[i + 1].first));
        return g;
      }
    }
    // Roles: the condition variable waited on with a timeout is gil_cond
    // (take_gil), its mutex gil_mutex; the one waited on without is
    // switch_cond (drop_gil, FORCE_SWITCHING), with switch_mutex.  Without
    // that evidence, the first of each kind seen (create_gil initialises,
    // take_gil/drop_gil lock gil_mutex and gil_cond first) is the GIL's.
    auto pick = [&](SyncKind kind, SyncRole role, Addr& out) {
      std::vector<Addr> c;
      for (auto& [a, o] : ok)
        if (o->kind == kind && o->roles.count(role)) c.push_back(a);
      if (c.size() > 1) {
        g.notes.push_back("GIL decode: several candidates for one " + std::string(kind == SyncKind::Mutex ? "mutex" : "cond"));
        return;
      }
      if (c.size() == 1) out = c[0];
    };
    pick(SyncKind::Mutex, SyncRole::Gil, g.gil_mutex);
    pick(SyncKind::Cond, SyncRole::Gil, g.gil_cond);
    pick(SyncKind::Mutex, SyncRole::Switch, g.switch_mutex);
    pick(SyncKind::Cond, SyncRole::Switch, g.switch_cond);
    auto fill = [&](SyncKind kind, Addr& gil, Addr& sw) {
      std::vector<std::pair<std::size_t, Addr>> rest;
      for (auto& [a, o] : ok)
        if (o->kind == kind && a != gil && a != sw) rest.emplace_back(o->order, a);
      std::sort(rest.begin(), rest.end());
      std::size_t k = 0;
      if (!gil && k < rest.size()) gil = rest[k++].second;
      if (!sw && k < rest.size()) sw = rest[k++].second;
      if (k < rest.size())
        g.notes.push_back("GIL decode: " + std::to_string(rest.size() - k) + " more " +
                          (kind == SyncKind::Mutex ? "mutexes" : "condition variables") + " than expected; ignored");
    };
    fill(SyncKind::Mutex, g.gil_mutex, g.switch_mutex);
    fill(SyncKind::Cond, g.gil_cond, g.switch_cond);
    return g;
  }

 private:
  static constexpr std::size_t kMaxFunction = 4096;
  static constexpr std::size_t kMaxFunctions = 48;
  static constexpr int kMaxDepth = 2;

  static std::uint64_t size_of(SyncKind k) { return k == SyncKind::Mutex ? kPthreadMutexSize : kPthreadCondSize; }

  // The import a call/jmp target binds to: a PLT stub
  // `[endbr64;] [bnd] jmp *disp(%rip)`; empty when it is none.
  std::string import_of_stub(Addr target) const {
    std::uint8_t b[16] = {};
    std::size_t n = code_.read(target, b, sizeof b);
    std::size_t i = 0;
    if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) i = 4;
    if (i < n && b[i] == 0xf2) ++i;  // bnd
    if (i + 6 > n || b[i] != 0xff || b[i + 1] != 0x25) return {};
    std::int32_t d;
    std::memcpy(&d, b + i + 2, 4);
    return code_.import_at(target + i + 6 + static_cast<std::int64_t>(d));
  }

  void note_object(Addr a, SyncKind kind, SyncRole role, const std::string& where) {
    if (a == 0) return;
    if (a % 8 != 0 || !code_.writable(a, size_of(kind))) {
      if (rejected_.insert(a).second)
        notes_.push_back("GIL decode: " + hex(a) + " (in " + where + ") is not a writable static of the object");
      return;
    }
    auto [it, fresh] = objects_.try_emplace(a, SyncObject{kind, {}, objects_.size(), false, where});
    if (!fresh && it->second.kind != kind) it->second.conflict = true;
    if (role != SyncRole::Unknown) it->second.roles.insert(role);
  }

  void classify(const std::string& name, const Regs& r, const std::string& where) {
    std::string_view n = name;
    if (auto at = n.find('@'); at != std::string_view::npos) n = n.substr(0, at);
    if (n == "pthread_cond_timedwait" || n == "pthread_cond_clockwait") {
      note_object(r[kRdi], SyncKind::Cond, SyncRole::Gil, where);
      note_object(r[kRsi], SyncKind::Mutex, SyncRole::Gil, where);
    } else if (n == "pthread_cond_wait") {
      note_object(r[kRdi], SyncKind::Cond, SyncRole::Switch, where);
      note_object(r[kRsi], SyncKind::Mutex, SyncRole::Switch, where);
    } else if (n.starts_with("pthread_cond_") && n != "pthread_condattr_init") {
      note_object(r[kRdi], SyncKind::Cond, SyncRole::Unknown, where);
    } else if (n.starts_with("pthread_mutex_")) {
      note_object(r[kRdi], SyncKind::Mutex, SyncRole::Unknown, where);
    }
  }

  // A call or tail jump to target with registers r.
  void call(Addr target, const Regs& r, const std::string& where, int depth) {
    std::string import = import_of_stub(target);
    if (!import.empty()) return classify(import, r, where);
    if (depth + 1 > kMaxDepth || !code_.executable(target)) return;
    Regs args{};
    for (int a : {kRdi, kRsi, 2, 1, 8, 9}) args[static_cast<std::size_t>(a)] = r[static_cast<std::size_t>(a)];
    scan(target, 0, where + " -> " + hex(target), depth + 1, args);
  }

  static void clobber_call(Regs& r) {
    for (int n : {0, 1, 2, 6, 7, 8, 9, 10, 11}) r[static_cast<std::size_t>(n)] = 0;
  }

  static void meet(Regs& into, const Regs& other) {
    for (std::size_t i = 0; i < into.size(); ++i)
      if (into[i] != other[i]) into[i] = 0;
  }

  static bool is_padding(const Insn& in) {
    return (in.map == 0 && (in.op == 0x90 || in.op == 0xcc) && !(in.rex & 1)) || (in.map == 1 && in.op == 0x1f);
  }

  void scan(Addr start, std::uint64_t size, const std::string& where, int depth, const Regs& initial) {
    if (scanned_ >= kMaxFunctions) {
      if (!budget_noted_) notes_.push_back("GIL decode: function budget exhausted");
      budget_noted_ = true;
      return;
    }
    if (!visited_.insert({start, initial}).second) return;
    ++scanned_;
    const std::size_t limit = size ? std::min<std::uint64_t>(size, kMaxFunction) : kMaxFunction;
    std::vector<std::uint8_t> buf(limit + 15);
    std::size_t have = code_.read(start, buf.data(), buf.size());
    const std::size_t end = std::min(have, limit);  // decode instructions starting before end
    std::map<Addr, std::vector<Regs>> incoming;      // forward edges
    Addr furthest = start;                           // furthest forward branch target inside
    Regs r = initial;
    bool reachable = true, after_terminator = false;
    std::size_t off = 0;
    while (off < end) {
      Addr pc = start + off;
      auto in = decode_insn(buf.data() + off, have - off);
      if (!in) {
        notes_.push_back("GIL decode: cannot decode " + where + " at +" + std::to_string(off) +
                         (have - off < 15 && have < buf.size() ? " (code truncated)" : ""));
        return;
      }
      if (auto it = incoming.find(pc); it != incoming.end()) {
        if (!reachable) r = it->second.front();
        for (const auto& s : it->second) meet(r, s);
        reachable = true;
        incoming.erase(it);
      } else if (!reachable) {
        if (!size && pc >= furthest && (after_terminator || is_padding(*in))) return;  // end of the function
        r = Regs{};
        reachable = true;
      }
      after_terminator = false;
      Addr next = pc + in->len;
      Addr target = in->has_rel ? next + in->rel : 0;
      const bool inside = target > pc && target < start + limit;
      const std::uint8_t op = in->op;
      if (in->map == 0 && op == 0xe8) {  // call rel32
        call(target, r, where, depth);
        clobber_call(r);
      } else if (in->map == 0 && op == 0xff && in->ext == 2) {  // call *m
        if (in->rip_relative) {
          std::string import = code_.import_at(next + in->disp);
          if (!import.empty()) classify(import, r, where);
        }
        clobber_call(r);
      } else if (in->map == 0 && (op == 0xe9 || op == 0xeb)) {  // jmp
        if (inside) {
          incoming[target].push_back(r);
          furthest = std::max(furthest, target);
        } else if (target < start || target >= start + limit) {
          call(target, r, where, depth);  // a tail call
        }  // else a loop's back edge
        reachable = false, after_terminator = true;
      } else if (in->map == 0 && op == 0xff && in->ext == 4) {  // jmp *m: tail call through the GOT
        if (in->rip_relative) {
          std::string import = code_.import_at(next + in->disp);
          if (!import.empty()) classify(import, r, where);
        }
        reachable = false, after_terminator = true;
      } else if (in->has_rel) {  // jcc, loop, jrcxz
        if (inside) {
          incoming[target].push_back(r);
          furthest = std::max(furthest, target);
        }
      } else if ((in->map == 0 && (op == 0xc3 || op == 0xc2 || op == 0xcb || op == 0xca || op == 0xcf ||
                                   op == 0xf4)) ||
                 (in->map == 1 && op == 0x0b)) {  // ret, hlt, ud2
        reachable = false, after_terminator = true;
      } else if (in->map == 0 && op == 0xcc) {
        reachable = false;
      } else if (in->map == 0 && op == 0x8d && in->has_modrm && in->mod != 3) {  // lea
        r[in->reg] = (in->rip_relative && in->rex_w()) ? next + in->disp : 0;
      } else if (in->map == 0 && op >= 0xb8 && op <= 0xbf && !in->rex_w() && in->imm_size == 4) {
        // mov r32, imm32: how non-PIC code (a non-PIE executable linking
        // libpython statically) takes the address of a static
        r[(op & 7) | ((in->rex & 1) ? 8 : 0)] = in->imm;
      } else if (in->map == 0 && op == 0xc7 && in->rex_w() && in->mod == 3 && in->ext == 0) {  // mov r64, simm32
        r[in->rm] = static_cast<Addr>(static_cast<std::int64_t>(static_cast<std::int32_t>(in->imm)));
      } else if (in->map == 0 && (op == 0x89 || op == 0x8b) && in->mod == 3) {  // mov reg, reg
        std::uint8_t dst = op == 0x89 ? in->rm : in->reg, src = op == 0x89 ? in->reg : in->rm;
        r[dst] = in->rex_w() ? r[src] : 0;
      } else {
        kill_writes(*in, r);
      }
      off += in->len;
    }
    if (have < limit && size) notes_.push_back("GIL decode: " + where + " truncated");
  }

  const CodeImage& code_;
  std::map<Addr, SyncObject> objects_;
  std::set<Addr> rejected_;
  std::set<std::pair<Addr, Regs>> visited_;
  std::size_t scanned_ = 0;
  bool budget_noted_ = false;
  std::vector<std::string> notes_;
};
}  // namespace

namespace detail {

GilStatics decode_gil_statics(const CodeImage& code, const std::vector<CodeEntry>& entries) {
  GilDecoder d(code);
  d.run(entries);
  return d.result();
}

std::vector<GilInfo> read_gils(ObjectReader& objects, const Roots& roots, const std::vector<InterpInfo>& interps,
                               std::vector<std::string>& warnings) {
  MemoryReader& mem = objects.memory();
  const Layout& l = objects.layout();
  std::vector<GilInfo> gils;
  switch (l.gil_model) {
    case GilModel::RuntimeEmbedded:
      if (roots.runtime) gils.push_back(read_gil_state(mem, l, roots.runtime + l.runtime_ceval_gil, -1, warnings));
      break;
    case GilModel::InterpreterPointer: {
      // Each interpreter points at the GIL it uses: its own _gil, or the
      // main interpreter's when it shares it.  List each GIL once, under
      // the interpreter that embeds it.
      std::unordered_set<Addr> done;
      for (const auto& i : interps) {
        if (i.gil_pointer == 0 || !done.insert(i.gil_pointer).second) continue;
        std::int64_t owner = i.id;
        for (const auto& j : interps)
          if (j.address + l.interp_own_gil == i.gil_pointer) owner = j.id;
        gils.push_back(read_gil_state(mem, l, i.gil_pointer, owner, warnings));
      }
      break;
    }
    case GilModel::Static: {
      // 3.6 keeps the GIL in static variables of ceval.c that no exported
      // symbol names.  gil_locked is found when locate() could decode it;
      // the holder comes from _PyThreadState_Current (inspect_memory).
      GilInfo g;
      g.source = "tstate-current";
      if (roots.gil_locked_var) {
        g.address = roots.gil_locked_var;
        g.size = 4;
        g.ranges.push_back({g.address, g.size});
        if (auto v = mem.read_value<std::int32_t>(roots.gil_locked_var)) {
          if (*v == 0 || *v == 1) {
            g.locked = *v == 1;
            g.source = "gil-state";
          } else if (*v == -1) {
            g.locked = false;
            g.source = "gil-state (not created yet)";
          }
        }
      }
      // The pthread objects threads sleep on while they wait for the GIL
      // (take_gil: gil_mutex, gil_cond) or for the next holder to take it
      // (drop_gil: switch_mutex, switch_cond).
      // ceval_gil.h declares them together and they sit side by side in
      // .bss (gil_locked, initialised to -1, is in .data): when they form
      // one compact block, [address, address+size) is that block, so that
      // a consumer checking only address/size sees the waiters; otherwise
      // it stays gil_locked and only `ranges` has the objects.
      Addr lo = 0, hi = 0;
      for (auto [var, size] : {std::pair{roots.gil_mutex_var, kPthreadMutexSize}, {roots.gil_cond_var, kPthreadCondSize},
                               {roots.switch_mutex_var, kPthreadMutexSize}, {roots.switch_cond_var, kPthreadCondSize}}) {
        if (!var) continue;
        g.ranges.push_back({var, size});
        lo = lo ? std::min(lo, var) : var;
        hi = std::max(hi, var + size);
      }
      constexpr std::uint64_t kCompactBlock = 512;
      if (lo && hi - lo <= kCompactBlock) {
        g.address = lo;
        g.size = hi - lo;
      } else if (g.address == 0 && !g.ranges.empty()) {
        g.address = g.ranges.front().start;
        g.size = g.ranges.front().size;
      }
      gils.push_back(g);
      break;
    }
  }
  return gils;
}

}  // namespace detail

const GilInfo* gil_for_wait_address(const PythonState& state, Addr futex_addr) {
  for (const auto& g : state.gils) {
    if (AddrRange{g.address, g.size}.contains(futex_addr)) return &g;
    for (const auto& r : g.ranges)
      if (r.contains(futex_addr)) return &g;
  }
  return nullptr;
}

const PyThreadInfo* gil_holder(const PythonState& state) {
  for (const auto& t : state.threads)
    if (t.holds_gil) return &t;
  return nullptr;
}

}  // namespace pyhang::cpython
