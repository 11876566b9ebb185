// Decoders for glibc's locks.  Every object is read once, whole, into a
// local buffer; fields are read from that copy through the layout's offsets.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "pyhang/glibc/decode.hpp"

namespace pyhang::glibc {
namespace {

constexpr std::uint32_t kSaneCount = 1u << 20;
constexpr std::uint32_t kSemValueMax = 0x7fffffffu;

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

// A fatal problem makes the bytes implausible; the others say what is odd.
enum Severity : bool { kOdd = false, kFatal = true };

void add_problem(LockInfo& info, LockProblem p, Severity fatal, std::int64_t value = 0, std::int64_t other = 0) {
  info.problems.push_back(LockIssue{p, fatal == kFatal, value, other});
  if (fatal == kFatal) info.plausible = false;
}

bool unreadable(LockInfo& info) {
  info.readable = false;
  info.plausible = false;
  info.problems = {LockIssue{LockProblem::Unreadable, true, static_cast<std::int64_t>(info.address), 0}};
  return true;
}

bool user_pointer_or_null(std::uint64_t p) { return p == 0 || (p >= 0x1000 && p < 0x800000000000ull); }

}  // namespace

// ---- mutex -----------------------------------------------------------------

LockInfo decode_mutex(MemoryReader& mem, Addr addr, const MutexLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = LockType::Mutex;
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info)) return info;
  info.readable = true;
  info.plausible = true;

  const std::uint32_t lock = b.u32(l.lock), count = b.u32(l.count), nusers = b.u32(l.nusers);
  const std::int32_t owner = b.i32(l.owner), kind = b.i32(l.kind);
  info.fields = {{"__lock", static_cast<std::int32_t>(lock)}, {"__count", count}, {"__owner", owner},
                 {"__nusers", nusers}, {"__kind", kind}};

  if (kind == -1) {
    add_problem(info, LockProblem::Destroyed, kFatal);
    return info;
  }
  const std::uint32_t k = static_cast<std::uint32_t>(kind);
  const bool robust = k & l.robust_bit, pi = k & l.pi_bit, pp = k & l.pp_bit;
  const std::uint32_t ceiling_mask = ~((1u << l.ceiling_shift) - 1);
  std::uint32_t known = l.kind_mask | l.robust_bit | l.pi_bit | l.pp_bit | l.pshared_bit | l.elision_bits;
  if (pp) known |= ceiling_mask;
  if (k & ~known) add_problem(info, LockProblem::KindUnknownBits, kFatal, k);
  if (pi && pp) add_problem(info, LockProblem::KindPiAndPp, kFatal);
  if (robust && pp) add_problem(info, LockProblem::KindRobustAndPp, kFatal);

  static constexpr LockType kTypes[] = {LockType::MutexNormal, LockType::MutexRecursive, LockType::MutexErrorcheck,
                                        LockType::MutexAdaptive};
  const std::uint32_t type = k & l.kind_mask;
  info.kind = kTypes[type & 3];
  if (robust) info.flags.push_back(LockFlag::Robust);
  if (pi) info.flags.push_back(LockFlag::Pi);
  if (pp) info.flags.push_back(LockFlag::Pp);
  if (k & l.pshared_bit) info.flags.push_back(LockFlag::Pshared);

  const bool owner_special = robust && (owner == l.owner_inconsistent || owner == l.owner_notrecoverable);
  if (owner < 0 || (owner > kMaxTid && !owner_special))
    add_problem(info, LockProblem::OwnerNotTid, kFatal, owner);
  if (nusers > kSaneCount) add_problem(info, LockProblem::NusersNotCount, kFatal, nusers);

  if (pi || robust) {
    // The lock word is the owner's TID with FUTEX_WAITERS / FUTEX_OWNER_DIED.
    const std::uint32_t tid = lock & l.futex_tid_mask;
    info.locked = tid != 0;
    if (lock & l.futex_waiters) info.flags.push_back(LockFlag::Waiters);
    if (lock & l.futex_owner_died) info.flags.push_back(LockFlag::OwnerDied);
    if (tid != 0 && !plausible_tid(tid)) add_problem(info, LockProblem::LockWordTidNotTid, kFatal, tid);
    if (tid != 0 && plausible_tid(tid)) {
      info.owners.push_back(static_cast<int>(tid));
      info.owner_source = "__lock";
      if (owner != 0 && owner != static_cast<std::int32_t>(tid) && !owner_special)
        add_problem(info, LockProblem::OwnerDiffersFromLockWord, kOdd, owner, tid);
    }
    // tid 0 with FUTEX_OWNER_DIED (| FUTEX_WAITERS): the kernel released
    // the lock of a dead owner; the next locker gets EOWNERDEAD.
  } else {
    std::uint32_t state = pp ? (lock & ~ceiling_mask) : lock;
    if (state > 2) add_problem(info, LockProblem::LockNotState, kFatal, lock);
    info.locked = state != 0;
    if (state == 2) info.flags.push_back(LockFlag::Waiters);
    if (pp) info.fields.push_back({"ceiling", lock >> l.ceiling_shift});
    // Locked with no owner recorded: lock elision, or caught between
    // locking and recording.
    if (state != 0 && plausible_tid(owner)) {
      info.owners.push_back(owner);
      info.owner_source = "__owner";
    }
    // Only recursive (and robust/PI/PP, handled above) mutexes use __count.
    if (type != 1 && count != 0 && !pp)
      add_problem(info, LockProblem::CountOnNonRecursive, kFatal, count);
  }
  if (owner_special) {
    info.flags.push_back(owner == l.owner_inconsistent ? LockFlag::Inconsistent : LockFlag::NotRecoverable);
  }
  if (type == 1) {
    info.recursion = count;
    if (*info.locked && count == 0) add_problem(info, LockProblem::RecursiveCountZero, kOdd);
    if (count > (1u << 30)) add_problem(info, LockProblem::CountNotRecursion, kFatal, count);
  }
  if (!*info.locked && owner != 0 && !owner_special)
    add_problem(info, LockProblem::UnlockedWithOwner, kOdd, owner);
  if (robust && l.list != kNoField) {
    if (!user_pointer_or_null(b.u64(l.list)) || !user_pointer_or_null(b.u64(l.list + 8)))
      add_problem(info, LockProblem::RobustListNotPointers, kFatal);
  }
  return info;
}

