// A live process stopped by pyhang itself (pyhang/linux/process_stop.hpp).
#include "pyhang/linux/process_stop.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace pyhang::linux_abi {
namespace {

// The threads /proc/PID/task lists now; nullopt when the directory cannot be read (errno kept).
std::optional<std::vector<int>> list_tasks(int pid, unsigned max) {
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  std::vector<int> out;
  while (const dirent* e = ::readdir(d)) {
    int tid = 0;
    const char* end = e->d_name + std::strlen(e->d_name);
    auto [p, ec] = std::from_chars(e->d_name, end, tid);
    if (ec == std::errc() && p == end && tid > 0) out.push_back(tid);
    if (out.size() >= max) break;
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Whether thread `tid` of `pid` has exited but is not yet reaped (state Z or X in its stat): ptrace
// refuses it with EPERM, as it refuses a process not ours.  A main thread that ended before the others
// stays so while they run.
bool task_exited(int pid, int tid) {
  std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return true;   // gone altogether
  char buf[512];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');   // the name may hold spaces and parentheses
  return close != nullptr && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

void sleep_ms(long ms) {
  timespec ts{0, ms * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

enum class Waited { Stopped, Gone, NotYet };

// One look at whether seized thread `tid` reported its stop; `signal` set to
// the signal of a signal-delivery stop (held for the detach), else 0.
Waited poll_stop(int tid, int& signal) {
  signal = 0;
  for (int tries = 0; tries < 8; ++tries) {   // EINTR only
    int status = 0;
    pid_t r = ::waitpid(tid, &status, __WALL | WNOHANG);
    if (r == 0) return Waited::NotYet;
    if (r < 0) {
      if (errno == EINTR) continue;
      return Waited::Gone;   // ECHILD: it exited and was reaped
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) return Waited::Gone;
    if (!WIFSTOPPED(status)) return Waited::NotYet;
    // PTRACE_EVENT_STOP: the interrupt (or a group stop). Else a signal-delivery stop: the
    // thread is stopped as well, with that signal, which the detach delivers.
    if ((status >> 16) != PTRACE_EVENT_STOP) signal = WSTOPSIG(status);
    return Waited::Stopped;
  }
  return Waited::NotYet;
}

}  // namespace

ProcessStop::ProcessStop(ProcessStop&& o) noexcept { *this = std::move(o); }

ProcessStop& ProcessStop::operator=(ProcessStop&& o) noexcept {
  if (this != &o) {
    resume();
    pid_ = o.pid_;
    stopped_ = std::move(o.stopped_);
    not_stopped_ = std::move(o.not_stopped_);
    held_ = std::move(o.held_);
    problem_ = o.problem_;
    error_ = o.error_;
    lingering_ = std::move(o.lingering_);
    o.stopped_.clear();
    o.held_.clear();
    o.lingering_.clear();
  }
  return *this;
}

ProcessStop ProcessStop::stop(int pid, const StopLimits& limits) {
  ProcessStop s;
  s.pid_ = pid;
  if (pid <= 0) {
    s.problem_ = StopProblem::NoProcess;
    return s;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(limits.wait_ms);
  std::set<int> seen;
  std::vector<int> pending;   // seized and interrupted, stop not yet reported
  auto fail = [&s, &pending](StopProblem p, int err) {   // every thread seized let go again
    s.lingering_.insert(s.lingering_.end(), pending.begin(), pending.end());
    s.resume();
    s.not_stopped_.clear();
    s.problem_ = p;
    s.error_ = err;
  };
  for (unsigned listing = 0; listing < limits.listings; ++listing) {
    auto tids = list_tasks(pid, limits.max_threads);
    if (!tids) {
      if (listing == 0) {
        fail(errno == ENOENT ? StopProblem::NoProcess : StopProblem::Failed, errno);
        return s;
      }
      break;   // it exited while being stopped: what was stopped stays so, for resume
    }
    std::vector<int> fresh;
    for (int tid : *tids)
      if (seen.size() < limits.max_threads && seen.insert(tid).second) fresh.push_back(tid);
    if (fresh.empty()) break;   // every thread listed is stopped (or could not be): nobody left to start one
    for (int tid : fresh) {
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
        if (errno == ESRCH) continue;   // it exited between the listing and now
        if (errno == EPERM && task_exited(pid, tid)) continue;   // a zombie: nothing left to stop
        fail(errno == EPERM ? StopProblem::NotPermitted : StopProblem::Failed, errno);
        return s;
      }
      if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
        ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
        continue;   // ESRCH: it exited
      }
      pending.push_back(tid);
    }
    // Wait for this listing's threads before listing again: a thread that still runs could start another.
    while (!pending.empty()) {
      std::vector<int> still;
      for (int tid : pending) {
        int signal = 0;
        switch (poll_stop(tid, signal)) {
          case Waited::Stopped:
            s.stopped_.push_back(tid);
            if (signal != 0) s.held_.emplace_back(tid, signal);
            break;
          case Waited::Gone:
            break;
          case Waited::NotYet:
            still.push_back(tid);
            break;
        }
      }
      pending.swap(still);
      if (pending.empty() || Clock::now() >= deadline) break;
      sleep_ms(1);
    }
    for (int tid : pending) {   // past the deadline: say so; resume() lets it go once it stops
      s.not_stopped_.push_back(tid);
      s.lingering_.push_back(tid);
    }
    pending.clear();
  }
  if (s.stopped_.empty() && s.not_stopped_.empty()) s.problem_ = StopProblem::NoProcess;
  return s;
}

void ProcessStop::resume() {
  std::map<int, int> signals(held_.begin(), held_.end());
  for (int tid : stopped_) {
    auto it = signals.find(tid);
    long sig = it == signals.end() ? 0 : it->second;
    ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(sig));
  }
  stopped_.clear();
  held_.clear();
  // A thread that had not stopped by the deadline stops when it can (its interrupt is queued): detach it
  // if it has, else the kernel does when this process exits (a tracer's exit detaches its tracees).
  for (int tid : lingering_) {
    int signal = 0;
    if (poll_stop(tid, signal) == Waited::Stopped)
      ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(signal)));
    else
      ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  }
  lingering_.clear();
}

}  // namespace pyhang::linux_abi
