// How sure a finding is, and where a lock's owner came from: shared by the
// glibc and Python lock decoders (the same strings as python/pyhang/model/kinds.py,
// whose wait-for graph reads them).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pyhang/base/names.hpp"

namespace pyhang {

enum class Confidence : std::uint8_t {
  None,     // nothing was identified
  Certain,  // the bytes prove it (a futex inside the lock, a PI op, ...)
  Likely,   // the evidence agrees, with a margin
  Guess,    // the best of weak candidates
};

inline constexpr std::array<Named<Confidence>, 4> kConfidenceNames{{
    {Confidence::None, ""},
    {Confidence::Certain, "certain"},
    {Confidence::Likely, "likely"},
    {Confidence::Guess, "guess"},
}};
constexpr std::string_view to_string(Confidence c) { return name_in(kConfidenceNames, c); }
constexpr std::optional<Confidence> parse_confidence(std::string_view s) { return parse_in(kConfidenceNames, s); }

enum class OwnerSource : std::uint8_t {
  Unknown,    // nothing records the owner
  LockWord,   // the lock's own bytes (mutex __owner, rwlock writer, RLock rlock_owner)
  Heuristic,  // other threads' frames or libraries suggest it
  GilState,   // the GIL's holder
  ThreadTid,  // pthread_join: the joined thread's TID
  ThreadObject,  // Thread.join: the threading.Thread joined names its thread
  AsyncioLoop,   // a future only an asyncio task or ready callback completes: the thread running its loop
  WorkItem,      // a concurrent.futures.Future whose ThreadPoolExecutor work item a worker thread runs
  OtherRanks,    // a torch.distributed collective: the other ranks of its process group, other processes
};

inline constexpr std::array<Named<OwnerSource>, 9> kOwnerSourceNames{{
    {OwnerSource::Unknown, "unknown"},
    {OwnerSource::LockWord, "lock-word"},
    {OwnerSource::Heuristic, "heuristic"},
    {OwnerSource::GilState, "gil-state"},
    {OwnerSource::ThreadTid, "thread-tid"},
    {OwnerSource::ThreadObject, "thread-object"},
    {OwnerSource::AsyncioLoop, "asyncio-loop"},
    {OwnerSource::WorkItem, "work-item"},
    {OwnerSource::OtherRanks, "other-ranks"},
}};
constexpr std::string_view to_string(OwnerSource s) { return name_in(kOwnerSourceNames, s); }
constexpr std::optional<OwnerSource> parse_owner_source(std::string_view s) { return parse_in(kOwnerSourceNames, s); }

}  // namespace pyhang
