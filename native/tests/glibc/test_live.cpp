// GIVEN prog_locks with every lock kind held by a known thread and waiters
// blocked on each, WHEN it is stopped and read as a live target, THEN each
// lock decodes with the recorded holder as owner, and each waiter's futex
// registers (from /proc/PID/task/TID/syscall) identify that lock.
#include <catch2/catch.hpp>
#include <map>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "glibc/kind_names.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/target.hpp"
#include "support/skip.hpp"

extern char** environ;

using namespace pyhang;
using namespace pyhang::glibc;

namespace {

// The few fields of prog_locks' JSON lines (flat objects, integers, one
// list of integers).
struct Record {
  std::string lock, waiter_mode;
  Addr address = 0, futex = 0, mutex = 0;
  int waiter = 0, count = 0;
  std::vector<int> holders;
};

std::string raw_value(const std::string& line, const std::string& key) {
  auto k = line.find("\"" + key + "\":");
  if (k == std::string::npos) return {};
  auto v = k + key.size() + 3;
  if (line[v] == '"') return line.substr(v + 1, line.find('"', v + 1) - v - 1);
  if (line[v] == '[') return line.substr(v + 1, line.find(']', v) - v - 1);
  return line.substr(v, line.find_first_of(",}", v) - v);
}

Record parse(const std::string& line) {
  Record r;
  r.lock = raw_value(line, "lock");
  r.waiter_mode = raw_value(line, "waiter_mode");
  r.address = std::stoull(raw_value(line, "address"));
  r.futex = std::stoull(raw_value(line, "futex"));
  r.waiter = std::stoi(raw_value(line, "waiter"));
  r.count = std::stoi(raw_value(line, "count"));
  if (auto m = raw_value(line, "mutex"); !m.empty()) r.mutex = std::stoull(m);
  std::stringstream hs(raw_value(line, "holders"));
  for (std::string h; std::getline(hs, h, ',');)
    if (!h.empty()) r.holders.push_back(std::stoi(h));
  return r;
}

// Child process, always killed.
struct Child {
  pid_t pid = -1;
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// Frame 0's futex registers as the kernel reports them: "202 addr op val ...".
std::optional<Registers> syscall_regs(pid_t pid, int tid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  std::string nr, a1, a2, a3;
  if (!(f >> nr >> a1 >> a2 >> a3) || nr != "202") return std::nullopt;
  Registers regs;
  regs.r[15] = 202;
  regs.r[14] = std::stoull(a1, nullptr, 16);
  regs.r[13] = std::stoull(a2, nullptr, 16);
  regs.r[12] = std::stoull(a3, nullptr, 16);
  return regs;
}

}  // namespace

TEST_CASE("prog_locks: every lock's owner and every waiter's lock", "[glibc][live]") {
  namespace fs = std::filesystem;
  const fs::path prog = fs::canonical("/proc/self/exe").parent_path() / "testdata" / "prog_locks";
  if (!fs::exists(prog)) {
    PYHANG_SKIP("not built: " << prog);
  }
  int out[2];
  REQUIRE(pipe(out) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  Child child;
  std::string path = prog.string();
  char* argv[] = {path.data(), nullptr};
  REQUIRE(posix_spawn(&child.pid, path.c_str(), &fa, nullptr, argv, environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);

  // GIVEN: READY within 60 s.
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (text.find("READY\n") == std::string::npos && text.find("FAILED") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 500) <= 0) continue;
    char buf[4096];
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  INFO(text);
  REQUIRE(text.find("READY\n") != std::string::npos);
  std::vector<Record> records;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') records.push_back(parse(line));
  REQUIRE(records.size() >= 11);

  // The waiters' system call registers, read while they sleep: once the
  // process is group-stopped the futex wait is interrupted and
  // /proc/PID/task/TID/syscall no longer shows it.
  std::map<int, std::optional<Registers>> regs_of;
  for (const auto& r : records) regs_of[r.waiter] = syscall_regs(child.pid, r.waiter);

  // WHEN: stopped and opened.
  REQUIRE(kill(child.pid, SIGSTOP) == 0);
  std::shared_ptr<Target> target;
  try {
    target = Target::live(child.pid);
  } catch (const std::exception& e) {
    PYHANG_SKIP("Target::live unavailable: " << e.what());
  }
  auto version = detect_version(target->space());
  INFO(to_string(version.problem().kind) << " " << version.problem().library);
  REQUIRE(version);
  auto row = choose_layouts(*version);
  INFO(to_string(row.issue.kind));
  REQUIRE(row);
  const Layouts* L = row.row;
  MemoryReader& mem = target->memory();

  // THEN
  for (const auto& r : records) {
    INFO(r.lock << " waiter " << r.waiter << " (" << r.waiter_mode << ")");
    LockInfo info;
    if (r.lock.rfind("mutex", 0) == 0) info = decode_mutex(mem, r.address, *L->mutex);
    else if (r.lock.rfind("rwlock", 0) == 0) info = decode_rwlock(mem, r.address, *L->rwlock);
    else if (r.lock == "semaphore") info = decode_semaphore(mem, r.address, *L->sem);
    else if (r.lock == "condvar") info = decode_condvar(mem, r.address, *L->cond);
    if (r.lock != "futex") {
      INFO(names(info.problems));
      CHECK(info.plausible);
      if (r.lock == "rwlock-read-held") {
        CHECK(info.owners.empty());
        CHECK(info.readers == static_cast<std::uint32_t>(r.holders.size()));
      } else {
        CHECK(info.owners == r.holders);
      }
      if (r.lock == "mutex-recursive") CHECK(info.recursion == static_cast<std::uint32_t>(r.count));
      if (r.lock == "semaphore" || r.lock == "condvar") CHECK(info.waiters.value_or(0) >= 1);
    }

    BlockedThread t;
    t.tid = r.waiter;
    t.regs = regs_of[r.waiter];
    REQUIRE(t.regs);
    CHECK(t.regs->rdi() == r.futex);
    auto b = identify_blocked(mem, *L, t);
    INFO(names(b));
    std::string want = r.lock.rfind("mutex", 0) == 0 ? "mutex"
                       : r.lock.rfind("rwlock", 0) == 0 ? "rwlock-" + r.waiter_mode
                                                         : r.lock;
    CHECK(to_string(b.kind) == want);
    CHECK(b.address == r.address);
    if (r.lock != "rwlock-read-held") CHECK(b.owners == r.holders);
    if (r.lock != "futex") CHECK(b.confidence != Confidence::Guess);
  }
}
