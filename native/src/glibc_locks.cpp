// Decoders for glibc's locks and identification of what a blocked thread
// waits for.  Every object is read once, whole, into a local buffer; fields
// are read from that copy through the layout's offsets.
//
// Identification (identify_blocked) scores candidates instead of trusting a
// frame name.  For a thread sleeping in futex(2) on word A, every futex word
// (offset o, role) of every layout of the target's glibc proposes a lock at
// A - o.  Each proposal is decoded and scored:
//   +3  the bytes decode as a plausible object of that kind (else -10)
//   +2..+3 per field that a thread sleeping on this word implies
//       (mutex locked and contended, semaphore value 0 with waiters,
//       condvar waiter count > 0, rwlock FUTEX_USED bit on that word, ...)
//   -3..-5 per field that contradicts it (waiter on an unlocked mutex, ...)
//   +6 / -6 FUTEX_LOCK_PI: only PI mutexes use it
//   +1 / -1 the value the thread expected (rdx) still equals the word
//   +5 a libc frame names a function of that lock family; -2 when the
//       innermost such name points to another family
// A bare "futex" candidate scores 3, so a lock must do better than that.
// Confidence: "certain" >= 10 with a confirming frame name or PI op and a
// margin of 4 over the next kind; "likely" >= 6 with a margin of 3; else
// "guess".
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "pyhang/glibc_locks.hpp"

namespace pyhang::glibc {
namespace {

constexpr std::uint64_t kSysFutex = 202;
constexpr std::uint32_t kFutexCmdMask = 0x7f;  // without PRIVATE (128) and CLOCK_REALTIME (256)
constexpr std::uint32_t kFutexWait = 0, kFutexLockPi = 6, kFutexWaitBitset = 9, kFutexWaitRequeuePi = 11,
                        kFutexLockPi2 = 13;
constexpr std::int64_t kMaxTid = 4194304;  // PID_MAX_LIMIT on 64-bit Linux
constexpr std::uint32_t kSaneCount = 1u << 20;
constexpr std::uint32_t kSemValueMax = 0x7fffffffu;

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A local copy of one object.
class Bytes {
 public:
  Bytes(MemoryReader& mem, Addr addr, std::size_t size) : buf_(size) {
    ok_ = size <= sizeof(std::uint64_t) * 16 && mem.read(addr, buf_.data(), size);
  }
  bool ok() const { return ok_; }
  std::uint32_t u32(std::uint32_t off) const { return get<std::uint32_t>(off); }
  std::int32_t i32(std::uint32_t off) const { return get<std::int32_t>(off); }
  std::uint64_t u64(std::uint32_t off) const { return get<std::uint64_t>(off); }

