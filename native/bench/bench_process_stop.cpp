// pyhang's own stop (ProcessStop) of a process of N threads parked in
// pause(): one stop and resume per iteration, and the stop with every
// thread's registers read (what a stopping report adds to a no-stop one).
//
//   build with -DPYHANG_BENCH=ON, then: build/pyhang_bench --benchmark_filter=Stop
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "pyhang/linux/process_stop.hpp"
#include "pyhang/target/target.hpp"

using pyhang::linux_abi::ProcessStop;
using pyhang::linux_abi::StopProblem;

namespace {

void* parked(void*) {
  for (;;) ::pause();
}

// A child of `threads` threads besides its main one, every one in pause(); killed at the end of scope.
struct ParkedChild {
  pid_t pid = -1;
  explicit ParkedChild(int threads) {
    pid = ::fork();
    if (pid == 0) {
      pthread_t t;
      for (int i = 0; i < threads; ++i) pthread_create(&t, nullptr, parked, nullptr);
      for (;;) ::pause();
    }
    std::string dir = "/proc/" + std::to_string(pid) + "/task";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::error_code ec;
      auto n = std::distance(std::filesystem::directory_iterator(dir, ec), std::filesystem::directory_iterator());
      if (!ec && n == threads + 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~ParkedChild() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

void BM_StopAndResume(benchmark::State& state) {
  ParkedChild child(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto stop = ProcessStop::stop(child.pid);
    if (stop.problem() != StopProblem::None) {
      state.SkipWithError("ptrace is not permitted here");
      return;
    }
    benchmark::DoNotOptimize(stop.stopped().size());
    stop.resume();
  }
  state.counters["threads"] = static_cast<double>(state.range(0) + 1);
}

void BM_StopReadRegistersResume(benchmark::State& state) {
  ParkedChild child(static_cast<int>(state.range(0)));
  auto target = pyhang::Target::live(child.pid);
  for (auto _ : state) {
    auto stop = ProcessStop::stop(child.pid);
    if (stop.problem() != StopProblem::None) {
      state.SkipWithError("ptrace is not permitted here");
      return;
    }
    for (int tid : stop.stopped()) benchmark::DoNotOptimize(target->registers(tid));
    stop.resume();
  }
}

}  // namespace

BENCHMARK(BM_StopAndResume)->Arg(0)->Arg(255)->Arg(1023)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StopReadRegistersResume)->Arg(255)->Arg(1023)->Unit(benchmark::kMillisecond)->UseRealTime();
