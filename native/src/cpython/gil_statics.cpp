// 3.6's GIL is a set of static variables of ceval.c that no exported
// symbol names: which static pthread objects reach pthread_* calls is
// decoded from the machine code of the functions that take and drop the
// GIL, with the x86-64 decoder (pyhang/arch/x86_64/decoder.hpp).
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "cpython/internal.hpp"
#include "pyhang/arch/x86_64/decoder.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython {

namespace {

using detail::CodeEntry;
using detail::CodeImage;
using detail::GilStatics;
using detail::kPthreadCondSize;
using detail::kPthreadMutexSize;
using x86_64::Insn;

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
        g.notes.push_back(unread(ReadPart::GilObject, addr, ReadWhy::MutexAndCond));
        continue;
      }
      ok.emplace_back(addr, &o);
    }
    for (std::size_t i = 0; i + 1 < ok.size(); ++i) {
      Addr end = ok[i].first + size_of(ok[i].second->kind);
      if (end > ok[i + 1].first) {
        ReadProblem overlap = unread(ReadPart::GilObject, ok[i].first, ReadWhy::Overlaps);
        overlap.at = ok[i + 1].first;
        g.notes.push_back(std::move(overlap));
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
        g.notes.push_back(unread(part_of(kind), 0, ReadWhy::Ambiguous));
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
        g.notes.push_back(
            unread_named(part_of(kind), 0, ReadWhy::MoreThanExpected, {}, static_cast<std::int64_t>(rest.size() - k)));
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
  static ReadPart part_of(SyncKind k) { return k == SyncKind::Mutex ? ReadPart::Mutex : ReadPart::CondVar; }

  // The import a call/jmp target binds to: a PLT stub
  // `[endbr64;] [bnd] jmp *disp(%rip)`; empty when it is none.
  std::string import_of_stub(Addr target) const {
    std::uint8_t b[16] = {};
    std::size_t n = code_.read(target, b, sizeof b);
    std::size_t i = 0;
    if (x86_64::is_endbr64(b, n)) i = x86_64::kEndbr64Length;
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
        notes_.push_back(unread(ReadPart::GilObject, a, ReadWhy::NotWritable).within(ReadPart::Function, 0, where));
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
      if (!budget_noted_) {
        ReadProblem budget = unread(ReadPart::Function, 0, ReadWhy::StoppedAfter);
        budget.limit = static_cast<std::int64_t>(kMaxFunctions);
        notes_.push_back(std::move(budget));
      }
      budget_noted_ = true;
      return;
    }
    if (!visited_.insert({start, initial}).second) return;
    ++scanned_;
    const std::size_t limit = size ? std::min<std::uint64_t>(size, kMaxFunction) : kMaxFunction;
    std::vector<std::uint8_t> buf(limit + x86_64::kMaxInsnLength);
    std::size_t have = code_.read(start, buf.data(), buf.size());
    const std::size_t end = std::min(have, limit);  // decode instructions starting before end
    std::map<Addr, std::vector<Regs>> incoming;      // forward edges
    Addr furthest = start;                           // furthest forward branch target inside
    Regs r = initial;
    bool reachable = true, after_terminator = false;
    std::size_t off = 0;
    while (off < end) {
      Addr pc = start + off;
      auto in = x86_64::decode(buf.data() + off, have - off);
      if (!in) {
        ReadProblem undecodable = unread_named(ReadPart::Function, start, ReadWhy::Undecodable, {},
                                               static_cast<std::int64_t>(off));
        undecodable.path.back().name = where;
        undecodable.limit = have - off < x86_64::kMaxInsnLength && have < buf.size() ? 1 : 0;
        notes_.push_back(std::move(undecodable));
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
    if (have < limit && size)
      notes_.push_back(ReadProblem{{{ReadPart::Function, start, where, 0}}, ReadWhy::PartlyUnreadable});
  }

  const CodeImage& code_;
  std::map<Addr, SyncObject> objects_;
  std::set<Addr> rejected_;
  std::set<std::pair<Addr, Regs>> visited_;
  std::size_t scanned_ = 0;
  bool budget_noted_ = false;
  std::vector<ReadProblem> notes_;
};
}  // namespace

namespace detail {

GilStatics decode_gil_statics(const CodeImage& code, const std::vector<CodeEntry>& entries) {
  GilDecoder d(code);
  d.run(entries);
  return d.result();
}

}  // namespace detail

}  // namespace pyhang::cpython