 private:
  template <class T>
  T get(std::uint32_t off) const {
    T v{};
    if (off != kNoField && off + sizeof(T) <= buf_.size()) std::memcpy(&v, buf_.data() + off, sizeof(T));
    return v;
  }
  std::vector<std::uint8_t> buf_;
  bool ok_ = false;
};

void add_problem(LockInfo& info, const std::string& p, bool fatal) {
  if (!info.problem.empty()) info.problem += "; ";
  info.problem += p;
  if (fatal) info.plausible = false;
}

bool unreadable(LockInfo& info, const char* what, Addr addr) {
  info.readable = false;
  info.plausible = false;
  info.problem = std::string("cannot read ") + what + " at " + hex(addr);
  return true;
}

bool tid_ok(std::int64_t tid) { return tid > 0 && tid <= kMaxTid; }

bool user_pointer_or_null(std::uint64_t p) { return p == 0 || (p >= 0x1000 && p < 0x800000000000ull); }

}  // namespace

// ---- mutex -----------------------------------------------------------------

LockInfo decode_mutex(MemoryReader& mem, Addr addr, const MutexLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = "mutex";
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info, "pthread_mutex_t", addr)) return info;
  info.readable = true;
  info.plausible = true;

  const std::uint32_t lock = b.u32(l.lock), count = b.u32(l.count), nusers = b.u32(l.nusers);
  const std::int32_t owner = b.i32(l.owner), kind = b.i32(l.kind);
  info.fields = {{"__lock", static_cast<std::int32_t>(lock)}, {"__count", count}, {"__owner", owner},
                 {"__nusers", nusers}, {"__kind", kind}};

  if (kind == -1) {
    add_problem(info, "__kind is -1: destroyed by pthread_mutex_destroy, or not a mutex", true);
    return info;
  }
  const std::uint32_t k = static_cast<std::uint32_t>(kind);
  const bool robust = k & l.robust_bit, pi = k & l.pi_bit, pp = k & l.pp_bit;
  const std::uint32_t ceiling_mask = ~((1u << l.ceiling_shift) - 1);
  std::uint32_t known = l.kind_mask | l.robust_bit | l.pi_bit | l.pp_bit | l.pshared_bit | l.elision_bits;
  if (pp) known |= ceiling_mask;
  if (k & ~known) add_problem(info, "__kind " + hex(k) + " has bits no glibc mutex kind uses", true);
  if (pi && pp) add_problem(info, "__kind has both priority-inherit and priority-protect", true);
  if (robust && pp) add_problem(info, "__kind has both robust and priority-protect", true);

  static constexpr const char* kTypes[] = {"normal", "recursive", "errorcheck", "adaptive"};
  const std::uint32_t type = k & l.kind_mask;
  info.kind = std::string("mutex-") + kTypes[type & 3];
  if (robust) info.flags.push_back("robust");
  if (pi) info.flags.push_back("pi");
  if (pp) info.flags.push_back("pp");
  if (k & l.pshared_bit) info.flags.push_back("pshared");

  const bool owner_special = robust && (owner == l.owner_inconsistent || owner == l.owner_notrecoverable);
  if (owner < 0 || (owner > kMaxTid && !owner_special))
    add_problem(info, "__owner " + std::to_string(owner) + " is not a TID", true);
  if (nusers > kSaneCount) add_problem(info, "__nusers " + std::to_string(nusers) + " is not a user count", true);

  if (pi || robust) {
    // The lock word is the owner's TID with FUTEX_WAITERS / FUTEX_OWNER_DIED.
    const std::uint32_t tid = lock & l.futex_tid_mask;
    info.locked = tid != 0;
    if (lock & l.futex_waiters) info.flags.push_back("waiters");
    if (lock & l.futex_owner_died) info.flags.push_back("owner-died");
    if (tid != 0 && !tid_ok(tid)) add_problem(info, "lock word TID " + std::to_string(tid) + " is not a TID", true);
    if (tid != 0 && tid_ok(tid)) {
      info.owners.push_back(static_cast<int>(tid));
      info.owner_source = "__lock";
      if (owner != 0 && owner != static_cast<std::int32_t>(tid) && !owner_special)
        add_problem(info, "__owner " + std::to_string(owner) + " differs from the lock word's TID " +
                              std::to_string(tid) + " (caught mid-update?)", false);
    }
    // tid 0 with FUTEX_OWNER_DIED (| FUTEX_WAITERS): the kernel released
    // the lock of a dead owner; the next locker gets EOWNERDEAD.
  } else {
    std::uint32_t state = pp ? (lock & ~ceiling_mask) : lock;
    if (state > 2) add_problem(info, "__lock " + hex(lock) + " is not 0, 1 or 2", true);
    info.locked = state != 0;
    if (state == 2) info.flags.push_back("waiters");
    if (pp) info.fields.push_back({"ceiling", lock >> l.ceiling_shift});
    if (state != 0 && tid_ok(owner)) {
      info.owners.push_back(owner);
      info.owner_source = "__owner";
    } else if (state != 0 && owner == 0) {
      info.note = "locked, but no owner recorded (lock elision, or caught between locking and recording)";
    }
    // Only recursive (and robust/PI/PP, handled above) mutexes use __count.
    if (type != 1 && count != 0 && !pp)
      add_problem(info, "__count " + std::to_string(count) + " on a non-recursive mutex", true);
  }
  if (owner_special) {
    info.flags.push_back(owner == l.owner_inconsistent ? "inconsistent" : "not-recoverable");
  }
  if (type == 1) {
    info.recursion = count;
    if (*info.locked && count == 0) add_problem(info, "recursive mutex locked with __count 0", false);
    if (count > (1u << 30)) add_problem(info, "__count " + std::to_string(count) + " is not a recursion count", true);
  }
  if (!*info.locked && owner != 0 && !owner_special)
    add_problem(info, "unlocked but __owner is " + std::to_string(owner), false);
  if (robust && l.list != kNoField) {
    if (!user_pointer_or_null(b.u64(l.list)) || !user_pointer_or_null(b.u64(l.list + 8)))
      add_problem(info, "robust list links are not pointers", true);
  }
  return info;
}

// ---- rwlock ----------------------------------------------------------------

