// Native unwinder benchmarks (Google Benchmark); items are frames, so the
// per-item time is the time per frame.
//
//   build with -DPYHANG_BENCH=ON, then:
//   PYHANG_BENCH_CORE=/path/to/core build/pyhang_bench --benchmark_filter=Unwind
//
// The self benchmarks unwind this process's own stack at several depths
// (real CFI: this binary, libstdc++, libc) through a live reader on itself;
// the core benchmarks unwind every thread of a recorded core from the
// registers it holds, as `pyhang report` would, and are skipped without
// PYHANG_BENCH_CORE.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "pyhang/target/target.hpp"
#include "pyhang/unwind/unwinder.hpp"
#include "support/self_registers.hpp"

using namespace pyhang;
using namespace pyhang::unwind;

namespace {

std::shared_ptr<Target> self_target() {
  static std::shared_ptr<Target> target = Target::live(::getpid());
  return target;
}

// Recurses `depth` frames, then unwinds from its own registers (captured at
// the instruction after the asm) while all those frames are live.
__attribute__((noipa)) int recurse_and_unwind(Unwinder& u, int depth, std::size_t max_frames, std::size_t& frames) {
  if (depth > 0) {
    int r = recurse_and_unwind(u, depth - 1, max_frames, frames);
    asm volatile("" : "+r"(r)::"memory");  // a real call: gcc would turn "f() + 1" into a loop
    return r + 1;
  }
  Regs regs;
  PYHANG_CAPTURE_REGS(regs);
  frames += u.unwind(regs, max_frames).pcs.size();
  return 0;
}

// Warm: stack pages and parsed CFI stay cached between iterations (each
// builds the same stack), as for the second and later threads of a target.  Cold: every stack page is
// read again (one process_vm_readv per run of pages).
void self(benchmark::State& state, bool cold) {
  auto target = self_target();
  Unwinder u(*target);
  std::size_t frames = 0;
  target->invalidate();  // this process ran: cached stack pages are stale
  for (auto _ : state) {
    if (cold) target->invalidate();
    recurse_and_unwind(u, static_cast<int>(state.range(0)), 256, frames);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(frames));
  state.counters["frames/unwind"] = static_cast<double>(frames) / static_cast<double>(state.iterations());
}

void BM_UnwindSelf_Warm(benchmark::State& state) { self(state, false); }
void BM_UnwindSelf_ColdStack(benchmark::State& state) { self(state, true); }
BENCHMARK(BM_UnwindSelf_Warm)->Arg(0)->Arg(8)->Arg(64);
BENCHMARK(BM_UnwindSelf_ColdStack)->Arg(0)->Arg(64);

std::shared_ptr<Target> bench_core() {
  static std::shared_ptr<Target> target = [] {
    const char* path = std::getenv("PYHANG_BENCH_CORE");
    return path ? Target::core(path) : nullptr;
  }();
  return target;
}

// Every thread of the core, top state.range(0) frames.  `fresh`: a new
// Unwinder per iteration, so each object's CFI table and CIEs are set up
// again (the cost of the first report on a target).
void core_threads(benchmark::State& state, bool fresh) {
  auto target = bench_core();
  if (!target) {
    state.SkipWithError("set PYHANG_BENCH_CORE to a core of a Python process");
    return;
  }
  std::vector<Regs> threads;
  for (const CoreThread& t : target->core_file()->threads()) {
    // user_regs_struct order (see python/bindings.hpp kRegisterNames)
    const auto& r = t.regs.r;
    Regs regs;
    const std::pair<int, std::size_t> map[] = {{0, 10}, {1, 12}, {2, 11}, {3, 5},  {4, 13}, {5, 14},
                                               {6, 4},  {7, 19}, {8, 9},  {9, 8},  {10, 7}, {11, 6},
                                               {12, 3}, {13, 2}, {14, 1}, {15, 0}, {16, 16}};
    for (auto [dwarf, user] : map) regs.r[dwarf] = r[user];
    threads.push_back(regs);
  }
  auto u = std::make_unique<Unwinder>(*target);
  std::size_t frames = 0;
  for (auto _ : state) {
    if (fresh) u = std::make_unique<Unwinder>(*target);
    for (const Regs& regs : threads) frames += u->unwind(regs, static_cast<std::size_t>(state.range(0))).pcs.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(frames));
  state.counters["threads"] = static_cast<double>(threads.size());
}

void BM_UnwindCoreThreads(benchmark::State& state) { core_threads(state, false); }
void BM_UnwindCoreThreads_FreshTables(benchmark::State& state) { core_threads(state, true); }
BENCHMARK(BM_UnwindCoreThreads)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_UnwindCoreThreads_FreshTables)->Arg(8)->Unit(benchmark::kMicrosecond);

}  // namespace