// ---- rwlock ----------------------------------------------------------------

LockInfo decode_rwlock(MemoryReader& mem, Addr addr, const RwlockLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = LockType::Rwlock;
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info)) return info;
  info.readable = true;
  info.plausible = true;

  const std::int32_t writer = b.i32(l.writer);
  const std::uint32_t shared = b.u32(l.shared), flags = b.u32(l.flags);
  if (flags > l.max_flags) add_problem(info, LockProblem::FlagsNotKind, kFatal, flags);
  if (shared != 0 && shared != 1 && shared != 128)
    add_problem(info, LockProblem::SharedNotFlag, kFatal, shared);
  if (writer < 0 || writer > kMaxTid) add_problem(info, LockProblem::WriterNotTid, kFatal, writer);
  for (std::uint32_t off : l.zero_padding)
    if (b.u32(off) != 0) {
      add_problem(info, LockProblem::PaddingNotZero, kFatal, off);
      break;
    }
  if (flags == 1) info.flags.push_back(LockFlag::PreferWriter);
  if (flags == 2) info.flags.push_back(LockFlag::PreferWriterNonrecursive);
  if (shared) info.flags.push_back(LockFlag::Pshared);

  if (l.scheme == RwlockScheme::Modern) {
    const std::uint32_t r = b.u32(l.readers), w = b.u32(l.writers), wp = b.u32(l.wrphase_futex),
                        wf = b.u32(l.writers_futex);
    info.fields = {{"__readers", r}, {"__writers", w}, {"__wrphase_futex", wp}, {"__writers_futex", wf},
                   {"__cur_writer", writer}, {"__shared", shared}, {"__flags", flags}};
    const bool wrphase = r & l.wrphase_bit, wrlocked = r & l.wrlocked_bit;
    const std::uint32_t registered = r >> l.reader_shift;
    if (registered > kSaneCount) add_problem(info, LockProblem::ReadersNotCount, kFatal, registered);
    if ((w & ~l.writers_handover) > kSaneCount) add_problem(info, LockProblem::WritersNotCount, kFatal, w);
    if (wp > 3 || wf > 3) add_problem(info, LockProblem::FutexWordsNotState, kFatal, wp, wf);
    info.write_locked = wrphase && wrlocked;
    // In a write phase registered readers are waiting; in a read phase they hold it.
    info.readers = wrphase ? 0 : registered;
    if (wrphase && registered) info.flags.push_back(LockFlag::ReadWaiters);
    if (r & l.rwaiting_bit) info.flags.push_back(LockFlag::ReadWaiters);
    if ((!wrphase && wrlocked) || (wf & l.futex_used)) info.flags.push_back(LockFlag::WriteWaiters);
    info.locked = *info.write_locked || *info.readers > 0;
    if (*info.write_locked) {
      // Write-locked without a valid __cur_writer: caught between locking and recording.
      if (plausible_tid(writer)) {
        info.owners.push_back(writer);
        info.owner_source = "__cur_writer";
      }
    } else if (writer != 0) {
      add_problem(info, LockProblem::WriterInReadPhase, kOdd, writer);
    }
  } else {
    const std::uint32_t lk = b.u32(l.lock), nr = b.u32(l.nr_readers), rq = b.u32(l.nr_readers_queued),
                        wq = b.u32(l.nr_writers_queued);
    info.fields = {{"__lock", lk},           {"__nr_readers", nr},        {"__readers_wakeup", b.u32(l.readers_wakeup)},
                   {"__writer_wakeup", b.u32(l.writer_wakeup)}, {"__nr_readers_queued", rq},
                   {"__nr_writers_queued", wq}, {"__writer", writer},   {"__shared", shared}, {"__flags", flags}};
    if (lk > 2) add_problem(info, LockProblem::LockNotState, kFatal, lk);
    if (nr > kSaneCount || rq > kSaneCount || wq > kSaneCount)
      add_problem(info, LockProblem::QueueCountsNotCounts, kFatal);
    info.write_locked = writer != 0;
    info.readers = nr;
    info.read_waiters = rq;
    info.write_waiters = wq;
    info.waiters = rq + wq;
    if (writer != 0 && nr != 0)
      add_problem(info, LockProblem::WriteAndReadHeld, kFatal, writer, nr);
    info.locked = writer != 0 || nr != 0;
    if (plausible_tid(writer)) {
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
  info.kind = LockType::Semaphore;
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info)) return info;
  info.readable = true;
  info.plausible = true;
  const std::uint32_t word = b.u32(l.value);
  const std::uint32_t value = l.value_shift ? word >> l.value_shift : word;
  const std::uint64_t nwaiters = l.nwaiters_size == 8 ? b.u64(l.nwaiters) : b.u32(l.nwaiters);
  const std::int32_t priv = b.i32(l.private_flag);
  info.fields = {{"value", value}, {"nwaiters", static_cast<std::int64_t>(nwaiters)}, {"private", priv}};
  if (value > kSemValueMax) add_problem(info, LockProblem::ValueAboveMax, kFatal, value);
  if (nwaiters > kSaneCount) add_problem(info, LockProblem::NwaitersNotCount, kFatal, static_cast<std::int64_t>(nwaiters));
  if (priv != 0 && priv != 1 && priv != 128) add_problem(info, LockProblem::PrivateNotFlag, kFatal, priv);
  info.value = value;
  info.waiters = static_cast<std::uint32_t>(std::min<std::uint64_t>(nwaiters, kSaneCount));
  info.locked = value == 0;
  if (priv == 128 || priv == 1) info.flags.push_back(LockFlag::Pshared);
  return info;
}