LockInfo decode_rwlock(MemoryReader& mem, Addr addr, const RwlockLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = "rwlock";
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info, "pthread_rwlock_t", addr)) return info;
  info.readable = true;
  info.plausible = true;
  info.note = "glibc counts read-holders but does not record which threads they are";

  const std::int32_t writer = b.i32(l.writer);
  const std::uint32_t shared = b.u32(l.shared), flags = b.u32(l.flags);
  if (flags > l.max_flags) add_problem(info, "__flags " + std::to_string(flags) + " is not a rwlock kind", true);
  if (shared != 0 && shared != 1 && shared != 128)
    add_problem(info, "__shared " + std::to_string(shared) + " is not 0, 1 or 128", true);
  if (writer < 0 || writer > kMaxTid) add_problem(info, "writer " + std::to_string(writer) + " is not a TID", true);
  for (std::uint32_t off : l.zero_padding)
    if (b.u32(off) != 0) {
      add_problem(info, "padding at +" + std::to_string(off) + " is not zero", true);
      break;
    }
  if (flags == 1) info.flags.push_back("prefer-writer");
  if (flags == 2) info.flags.push_back("prefer-writer-nonrecursive");
  if (shared) info.flags.push_back("pshared");

  if (l.scheme == RwlockScheme::Modern) {
    const std::uint32_t r = b.u32(l.readers), w = b.u32(l.writers), wp = b.u32(l.wrphase_futex),
                        wf = b.u32(l.writers_futex);
    info.fields = {{"__readers", r}, {"__writers", w}, {"__wrphase_futex", wp}, {"__writers_futex", wf},
                   {"__cur_writer", writer}, {"__shared", shared}, {"__flags", flags}};
    const bool wrphase = r & l.wrphase_bit, wrlocked = r & l.wrlocked_bit;
    const std::uint32_t registered = r >> l.reader_shift;
    if (registered > kSaneCount) add_problem(info, "__readers counts " + std::to_string(registered) + " readers", true);
    if ((w & ~l.writers_handover) > kSaneCount) add_problem(info, "__writers " + hex(w) + " is not a count", true);
    if (wp > 3 || wf > 3) add_problem(info, "futex words " + hex(wp) + "/" + hex(wf) + " are not 0..3", true);
    info.write_locked = wrphase && wrlocked;
    // In a write phase registered readers are waiting; in a read phase they hold it.
    info.readers = wrphase ? 0 : registered;
    if (wrphase && registered) info.flags.push_back("read-waiters");
    if (r & l.rwaiting_bit) info.flags.push_back("read-waiters");
    if ((!wrphase && wrlocked) || (wf & l.futex_used)) info.flags.push_back("write-waiters");
    info.locked = *info.write_locked || *info.readers > 0;
    if (*info.write_locked) {
      if (tid_ok(writer)) {
        info.owners.push_back(writer);
        info.owner_source = "__cur_writer";
      } else {
        info.note = "write-locked but __cur_writer is not set (caught between locking and recording)";
      }
    } else if (writer != 0) {
      add_problem(info, "__cur_writer " + std::to_string(writer) + " set on a lock in a read phase", false);
    }
  } else {
    const std::uint32_t lk = b.u32(l.lock), nr = b.u32(l.nr_readers), rq = b.u32(l.nr_readers_queued),
                        wq = b.u32(l.nr_writers_queued);
    info.fields = {{"__lock", lk},           {"__nr_readers", nr},        {"__readers_wakeup", b.u32(l.readers_wakeup)},
                   {"__writer_wakeup", b.u32(l.writer_wakeup)}, {"__nr_readers_queued", rq},
                   {"__nr_writers_queued", wq}, {"__writer", writer},   {"__shared", shared}, {"__flags", flags}};
    if (lk > 2) add_problem(info, "__lock " + hex(lk) + " is not 0, 1 or 2", true);
    if (nr > kSaneCount || rq > kSaneCount || wq > kSaneCount)
      add_problem(info, "reader/writer counts are not counts", true);
    info.write_locked = writer != 0;
    info.readers = nr;
    info.read_waiters = rq;
    info.write_waiters = wq;
    info.waiters = rq + wq;
    if (writer != 0 && nr != 0)
      add_problem(info, "write-held by " + std::to_string(writer) + " and read-held by " + std::to_string(nr), true);
    info.locked = writer != 0 || nr != 0;
    if (tid_ok(writer)) {
      info.owners.push_back(writer);
      info.owner_source = "__writer";
    }
  }
  return info;
}

// ---- semaphore ---------------------------------------------------------------

LockInfo decode_semaphore(MemoryReader& mem, Addr addr, const SemLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = "semaphore";
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info, "sem_t", addr)) return info;
  info.readable = true;
  info.plausible = true;
  info.note = "a semaphore has no owner: any thread may post it";
  const std::uint32_t word = b.u32(l.value);
  const std::uint32_t value = l.value_shift ? word >> l.value_shift : word;
  const std::uint64_t nwaiters = l.nwaiters_size == 8 ? b.u64(l.nwaiters) : b.u32(l.nwaiters);
  const std::int32_t priv = b.i32(l.private_flag);
  info.fields = {{"value", value}, {"nwaiters", static_cast<std::int64_t>(nwaiters)}, {"private", priv}};
  if (value > kSemValueMax) add_problem(info, "value " + hex(value) + " exceeds SEM_VALUE_MAX", true);
  if (nwaiters > kSaneCount) add_problem(info, "nwaiters " + std::to_string(nwaiters) + " is not a count", true);
  if (priv != 0 && priv != 1 && priv != 128) add_problem(info, "private " + std::to_string(priv) + " is not 0/1/128", true);
  info.value = value;
  info.waiters = static_cast<std::uint32_t>(std::min<std::uint64_t>(nwaiters, kSaneCount));
  info.locked = value == 0;
  if (priv == 128 || priv == 1) info.flags.push_back("pshared");
  return info;
}

