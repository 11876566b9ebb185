// Identification of what a blocked thread waits for.
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
#include "pyhang/glibc/identify.hpp"

#include <algorithm>

#include "pyhang/glibc/libraries.hpp"

namespace pyhang::glibc {
namespace {

constexpr std::uint64_t kSysFutex = 202;
// restart_syscall: a timed futex wait interrupted by a stop (an attach) resumes through it, the
// wait's own arguments still in rdi, rsi, rdx.
constexpr std::uint64_t kSysRestart = 219;
constexpr std::uint32_t kFutexCmdMask = 0x7f;  // without PRIVATE (128) and CLOCK_REALTIME (256)
constexpr std::uint32_t kFutexWait = 0, kFutexLockPi = 6, kFutexWaitBitset = 9, kFutexWaitRequeuePi = 11,
                        kFutexLockPi2 = 13;

}  // namespace

// ---- frame names -------------------------------------------------------------

WaitKind frame_hint(std::string_view f) {
  if (auto at = f.find('@'); at != std::string_view::npos) f = f.substr(0, at);
  while (f.substr(0, 5) == "__GI_") f.remove_prefix(5);
  while (!f.empty() && f.front() == '_') f.remove_prefix(1);
  if (f.empty() || f == "??") return WaitKind::None;
  static constexpr std::pair<std::string_view, WaitKind> kHints[] = {
      {"lll_lock_wait_private", WaitKind::GlibcInternalLock},
      {"pthread_mutex_", WaitKind::Mutex},
      {"lll_lock_wait", WaitKind::Mutex},
      {"lll_clocklock_wait", WaitKind::Mutex},
      {"lll_timedlock_wait", WaitKind::Mutex},
      {"lll_robust", WaitKind::Mutex},
      {"pthread_rwlock_rdlock", WaitKind::RwlockRead},
      {"pthread_rwlock_timedrdlock", WaitKind::RwlockRead},
      {"pthread_rwlock_clockrdlock", WaitKind::RwlockRead},
      {"pthread_rwlock_wrlock", WaitKind::RwlockWrite},
      {"pthread_rwlock_timedwrlock", WaitKind::RwlockWrite},
      {"pthread_rwlock_clockwrlock", WaitKind::RwlockWrite},
      {"pthread_rwlock_", WaitKind::Rwlock},
      {"new_sem_wait", WaitKind::Semaphore},
      {"old_sem_wait", WaitKind::Semaphore},
      {"sem_wait", WaitKind::Semaphore},
      {"sem_timedwait", WaitKind::Semaphore},
      {"sem_clockwait", WaitKind::Semaphore},
      {"do_futex_wait", WaitKind::Semaphore},
      {"pthread_cond_", WaitKind::Condvar},
      {"condvar_", WaitKind::Condvar},
      {"pthread_join", WaitKind::ThreadJoin},
      {"pthread_clockjoin", WaitKind::ThreadJoin},
      {"pthread_timedjoin", WaitKind::ThreadJoin},
      {"futex_", WaitKind::Futex},
      {"lll_futex", WaitKind::Futex},
      {"syscall", WaitKind::Futex},
  };
  for (const auto& [prefix, hint] : kHints)
    if (f.substr(0, prefix.size()) == prefix) return hint;
  return WaitKind::None;
}

namespace {

// A frame in libc or libpthread, whose lock function names are hints.
bool libc_like(std::string_view path) {
  if (path.empty()) return true;  // unknown library: accept the name
  Library lib = library_of(path);
  return lib == Library::Libc || lib == Library::Libpthread;
}

// Kind family of a candidate, for matching frame hints.
bool hint_matches(WaitKind hint, WaitKind kind) {
  if (hint == kind) return true;
  if (hint == WaitKind::Rwlock) return is_rwlock(kind);
  return false;
}

// Adds points, with their reason, to the candidate it refers to.
struct Scorer {
  Candidate& c;
  void add(int points, ScoreReason why, WaitKind hint = WaitKind::None) {
    c.score += points;
    c.reasons.push_back(Reason{why, points, hint});
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
  if (info.plausible) s.add(3, ScoreReason::Plausible);
  else s.add(-10, ScoreReason::Implausible);
}

void expected_value(Scorer& s, const FutexCall& f, std::uint32_t now) {
  if (f.pi() || !f.from_syscall) return;
  if (f.value == now) s.add(1, ScoreReason::WordUnchanged);
  else s.add(-1, ScoreReason::WordChanged);
}

Candidate mutex_candidate(MemoryReader& mem, const Layouts& L, const FutexCall& f, Addr base) {
  Candidate cand;
  Scorer s{cand};
  s.c.kind = WaitKind::Mutex;
  s.c.address = base;
  s.c.lock = decode_mutex(mem, base, *L.mutex);
  const LockInfo& m = s.c.lock;
  if (!m.readable) return cand;
  score_common(s, m);
  const bool pi = m.has(LockFlag::Pi);
  const bool waiters = m.has(LockFlag::Waiters);
  if (m.locked.value_or(false)) s.add(3, ScoreReason::Locked);
  else s.add(-4, ScoreReason::Unlocked);
  if (waiters) s.add(2, ScoreReason::HasWaiters);
  if (!m.owners.empty()) s.add(2, ScoreReason::OwnerRecorded);
  else if (m.locked.value_or(false)) s.add(-2, ScoreReason::NoOwnerRecorded);
  if (f.pi()) {
    if (pi) s.add(6, ScoreReason::LockPiOnPi);
    else s.add(-6, ScoreReason::LockPiOnNonPi);
  } else if (pi && f.wait()) {
    s.add(-6, ScoreReason::WaitOnPi);
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
  s.c.kind = WaitKind::Rwlock;
  if (!r.readable) return cand;
  score_common(s, r);
  auto field = [&](const char* name) -> std::int64_t {
    for (const auto& [n, v] : r.fields)
      if (n == name) return v;
    return 0;
  };
  const std::uint32_t word = static_cast<std::uint32_t>(field(
      fw.offset == l.readers ? "__readers" : fw.offset == l.wrphase_futex ? "__wrphase_futex" : "__writers_futex"));
  if (f.pi()) s.add(-6, ScoreReason::LockPiOnRwlock);
  if (l.scheme == RwlockScheme::Modern) {
    const std::uint32_t readers = static_cast<std::uint32_t>(field("__readers"));
    const bool wrphase = readers & l.wrphase_bit, wrlocked = readers & l.wrlocked_bit;
    switch (fw.role) {
      case WaitRole::RwlockWrite:
        s.c.kind = WaitKind::RwlockWrite;
        if (word & l.futex_used) s.add(3, ScoreReason::WritersFutexWaiters);
        else s.add(-4, ScoreReason::WritersFutexNoWaiters);
        if (r.write_locked.value_or(false) || wrlocked) s.add(2, ScoreReason::WriterHoldsOrNext);
        else s.add(-3, ScoreReason::NoWriterHolds);
        break;
      case WaitRole::RwlockPhase:
        s.c.kind = wrphase ? WaitKind::RwlockRead : WaitKind::RwlockWrite;
        if (word & l.futex_used) s.add(3, ScoreReason::WrphaseFutexWaiters);
        else s.add(-4, ScoreReason::WrphaseFutexNoWaiters);
        if (wrphase) s.add(2, ScoreReason::WritePhase);
        else if (wrlocked) s.add(2, ScoreReason::ReadPhaseWriterWaiting);
        else s.add(-3, ScoreReason::ReadPhaseNoWriter);
        break;
      case WaitRole::RwlockRead:
        s.c.kind = WaitKind::RwlockRead;
        if (readers & l.rwaiting_bit) s.add(3, ScoreReason::ReadersWaiting);
        else s.add(-5, ScoreReason::ReadersNotWaiting);
        break;
      default: break;
    }
    expected_value(s, f, word);
  } else {
    switch (fw.role) {
      case WaitRole::RwlockRead:
        s.c.kind = WaitKind::RwlockRead;
        if (r.read_waiters.value_or(0) > 0) s.add(3, ScoreReason::ReadersQueued);
        else s.add(-3, ScoreReason::NoReadersQueued);
        if (r.write_locked.value_or(false) || r.write_waiters.value_or(0) > 0) s.add(2, ScoreReason::WriterHoldsOrWaits);
        break;
      case WaitRole::RwlockWrite:
        s.c.kind = WaitKind::RwlockWrite;
        if (r.write_waiters.value_or(0) > 0) s.add(3, ScoreReason::WritersQueued);
        else s.add(-3, ScoreReason::NoWritersQueued);
        if (r.locked.value_or(false)) s.add(2, ScoreReason::Held);
        break;
      case WaitRole::RwlockInternal: {
        s.c.kind = WaitKind::Rwlock;
        const auto lk = static_cast<std::uint32_t>(field("__lock"));
        if (lk == 2) s.add(1, ScoreReason::InternalContended);
        else s.add(-4, ScoreReason::InternalUncontended);
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
  s.c.kind = WaitKind::Semaphore;
  s.c.address = f.addr - fw.offset;
  s.c.lock = decode_semaphore(mem, s.c.address, *L.sem);
  const LockInfo& m = s.c.lock;
  if (!m.readable) return cand;
  score_common(s, m);
  if (f.pi()) s.add(-6, ScoreReason::LockPiOnSemaphore);
  if (m.value.value_or(1) == 0) s.add(2, ScoreReason::ValueZero);
  else s.add(-3, ScoreReason::ValueNotZero);
  if (m.waiters.value_or(0) > 0) s.add(3, ScoreReason::NwaitersPositive);
  else s.add(-4, ScoreReason::NwaitersZero);
  expected_value(s, f, 0 + (m.value.value_or(0) << L.sem->value_shift));
  return cand;
}

Candidate cond_candidate(MemoryReader& mem, const Layouts& L, const FutexCall& f, const FutexWord& fw) {
  Candidate cand;
  Scorer s{cand};
  s.c.kind = WaitKind::Condvar;
  s.c.address = f.addr - fw.offset;
  s.c.lock = decode_condvar(mem, s.c.address, *L.cond);
  const LockInfo& c = s.c.lock;
  if (!c.readable) return cand;
  score_common(s, c);
  if (f.pi()) s.add(-6, ScoreReason::LockPiOnCondvar);
  if (fw.role == WaitRole::CondSignal) {
    if (c.waiters.value_or(0) > 0) s.add(3, ScoreReason::WaitersCounted);
    else s.add(-4, ScoreReason::NoWaitersCounted);
    if (c.mutex) s.add(1, ScoreReason::MutexRecorded);
  } else {
    if (c.waiters.value_or(0) > 0) s.add(0, ScoreReason::InternalWordWaiters);
    else s.add(-5, ScoreReason::InternalWordNoWaiters);
  }
  return cand;
}

}  // namespace

BlockedOn identify_blocked(MemoryReader& mem, const Layouts& L, const BlockedThread& thread) {
  BlockedOn out;

  // The innermost libc frame name that says which lock family this is.
  WaitKind hint = WaitKind::None;
  std::optional<std::uint64_t> hint_rdi, cond_rsi;
  bool futex_frame = false;  // a libc frame named like a futex wrapper or a lock function
  for (const auto& fr : thread.frames) {
    if (!libc_like(fr.library)) continue;
    WaitKind h = frame_hint(fr.function);
    futex_frame = futex_frame || h != WaitKind::None;
    if (h == WaitKind::Condvar && fr.rsi && !cond_rsi) cond_rsi = fr.rsi;
    if (h == WaitKind::None || h == WaitKind::Futex || hint != WaitKind::None) continue;
    hint = h;
    hint_rdi = fr.rdi;
  }
  out.hint = hint;

  std::optional<FutexCall> call;
  if (thread.regs && (thread.regs->orig_rax() == kSysFutex || thread.regs->orig_rax() == kSysRestart)) {
    call = FutexCall{thread.regs->rdi(), static_cast<std::uint32_t>(thread.regs->rsi()),
                     static_cast<std::uint32_t>(thread.regs->rdx())};
    // A restarted call is a futex wait only when its arguments are a wait's, and a frame says so or
    // the word still holds the value the wait expected (as it does while the thread sleeps).
    out.restarted = thread.regs->orig_rax() == kSysRestart;
    if (out.restarted && !(call->wait() && call->addr % 4 == 0 &&
                           (futex_frame || mem.read_value<std::uint32_t>(call->addr) == call->value)))
      call.reset();
  }
  if (call) {
    out.futex = call->addr;
    out.futex_op = call->op;
    out.futex_value = call->value;
  } else {
    out.restarted = false;
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
      s.c.kind = WaitKind::Futex;
      s.c.address = a;
      s.add(3, ScoreReason::FutexWord);
      cands.push_back(std::move(cand));
    }
    if (word && hint == WaitKind::GlibcInternalLock) {
      Candidate cand;
      Scorer s{cand};
      s.c.kind = WaitKind::GlibcInternalLock;
      s.c.address = a;
      if (*word >= 1 && *word <= 2) s.add(3, ScoreReason::LockWordState);
      else s.add(-3, ScoreReason::LockWordNotState);
      cands.push_back(std::move(cand));
    }
    if (word && hint == WaitKind::ThreadJoin) {
      Candidate cand;
      Scorer s{cand};
      s.c.kind = WaitKind::ThreadJoin;
      s.c.address = a;
      s.c.lock.owners = plausible_tid(static_cast<std::int32_t>(*word)) ? std::vector<int>{static_cast<int>(*word)}
                                                                  : std::vector<int>{};
      s.add(plausible_tid(static_cast<std::int32_t>(*word)) ? 3 : -3, ScoreReason::JoinedTid);
      cands.push_back(std::move(cand));
    }
    if (!word) out.problem = IdentifyProblem::FutexUnreadable;
  } else if (hint_rdi && (hint == WaitKind::Mutex || is_rwlock(hint) || hint == WaitKind::Semaphore ||
                          hint == WaitKind::Condvar)) {
    // Not in the syscall (spinning, or no registers): the lock function's
    // first argument, when the debugger recovered it, is the lock itself.
    FutexCall pseudo{*hint_rdi, 0, 0, false};
    if (hint == WaitKind::Mutex) cands.push_back(mutex_candidate(mem, L, pseudo, *hint_rdi));
    else if (hint == WaitKind::Semaphore) cands.push_back(sem_candidate(mem, L, pseudo, {0, WaitRole::SemValue}));
    else if (hint == WaitKind::Condvar) cands.push_back(cond_candidate(mem, L, pseudo, {0, WaitRole::CondSignal}));
    else {
      Candidate c;
      c.kind = hint;
      c.address = *hint_rdi;
      c.lock = decode_rwlock(mem, *hint_rdi, *L.rwlock);
      Scorer s{c};
      if (c.lock.plausible) s.add(3, ScoreReason::PlausibleAtArgument);
      else s.add(-10, ScoreReason::Implausible);
      cands.push_back(std::move(c));
    }
    out.evidence = Evidence::LockArgument;
  } else {
    if (!thread.regs) {
      out.problem = IdentifyProblem::NoRegisters;
    } else {
      out.problem = IdentifyProblem::NotFutexWait;
      out.syscall = static_cast<std::int64_t>(thread.regs->orig_rax());
    }
    return out;
  }

  // Frame-name evidence.
  if (hint != WaitKind::None) {
    for (auto& c : cands) {
      if (c.kind == WaitKind::Futex) continue;
      Scorer s{c};
      if (hint_matches(hint, c.kind)) s.add(5, ScoreReason::FrameName, hint);
      else if (hint == WaitKind::RwlockRead || hint == WaitKind::RwlockWrite)
        s.add(is_rwlock(c.kind) ? -1 : -2, ScoreReason::FrameName, hint);
      else s.add(-2, ScoreReason::FrameName, hint);
    }
  }
  // A condvar waiter's mutex from the frame that had it.
  if (cond_rsi) {
    for (auto& c : cands)
      if (c.kind == WaitKind::Mutex && c.address == *cond_rsi) {
        Scorer s{c};
        s.add(5, ScoreReason::CondvarMutex);
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
  const bool confirmed = (hint != WaitKind::None && hint_matches(hint, best.kind)) ||
                         (is_rwlock(hint) && is_rwlock(best.kind)) ||
                         (call && call->pi() && best.kind == WaitKind::Mutex);
  if (best.kind == WaitKind::Futex) out.confidence = Confidence::Guess;
  else if (best.score >= 10 && confirmed && margin >= 4) out.confidence = Confidence::Certain;
  else if (best.score >= 6 && margin >= 3) out.confidence = Confidence::Likely;
  else out.confidence = Confidence::Guess;

  out.kind = best.kind;
  out.address = best.address;
  if (best.kind != WaitKind::Futex) {
    out.lock = best.lock;
    if (out.lock->layout.empty()) out.lock.reset();
  }
  out.owners = best.lock.owners;
  out.owner_source = out.owners.empty() ? OwnerSource::Unknown : OwnerSource::LockWord;
  if (best.kind == WaitKind::Condvar) {
    if (cond_rsi) out.condvar_mutex = *cond_rsi;
    else if (best.lock.mutex) out.condvar_mutex = best.lock.mutex;
  }
  if (out.evidence == Evidence::None) out.evidence = Evidence::FutexCall;
  out.candidates = std::move(cands);  // `best` refers into cands: last
  return out;
}

}  // namespace pyhang::glibc
