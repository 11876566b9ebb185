// Decoder benchmarks (Google Benchmark).
//
//   build with -DPYHANG_BENCH=ON, then:
//   PYHANG_BENCH_CORE=/path/to/core build/pyhang_bench
//
// The Python-stack benchmarks decode every thread of a recorded core (e.g.
// one made by native/bench/end_to_end.py --keep-core); without
// PYHANG_BENCH_CORE they are skipped.  The others run on synthetic images.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>
#include <memory>

#include "cpython/internal.hpp"
#include "cpython/layouts/layout.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/target.hpp"
#include "support/cpython_image.hpp"

using namespace pyhang;

namespace {

std::shared_ptr<Target> bench_core() {
  static std::shared_ptr<Target> target = [] {
    const char* path = std::getenv("PYHANG_BENCH_CORE");
    return path ? Target::core(path) : nullptr;
  }();
  return target;
}

void stacks(benchmark::State& state, bool cold) {
  auto target = bench_core();
  if (!target) {
    state.SkipWithError("set PYHANG_BENCH_CORE to a core of a Python process");
    return;
  }
  std::size_t frames = 0;
  for (auto _ : state) {
    if (cold) target->invalidate();  // every page read again from the core
    auto s = cpython::inspect(*target);
    for (const auto& t : s.threads) frames += t.frames.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(frames));  // items = Python frames
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames), benchmark::Counter::kIsRate);
}

void BM_PythonStacksFromCore_ColdCache(benchmark::State& state) { stacks(state, true); }
void BM_PythonStacksFromCore_WarmCache(benchmark::State& state) { stacks(state, false); }
BENCHMARK(BM_PythonStacksFromCore_ColdCache)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PythonStacksFromCore_WarmCache)->Unit(benchmark::kMillisecond);

// A 3.11+ location table of a long function: one short-form entry per
// instruction, lines advancing by one.
void BM_LocationTableLine(benchmark::State& state) {
  const cpython::Layout* layout = cpython::layout_for(3, 11);
  std::vector<std::uint8_t> table;
  for (int i = 0; i < 2000; ++i) {
    table.push_back(0x80 | (11 << 3) | 0);  // ONE_LINE1 form: line +1, 1 code unit
    table.push_back(0);                     // column
    table.push_back(4);                     // end column
  }
  std::int64_t offset = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cpython::line_for_offset(*layout, table, 1, offset));
    offset = (offset + 1998) % 4000;  // near the end: the worst case of a linear table
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LocationTableLine);

// str objects of each compact kind (ASCII, latin-1, UCS-2, UCS-4) to UTF-8.
void BM_StrDecode(benchmark::State& state) {
  const auto& layout = cpython::testing::layout(12);
  cpython::testing::Image image(layout);
  std::u32string text(static_cast<std::size_t>(state.range(1)), U'a');
  const char32_t sample[] = {U'a', U'\u00e9', U'\u0416', U'\U0001F600'};
  for (std::size_t i = 0; i < text.size(); i += 7) text[i] = sample[state.range(0)];
  Addr str = image.str(text);
  ImageReader memory = image.reader();
  cpython::Options opts;
  for (auto _ : state) {
    cpython::detail::ObjectReader objects(memory, layout, opts);  // no cache carried between rounds
    cpython::ReadProblem problem;
    benchmark::DoNotOptimize(objects.read_str(str, &problem));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::array<const char*, 4>{"ascii", "latin-1", "ucs-2", "ucs-4"}[state.range(0)]);
}
BENCHMARK(BM_StrDecode)->ArgsProduct({{0, 1, 2, 3}, {16, 256}});

void BM_MutexDecode(benchmark::State& state) {
  ImageReader image;
  std::uint32_t words[10] = {2, 1, 0, 4242, 1, 0, 0, 0, 0, 0};  // locked, contended, owner 4242, recursive
  image.add(0x1000, words, sizeof words);
  const auto& layouts = glibc::all_layouts().back();
  for (auto _ : state) benchmark::DoNotOptimize(glibc::decode_mutex(image, 0x1000, *layouts.mutex));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MutexDecode);

}  // namespace