// ---- condvar -----------------------------------------------------------------

LockInfo decode_condvar(MemoryReader& mem, Addr addr, const CondLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = "condvar";
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info, "pthread_cond_t", addr)) return info;
  info.readable = true;
  info.plausible = true;
  if (l.scheme == CondScheme::Modern) {
    const std::uint64_t wseq = b.u64(l.wseq), g1 = b.u64(l.g1_start);
    const std::uint32_t wrefs = b.u32(l.wrefs);
    info.fields = {{"__wseq", static_cast<std::int64_t>(wseq)},  {"__g1_start", static_cast<std::int64_t>(g1)},
                   {"__g_refs[0]", b.u32(l.g_refs)},              {"__g_refs[1]", b.u32(l.g_refs + 4)},
                   {"__g_size[0]", b.u32(l.g_size)},              {"__g_size[1]", b.u32(l.g_size + 4)},
                   {"__g1_orig_size", b.u32(l.g1_orig_size)},     {"__wrefs", wrefs},
                   {"__g_signals[0]", b.u32(l.g_signals)},        {"__g_signals[1]", b.u32(l.g_signals + 4)}};
    const std::uint32_t waiters = wrefs >> l.wrefs_waiter_shift;
    if (waiters > kSaneCount) add_problem(info, "__wrefs counts " + std::to_string(waiters) + " waiters", true);
    if ((g1 >> 1) > (wseq >> 1)) add_problem(info, "__g1_start is past __wseq", true);
    if (wseq >> 62) add_problem(info, "__wseq " + hex(wseq) + " is not a sequence", true);
    for (std::uint32_t off : {l.g_size, l.g_size + 4, l.g_refs, l.g_refs + 4})
      if (b.u32(off) > 2 * kSaneCount) {
        add_problem(info, "group counts are not counts", true);
        break;
      }
    info.waiters = waiters;
    if (wrefs & 1) info.flags.push_back("clock-monotonic");
    if (wrefs & 2) info.flags.push_back("pshared");
    if (wrefs & 4) info.flags.push_back("destroy-pending");
    info.note = "glibc >= 2.25 does not store the mutex in the condvar: it is pthread_cond_wait's second "
                "argument, known only from the waiter's frame";
  } else {
    const std::uint32_t lk = b.u32(l.lock), nw = b.u32(l.nwaiters);
    const std::uint64_t total = b.u64(l.total_seq), wakeup = b.u64(l.wakeup_seq), woken = b.u64(l.woken_seq);
    const std::uint64_t mutex = b.u64(l.mutex);
    info.fields = {{"__lock", lk},
                   {"__futex", b.u32(l.futex)},
                   {"__total_seq", static_cast<std::int64_t>(total)},
                   {"__wakeup_seq", static_cast<std::int64_t>(wakeup)},
                   {"__woken_seq", static_cast<std::int64_t>(woken)},
                   {"__mutex", static_cast<std::int64_t>(mutex)},
                   {"__nwaiters", nw},
                   {"__broadcast_seq", b.u32(l.broadcast_seq)}};
    if (lk > 2) add_problem(info, "__lock " + hex(lk) + " is not 0, 1 or 2", true);
    if (wakeup > total || woken > wakeup) add_problem(info, "sequence counters out of order", true);
    if ((nw >> l.nwaiters_shift) > kSaneCount) add_problem(info, "__nwaiters is not a count", true);
    if (mutex != ~0ull && !user_pointer_or_null(mutex)) add_problem(info, "__mutex is not a pointer", true);
    info.waiters = nw >> l.nwaiters_shift;
    if (mutex == ~0ull) {
      info.flags.push_back("pshared");
      info.note = "process-shared condvar: glibc < 2.25 does not store its mutex";
    } else if (mutex != 0) {
      info.mutex = mutex;
    }
  }
  return info;
}

// ---- frame names -------------------------------------------------------------