// ---- condvar -----------------------------------------------------------------

namespace {

// The raw 2.25+ fields, for display; __g_refs only where the layout has it.
void condvar_modern_fields(const Bytes& b, const CondLayout& l, LockInfo& info) {
  info.fields = {{"__wseq", static_cast<std::int64_t>(b.u64(l.wseq))},
                 {"__g1_start", static_cast<std::int64_t>(b.u64(l.g1_start))}};
  if (l.g_refs != kNoField) {
    info.fields.push_back({"__g_refs[0]", b.u32(l.g_refs)});
    info.fields.push_back({"__g_refs[1]", b.u32(l.g_refs + 4)});
  }
  info.fields.insert(info.fields.end(), {{"__g_size[0]", b.u32(l.g_size)},
                                         {"__g_size[1]", b.u32(l.g_size + 4)},
                                         {"__g1_orig_size", b.u32(l.g1_orig_size)},
                                         {"__wrefs", b.u32(l.wrefs)},
                                         {"__g_signals[0]", b.u32(l.g_signals)},
                                         {"__g_signals[1]", b.u32(l.g_signals + 4)}});
}

// 2.25+: the waiter count and flags of __wrefs, and whether the sequence
// counters and group counts can be a condvar's.
void decode_condvar_modern(const Bytes& b, const CondLayout& l, LockInfo& info) {
  condvar_modern_fields(b, l, info);
  const std::uint64_t wseq = b.u64(l.wseq), g1 = b.u64(l.g1_start);
  const std::uint32_t wrefs = b.u32(l.wrefs);
  const std::uint32_t waiters = wrefs >> l.wrefs_waiter_shift;
  if (waiters > kSaneCount) add_problem(info, LockProblem::WrefsNotCount, kFatal, waiters);
  // G1 starts at or before the next waiter's position (__wseq >> 1).
  if ((g1 >> l.g1_start_shift) > (wseq >> 1)) add_problem(info, LockProblem::G1StartPastWseq, kFatal);
  if (wseq >> 62) add_problem(info, LockProblem::WseqNotSequence, kFatal, static_cast<std::int64_t>(wseq));
  // __g_size is "effectively negative" in G2 after waiters there time out
  // or are cancelled (pthread_cond_wait.c), so it is read as signed.
  bool counts_ok = true;
  for (std::uint32_t off : {l.g_size, l.g_size + 4}) {
    const std::int64_t size = b.i32(off);
    counts_ok = counts_ok && size >= -std::int64_t{kSaneCount} && size <= 2 * std::int64_t{kSaneCount};
  }
  if (l.g_refs != kNoField)
    counts_ok = counts_ok && b.u32(l.g_refs) <= 2 * kSaneCount && b.u32(l.g_refs + 4) <= 2 * kSaneCount;
  if (!counts_ok) add_problem(info, LockProblem::GroupCountsNotCounts, kFatal);
  for (std::uint32_t off : l.zero_padding)
    if (b.u32(off) != 0) {
      add_problem(info, LockProblem::UnusedNotZero, kFatal, off);
      break;
    }
  info.waiters = waiters;
  if (wrefs & l.wrefs_clock_bit) info.flags.push_back(LockFlag::ClockMonotonic);
  if (wrefs & l.wrefs_pshared_bit) info.flags.push_back(LockFlag::Pshared);
  if (wrefs & l.wrefs_destroy_bit) info.flags.push_back(LockFlag::DestroyPending);
}

}  // namespace

LockInfo decode_condvar(MemoryReader& mem, Addr addr, const CondLayout& l) {
  LockInfo info;
  info.address = addr;
  info.layout = std::string(l.name);
  info.kind = LockType::Condvar;
  Bytes b(mem, addr, l.size);
  if (!b.ok() && unreadable(info)) return info;
  info.readable = true;
  info.plausible = true;
  if (l.scheme == CondScheme::Modern) {
    decode_condvar_modern(b, l, info);
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
    if (lk > 2) add_problem(info, LockProblem::LockNotState, kFatal, lk);
    if (wakeup > total || woken > wakeup) add_problem(info, LockProblem::SequencesOutOfOrder, kFatal);
    if ((nw >> l.nwaiters_shift) > kSaneCount) add_problem(info, LockProblem::CondNwaitersNotCount, kFatal);
    if (mutex != ~0ull && !user_pointer_or_null(mutex)) add_problem(info, LockProblem::MutexNotPointer, kFatal);
    info.waiters = nw >> l.nwaiters_shift;
    if (mutex == ~0ull) {
      info.flags.push_back(LockFlag::Pshared);
    } else if (mutex != 0) {
      info.mutex = mutex;
    }
  }
  return info;
}

}  // namespace pyhang::glibc
