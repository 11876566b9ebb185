// The GIL: where its state is (GilModel), whether it is locked, who holds
// it, and which wait addresses belong to it.  On 3.6, where the GIL is a set
// of static variables, their addresses are decoded from machine code
// (gil_statics.cpp).
#include <algorithm>
#include <unordered_set>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython {

namespace {

using detail::kPthreadCondSize;
using detail::kPthreadMutexSize;

// One struct _gil_runtime_state at addr.
GilInfo read_gil_state(MemoryReader& mem, const Layout& l, Addr addr, std::int64_t interp_id,
                       std::vector<StateWarning>& warnings) {
  GilInfo g;
  g.address = addr;
  g.size = static_cast<std::uint64_t>(l.gil_size);
  g.interp_id = interp_id;
  g.source = "gil-state";
  g.ranges.push_back({g.address, g.size});
  detail::RemoteStruct s;
  if (!s.load(mem, addr, static_cast<std::size_t>(l.gil_size))) {
    warnings.push_back({StateProblem::GilUnreadable, addr, 0, 0, 0, 0, {}, {}, {}});
    g.source = "unreadable";
    return g;
  }
  auto locked = s.get<std::int32_t>(l.gil_locked);
  Addr holder = s.ptr(l.gil_last_holder);
  g.switch_number = s.get<std::uint64_t>(l.gil_switch_number);
  if (locked && *locked == -1) {
    g.source = "not-created";
    g.locked = false;
  } else if (locked && (*locked == 0 || *locked == 1)) {
    g.locked = *locked == 1;
  } else {
    warnings.push_back({StateProblem::GilLockedOdd, addr, 0, 0, locked ? std::int64_t{*locked} : 0, locked ? 1 : 0,
                        {}, {}, {}});
  }
  if (holder != 0 && !detail::plausible_pointer(holder)) {
    warnings.push_back({StateProblem::GilHolderOdd, addr, holder, 0, 0, 0, {}, {}, {}});
    holder = 0;
  }
  if (g.locked.value_or(false)) g.holder_tstate = holder;
  return g;
}

}  // namespace

namespace detail {

std::vector<GilInfo> read_gils(ObjectReader& objects, const Roots& roots, const std::vector<InterpInfo>& interps,
                               std::vector<StateWarning>& warnings) {
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
            g.source = "not-created";
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