std::string_view frame_hint(std::string_view f) {
  if (auto at = f.find('@'); at != std::string_view::npos) f = f.substr(0, at);
  while (f.substr(0, 5) == "__GI_") f.remove_prefix(5);
  while (!f.empty() && f.front() == '_') f.remove_prefix(1);
  if (f.empty() || f == "??") return {};
  static constexpr std::pair<std::string_view, std::string_view> kHints[] = {
      {"lll_lock_wait_private", "glibc-internal-lock"},
      {"pthread_mutex_", "mutex"},
      {"lll_lock_wait", "mutex"},
      {"lll_clocklock_wait", "mutex"},
      {"lll_timedlock_wait", "mutex"},
      {"lll_robust", "mutex"},
      {"pthread_rwlock_rdlock", "rwlock-read"},
      {"pthread_rwlock_timedrdlock", "rwlock-read"},
      {"pthread_rwlock_clockrdlock", "rwlock-read"},
      {"pthread_rwlock_wrlock", "rwlock-write"},
      {"pthread_rwlock_timedwrlock", "rwlock-write"},
      {"pthread_rwlock_clockwrlock", "rwlock-write"},
      {"pthread_rwlock_", "rwlock"},
      {"new_sem_wait", "semaphore"},
      {"old_sem_wait", "semaphore"},
      {"sem_wait", "semaphore"},
      {"sem_timedwait", "semaphore"},
      {"sem_clockwait", "semaphore"},
      {"do_futex_wait", "semaphore"},
      {"pthread_cond_", "condvar"},
      {"condvar_", "condvar"},
      {"pthread_join", "thread-join"},
      {"pthread_clockjoin", "thread-join"},
      {"pthread_timedjoin", "thread-join"},
      {"futex_", "futex"},
      {"lll_futex", "futex"},
      {"syscall", "futex"},
  };
  for (const auto& [prefix, hint] : kHints)
    if (f.substr(0, prefix.size()) == prefix) return hint;
  return {};
}

