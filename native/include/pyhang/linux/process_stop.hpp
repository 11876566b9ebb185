// Every thread of a live process stopped by pyhang itself, as a debugger
// stops it, without a debugger: PTRACE_SEIZE and PTRACE_INTERRUPT of each
// thread /proc/PID/task lists, until a listing finds no thread not yet
// stopped; then Target::registers (PTRACE_GETREGS) answers for each, and
// memory reads see it hold still.  resume() (or the destructor) detaches
// every thread, and the process runs on as before.
//
// What a stop does to the process is what gdb's attach does, less:
// - No signal is sent (PTRACE_SEIZE, not PTRACE_ATTACH's SIGSTOP): nothing
//   the program can see in its signal handlers or its wait status.
// - A thread blocked in an interruptible system call leaves it for the stop
//   and the kernel restarts the call on detach (ERESTARTSYS and kin; a sleep
//   resumes through restart_syscall with the time it had left).  A write of
//   a pipe or socket can come back short: whoever stops a process decides
//   first whether that may happen (pyhang.transfers) and reads it without
//   stopping when it may.
// - A signal that arrives for a thread while it is stopped is held (a
//   signal-delivery stop) and delivered when that thread is detached: none
//   is lost.
//
// ptrace requests answer only the thread that made the stop (the tracer is
// a thread, not a process): stop, read registers and resume from one
// thread.  Every wait is bounded: a thread that has not stopped by the
// deadline (a D-state sleep in a driver) is named in not_stopped and the
// stop goes on without it; resume() lets it go (or, if it is still not
// stopped then, the kernel does when this process exits).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "pyhang/base/names.hpp"

namespace pyhang::linux_abi {

// Why a process could not be stopped (a thread of it that could not: not_stopped).
enum class StopProblem : std::uint8_t {
  None,          // every thread listed was stopped
  NoProcess,     // no such process (or it exited while being stopped, or only its zombie is left)
  NotPermitted,  // PTRACE_SEIZE refused (EPERM: another tracer, ptrace_scope, another user's process)
  Failed,        // another error of ptrace or /proc (errno kept)
};
inline constexpr std::array<Named<StopProblem>, 4> kStopProblemNames{{
    {StopProblem::None, ""},
    {StopProblem::NoProcess, "no-process"},
    {StopProblem::NotPermitted, "not-permitted"},
    {StopProblem::Failed, "failed"},
}};
constexpr std::string_view to_string(StopProblem p) { return name_in(kStopProblemNames, p); }

struct StopLimits {
  unsigned listings = 16;        // /proc/PID/task read again while it shows threads not yet stopped
  unsigned max_threads = 1 << 16;
  unsigned wait_ms = 2000;       // for all threads, from the first interrupt, to report their stop
};

class ProcessStop {
 public:
  // Stops every thread of `pid`.  problem() says why when it could not stop
  // the process (then no thread is stopped: all were detached again).
  static ProcessStop stop(int pid, const StopLimits& limits = {});

  ProcessStop() = default;
  ProcessStop(ProcessStop&& o) noexcept;
  ProcessStop& operator=(ProcessStop&& o) noexcept;
  ProcessStop(const ProcessStop&) = delete;
  ProcessStop& operator=(const ProcessStop&) = delete;
  ~ProcessStop() { resume(); }

  int pid() const { return pid_; }
  // The threads stopped, in /proc's order of their first listing.
  const std::vector<int>& stopped() const { return stopped_; }
  // Threads listed that had not stopped by the deadline.
  const std::vector<int>& not_stopped() const { return not_stopped_; }
  StopProblem problem() const { return problem_; }
  int error() const { return error_; }   // errno of the failing call, for NotPermitted and Failed
  // Signals that arrived while stopped, held for delivery at resume (thread, signal).
  const std::vector<std::pair<int, int>>& held_signals() const { return held_; }
  bool active() const { return !stopped_.empty() || !lingering_.empty(); }

  // Detaches every stopped thread (delivering the signals held); the process
  // runs on.  Idempotent.
  void resume();

 private:
  int pid_ = 0;
  std::vector<int> stopped_;
  std::vector<int> not_stopped_;
  std::vector<std::pair<int, int>> held_;
  std::vector<int> lingering_;   // seized, interrupted, not stopped by the deadline
  StopProblem problem_ = StopProblem::None;
  int error_ = 0;
};

}  // namespace pyhang::linux_abi