namespace {

bool libc_like(std::string_view path) {
  if (path.empty()) return true;  // unknown library: accept the name
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.substr(0, 7) == "libc.so" || base.substr(0, 5) == "libc-" || base.substr(0, 10) == "libpthread";
}

// Kind family of a candidate, for matching frame hints.
bool hint_matches(std::string_view hint, std::string_view kind) {
  if (hint == kind) return true;
  if (hint == "rwlock") return kind.substr(0, 6) == "rwlock";
  return false;
}

// Adds points, with their reason, to the candidate it refers to.
struct Scorer {
  Candidate& c;
  void add(int points, const std::string& why) {
    c.score += points;
    if (!c.reasons.empty()) c.reasons += "; ";
    c.reasons += (points >= 0 ? "+" : "") + std::to_string(points) + " " + why;
  }
};

struct FutexCall {
  Addr addr;
  std::uint32_t op, value;
  bool from_syscall = true;
  std::uint32_t cmd() const { return op & kFutexCmdMask; }
  bool pi() const { return cmd() == kFutexLockPi || cmd() == kFutexLockPi2; }
  bool wait() const { return cmd() == kFutexWait || cmd() == kFutexWaitBitset || cmd() == kFutexWaitRequeuePi; }
};

void score_common(Scorer& s, const LockInfo& info) {
  if (info.plausible) s.add(3, "plausible " + info.layout);
  else s.add(-10, "implausible: " + info.problem);
}

void expected_value(Scorer& s, const FutexCall& f, std::uint32_t now) {
  if (f.pi() || !f.from_syscall) return;
  if (f.value == now) s.add(1, "word still holds the value the thread waits on");
  else s.add(-1, "word changed since the thread went to sleep");
}

Candidate mutex_candidate(MemoryReader& mem, const Layouts& L, const FutexCall& f, Addr base) {
  Candidate cand;
  Scorer s{cand};
  s.c.kind = "mutex";
  s.c.address = base;
  s.c.lock = decode_mutex(mem, base, *L.mutex);
  const LockInfo& m = s.c.lock;
  if (!m.readable) return cand;
  score_common(s, m);
  const bool pi = std::find(m.flags.begin(), m.flags.end(), "pi") != m.flags.end();
  const bool waiters = std::find(m.flags.begin(), m.flags.end(), "waiters") != m.flags.end();
  if (m.locked.value_or(false)) s.add(3, "locked");
  else s.add(-4, "unlocked, yet a thread waits on it");
  if (waiters) s.add(2, "lock word says it has waiters");
  if (!m.owners.empty()) s.add(2, "owner recorded");
  else if (m.locked.value_or(false)) s.add(-2, "locked but no owner recorded");
  if (f.pi()) {
    if (pi) s.add(6, "FUTEX_LOCK_PI on a priority-inherit mutex");
    else s.add(-6, "FUTEX_LOCK_PI on a mutex that is not priority-inherit");
  } else if (pi && f.wait()) {
    s.add(-6, "plain futex wait on a priority-inherit mutex");
  }
  expected_value(s, f, static_cast<std::uint32_t>(m.fields.empty() ? 0 : m.fields[0].second));
  return cand;
}

Candidate rwlock_candidate(MemoryReader& mem, const Layouts& L, const FutexCall& f, const FutexWord& fw) {
  const RwlockLayout& l = *L.rwlock;
  Candidate cand;
  Scorer s{cand};
  s.c.address = f.addr - fw.offset;
  s.c.lock = decode_rwlock(mem, s.c.address, l);
  const LockInfo& r = s.c.lock;
  s.c.kind = "rwlock";
  if (!r.readable) return cand;
  score_common(s, r);
  auto field = [&](const char* name) -> std::int64_t {
    for (const auto& [n, v] : r.fields)
      if (n == name) return v;
    return 0;
  };
  const std::uint32_t word = static_cast<std::uint32_t>(field(
      fw.offset == l.readers ? "__readers" : fw.offset == l.wrphase_futex ? "__wrphase_futex" : "__writers_futex"));
  if (f.pi()) s.add(-6, "FUTEX_LOCK_PI on a rwlock");
  if (l.scheme == RwlockScheme::Modern) {
    const std::uint32_t readers = static_cast<std::uint32_t>(field("__readers"));
    const bool wrphase = readers & l.wrphase_bit, wrlocked = readers & l.wrlocked_bit;
    switch (fw.role) {
      case WaitRole::RwlockWrite:
        s.c.kind = "rwlock-write";
        if (word & l.futex_used) s.add(3, "__writers_futex has waiters");
        else s.add(-4, "__writers_futex has no waiters");
        if (r.write_locked.value_or(false) || wrlocked) s.add(2, "a writer holds it or is next");
        else s.add(-3, "no writer holds it");
        break;
      case WaitRole::RwlockPhase:
        s.c.kind = wrphase ? "rwlock-read" : "rwlock-write";
        if (word & l.futex_used) s.add(3, "__wrphase_futex has waiters");
        else s.add(-4, "__wrphase_futex has no waiters");
        if (wrphase) s.add(2, "write phase: readers wait for it to end");
        else if (wrlocked) s.add(2, "read phase with a writer waiting for readers to leave");
        else s.add(-3, "read phase without a waiting writer");
        break;
      case WaitRole::RwlockRead:
        s.c.kind = "rwlock-read";
        if (readers & l.rwaiting_bit) s.add(3, "__readers has RWAITING");
        else s.add(-5, "__readers without RWAITING");
        break;
      default: break;
    }
    expected_value(s, f, word);
  } else {
    switch (fw.role) {
      case WaitRole::RwlockRead:
        s.c.kind = "rwlock-read";
        if (r.read_waiters.value_or(0) > 0) s.add(3, "readers queued");
        else s.add(-3, "no readers queued");
        if (r.write_locked.value_or(false) || r.write_waiters.value_or(0) > 0) s.add(2, "a writer holds or waits");
        break;
      case WaitRole::RwlockWrite:
        s.c.kind = "rwlock-write";
        if (r.write_waiters.value_or(0) > 0) s.add(3, "writers queued");
        else s.add(-3, "no writers queued");
        if (r.locked.value_or(false)) s.add(2, "held");
        break;
      case WaitRole::RwlockInternal: {
        s.c.kind = "rwlock";
        const auto lk = static_cast<std::uint32_t>(field("__lock"));
        if (lk == 2) s.add(1, "internal lock contended");
        else s.add(-4, "internal lock not contended");
        break;
      }
      default: break;
    }
    if (fw.role != WaitRole::RwlockInternal) {
      // The pre-2.25 wake-up words are counters; the waiter passed the value it read.
      std::uint32_t now = static_cast<std::uint32_t>(field(fw.role == WaitRole::RwlockRead ? "__readers_wakeup"
                                                                                            : "__writer_wakeup"));
      expected_value(s, f, now);
    }
  }
  return cand;
}

Candidate sem_candidate(MemoryReader& mem, const Layouts& L, const FutexCall& f, const FutexWord& fw) {
  Candidate cand;
  Scorer s{cand};
  s.c.kind = "semaphore";
  s.c.address = f.addr - fw.offset;
  s.c.lock = decode_semaphore(mem, s.c.address, *L.sem);
  const LockInfo& m = s.c.lock;
  if (!m.readable) return cand;
  score_common(s, m);
  if (f.pi()) s.add(-6, "FUTEX_LOCK_PI on a semaphore");
  if (m.value.value_or(1) == 0) s.add(2, "value 0");
  else s.add(-3, "value is not 0, yet a thread waits");
  if (m.waiters.value_or(0) > 0) s.add(3, "nwaiters > 0");
  else s.add(-4, "nwaiters is 0");
  expected_value(s, f, 0 + (m.value.value_or(0) << L.sem->value_shift));
  return cand;
}

Candidate cond_candidate(MemoryReader& mem, const Layouts& L, const FutexCall& f, const FutexWord& fw) {
  Candidate cand;
  Scorer s{cand};
  s.c.kind = "condvar";
  s.c.address = f.addr - fw.offset;
  s.c.lock = decode_condvar(mem, s.c.address, *L.cond);
  const LockInfo& c = s.c.lock;
  if (!c.readable) return cand;
  score_common(s, c);
  if (f.pi()) s.add(-6, "FUTEX_LOCK_PI on a condvar");
  if (fw.role == WaitRole::CondSignal) {
    if (c.waiters.value_or(0) > 0) s.add(3, "waiter count > 0");
    else s.add(-4, "no waiters counted");
    if (c.mutex) s.add(1, "__mutex recorded");
  } else {
    if (c.waiters.value_or(0) > 0) s.add(0, "waiter count > 0 (internal word)");
    else s.add(-5, "internal word and no waiters");
  }
  return cand;
}

std::string owner_text(const std::vector<int>& owners) {
  std::string out;
  for (int t : owners) out += (out.empty() ? "" : ", ") + std::string("TID ") + std::to_string(t);
  return out;
}

std::string describe(const BlockedOn& b) {
  const std::string at = b.address ? " " + hex(*b.address) : "";
  const LockInfo* l = b.lock ? &*b.lock : nullptr;
  std::string s;
  if (b.kind == "mutex") {
    s = "waits for " + (l ? l->kind : std::string("mutex")) + at;
    if (l && !l->flags.empty()) {
      s += " (";
      for (std::size_t i = 0; i < l->flags.size(); ++i) s += (i ? ", " : "") + l->flags[i];
      s += ")";
    }
    s += b.owners.empty() ? ": owner not recorded" : ": held by " + owner_text(b.owners);
    if (l && l->recursion && *l->recursion > 1) s += ", locked " + std::to_string(*l->recursion) + " times";
  } else if (b.kind == "rwlock-read" || b.kind == "rwlock-write" || b.kind == "rwlock") {
    s = std::string("waits to ") + (b.kind == "rwlock-read" ? "read-lock" : b.kind == "rwlock-write" ? "write-lock"
                                                                                                     : "lock") +
        " rwlock" + at;
    if (!b.owners.empty()) s += ": write-held by " + owner_text(b.owners);
    else if (l && l->readers.value_or(0) > 0)
      s += ": read-held by " + std::to_string(*l->readers) + " thread(s) (glibc does not record which)";
    else s += ": no holder recorded";
  } else if (b.kind == "semaphore") {
    s = "waits on semaphore" + at + " (value " + std::to_string(l ? l->value.value_or(0) : 0) +
        "; a semaphore has no owner)";
  } else if (b.kind == "condvar") {
    s = "waits on condvar" + at;
    if (b.condvar_mutex) s += " with mutex " + hex(*b.condvar_mutex);
    else s += " (its mutex is not recorded in the condvar)";
  } else if (b.kind == "thread-join") {
    s = "joins thread" + (b.owners.empty() ? std::string() : " TID " + std::to_string(b.owners[0]));
  } else if (b.kind == "glibc-internal-lock") {
    s = "waits for a glibc-internal lock" + at + " (owner not recorded)";
  } else if (b.kind == "futex") {
    s = "waits on futex" + (b.futex ? " " + hex(*b.futex) : std::string()) + " (no lock layout matches)";
  }
  if (!b.confidence.empty() && b.kind != "futex") s += " [" + b.confidence + "]";
  return s;
}

}  // namespace

BlockedOn identify_blocked(MemoryReader& mem, const Layouts& L, const BlockedThread& thread) {
  BlockedOn out;

  // The innermost libc frame name that says which lock family this is.
  std::string_view hint;
  std::optional<std::uint64_t> hint_rdi, cond_rsi;
  for (const auto& fr : thread.frames) {
    if (!libc_like(fr.library)) continue;
    std::string_view h = frame_hint(fr.function);
    if (h == "condvar" && fr.rsi && !cond_rsi) cond_rsi = fr.rsi;
    if (h.empty() || h == "futex" || !hint.empty()) continue;
    hint = h;
    hint_rdi = fr.rdi;
  }

  std::optional<FutexCall> call;
  if (thread.regs && thread.regs->orig_rax() == kSysFutex) {
    call = FutexCall{thread.regs->rdi(), static_cast<std::uint32_t>(thread.regs->rsi()),
                     static_cast<std::uint32_t>(thread.regs->rdx())};
    out.futex = call->addr;
    out.futex_op = call->op;
    out.futex_value = call->value;
  }

  std::vector<Candidate> cands;
  if (call) {
    const Addr a = call->addr;
    for (const auto& fw : L.mutex->futex_words)
      if (a >= fw.offset) cands.push_back(mutex_candidate(mem, L, *call, a - fw.offset));
    for (const auto& fw : L.rwlock->futex_words)
      if (a >= fw.offset) cands.push_back(rwlock_candidate(mem, L, *call, fw));
    for (const auto& fw : L.sem->futex_words)
      if (a >= fw.offset) cands.push_back(sem_candidate(mem, L, *call, fw));
    for (const auto& fw : L.cond->futex_words)
      if (a >= fw.offset) cands.push_back(cond_candidate(mem, L, *call, fw));
    // Words no layout needs: glibc's internal locks and pthread_join's tid.
    auto word = mem.read_value<std::uint32_t>(a);
    {
      Candidate cand;
  Scorer s{cand};
      s.c.kind = "futex";
      s.c.address = a;
      s.add(3, "a futex word");
      cands.push_back(std::move(cand));
    }
    if (word && (hint == "glibc-internal-lock")) {
      Candidate cand;
  Scorer s{cand};
      s.c.kind = "glibc-internal-lock";
      s.c.address = a;
      if (*word >= 1 && *word <= 2) s.add(3, "lock word is 1 or 2");
      else s.add(-3, "lock word is not 1 or 2");
      cands.push_back(std::move(cand));
    }
    if (word && hint == "thread-join") {
      Candidate cand;
  Scorer s{cand};
      s.c.kind = "thread-join";
      s.c.address = a;
      s.c.lock.owners = tid_ok(static_cast<std::int32_t>(*word)) ? std::vector<int>{static_cast<int>(*word)}
                                                                  : std::vector<int>{};
      s.add(tid_ok(static_cast<std::int32_t>(*word)) ? 3 : -3, "word holds the joined thread's TID");
      cands.push_back(std::move(cand));
    }
    if (!word) out.problem = "futex word " + hex(a) + " is unreadable";
  } else if (hint_rdi && (hint == "mutex" || hint.substr(0, 6) == "rwlock" || hint == "semaphore" ||
                          hint == "condvar")) {
    // Not in the syscall (spinning, or no registers): the lock function's
    // first argument, when the debugger recovered it, is the lock itself.
    FutexCall pseudo{*hint_rdi, 0, 0, false};
    if (hint == "mutex") cands.push_back(mutex_candidate(mem, L, pseudo, *hint_rdi));
    else if (hint == "semaphore") cands.push_back(sem_candidate(mem, L, pseudo, {0, WaitRole::SemValue}));
    else if (hint == "condvar") cands.push_back(cond_candidate(mem, L, pseudo, {0, WaitRole::CondSignal}));
    else {
      Candidate c;
      c.kind = hint == "rwlock" ? "rwlock" : std::string(hint);
      c.address = *hint_rdi;
      c.lock = decode_rwlock(mem, *hint_rdi, *L.rwlock);
      c.score = c.lock.plausible ? 3 : -10;
      c.reasons = c.lock.plausible ? "+3 plausible at the lock function's first argument" : c.lock.problem;
      cands.push_back(std::move(c));
    }
    out.evidence = "not in futex(2); used the first argument of the frame named like a lock function";
  } else {
    if (!thread.regs) out.problem = "no registers for frame 0";
    else out.problem = "not in a futex wait (system call " + std::to_string(static_cast<std::int64_t>(
                                                                thread.regs->orig_rax())) + ")";
    return out;
  }

  // Frame-name evidence.
  if (!hint.empty()) {
    for (auto& c : cands) {
      if (c.kind == "futex") continue;
      Scorer s{c};
      if (hint_matches(hint, c.kind)) s.add(5, "frame name says " + std::string(hint));
      else if (hint == "rwlock-read" || hint == "rwlock-write") {
        if (c.kind.substr(0, 6) == "rwlock") s.add(-1, "frame name says " + std::string(hint));
        else s.add(-2, "frame name says " + std::string(hint));
      } else s.add(-2, "frame name says " + std::string(hint));
    }
  }
  // A condvar waiter's mutex from the frame that had it.
  if (cond_rsi) {
    for (auto& c : cands)
      if (c.kind == "mutex" && c.address == *cond_rsi) {
        Scorer s{c};
        s.add(5, "is the mutex pthread_cond_wait was given");
      }
  }

  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  if (cands.empty()) return out;
  const Candidate& best = cands.front();
  int runner_up = -1000;
  for (std::size_t i = 1; i < cands.size(); ++i)
    if (cands[i].kind != best.kind || cands[i].address != best.address) {
      runner_up = cands[i].score;
      break;
    }
  const int margin = best.score - runner_up;
  const bool confirmed = (!hint.empty() && hint_matches(hint, best.kind)) ||
                         (hint.substr(0, 6) == "rwlock" && best.kind.substr(0, 6) == "rwlock") ||
                         (call && call->pi() && best.kind == "mutex");
  if (best.kind == "futex") out.confidence = "guess";
  else if (best.score >= 10 && confirmed && margin >= 4) out.confidence = "certain";
  else if (best.score >= 6 && margin >= 3) out.confidence = "likely";
  else out.confidence = "guess";

  out.kind = best.kind;
  out.address = best.address;
  if (best.kind != "futex") {
    out.lock = best.lock;
    if (out.lock->layout.empty()) out.lock.reset();
  }
  out.owners = best.lock.owners;
  out.owner_source = out.owners.empty() ? "unknown" : "lock-word";
  if (best.kind == "condvar") {
    if (cond_rsi) out.condvar_mutex = *cond_rsi;
    else if (best.lock.mutex) out.condvar_mutex = best.lock.mutex;
  }
  if (out.evidence.empty())
    out.evidence = "futex " + hex(call ? call->addr : 0) + " op " + hex(call ? call->op : 0) +
                   (hint.empty() ? "" : ", frame says " + std::string(hint)) + "; best: " + best.reasons;
  out.detail = describe(out);
  out.candidates = std::move(cands);  // `best` refers into cands: last
  return out;
}

}  // namespace pyhang::glibc
