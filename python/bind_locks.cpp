// glibc locks and pthread_t → TID, for lock-owner and the report.
//
//   r = LockReader(target)              # or LockReader(target, "2.23") to force a glibc version
//   r.glibc        -> {"version": "2.36", "source": ..., "exact": bool, "layouts": "glibc 2.41+"} | None
//   r.problem      -> str: why locks cannot be decoded ("" when they can)
//   r.decode("mutex"|"rwlock"|"semaphore"|"condvar", address) -> dict | None
//   r.identify(tid, registers, frames, explain=False)  -> dict (see BlockedOn in pyhang/glibc/identify.hpp;
//       "candidates" lists every candidate considered only with explain=True)
//       registers: dict of user_regs_struct names (as Target returns them),
//                  a list of 27 ints, or None
//       frames: [{"pc": int, "function": str|None, "library": str|None,
//                 "rdi": int|None, "rsi": int|None}], frame 0 first
//   r.pthread_tid(pthread_t) -> int | None
#include <algorithm>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {
namespace {

using namespace pyhang::glibc;

py::dict lock_dict(const LockInfo& l) {
  py::dict d;
  d["kind"] = py::str(to_string(l.kind));
  d["address"] = l.address;
  d["layout"] = l.layout;
  d["readable"] = l.readable;
  d["plausible"] = l.plausible;
  d["problem"] = l.problem;
  d["locked"] = opt(l.locked);
  d["owners"] = l.owners;
  d["owner_source"] = l.owner_source;
  d["write_locked"] = opt(l.write_locked);
  d["readers"] = opt(l.readers);
  d["waiters"] = opt(l.waiters);
  d["read_waiters"] = opt(l.read_waiters);
  d["write_waiters"] = opt(l.write_waiters);
  d["recursion"] = opt(l.recursion);
  d["value"] = opt(l.value);
  d["mutex"] = opt(l.mutex);
  py::list flags;
  for (LockFlag f : l.flags) flags.append(py::str(to_string(f)));
  d["flags"] = flags;
  py::dict fields;
  for (const auto& [k, v] : l.fields) fields[py::str(k)] = v;
  d["fields"] = fields;
  return d;
}

py::dict blocked_dict(const BlockedOn& b, bool explain) {
  py::dict d;
  d["kind"] = b.kind == WaitKind::None ? py::object(py::none()) : py::str(to_string(b.kind));
  d["address"] = opt(b.address);
  d["futex"] = opt(b.futex);
  d["futex_op"] = opt(b.futex_op);
  d["futex_value"] = opt(b.futex_value);
  d["restarted"] = b.restarted;
  d["lock"] = b.lock ? py::object(lock_dict(*b.lock)) : py::none();
  d["owners"] = b.owners;
  d["owner_source"] = py::str(to_string(b.owner_source));
  d["confidence"] = py::str(to_string(b.confidence));
  d["evidence"] = b.evidence;
  d["condvar_mutex"] = opt(b.condvar_mutex);
  d["problem"] = b.problem;
  py::list cands;  // every candidate and its score: only when asked (a dozen dicts per thread that only explanations read)
  if (explain)
    for (const auto& c : b.candidates) {
      py::dict cd;
      cd["kind"] = py::str(to_string(c.kind));
      cd["address"] = c.address;
      cd["score"] = c.score;
      cd["reasons"] = c.reasons;
      cands.append(cd);
    }
  d["candidates"] = cands;
  return d;
}

std::optional<Registers> to_registers(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  Registers regs;
  if (py::isinstance<py::dict>(o)) {
    auto d = o.cast<py::dict>();
    for (std::size_t i = 0; i < Registers::kCount; ++i)
      if (d.contains(kRegisterNames[i]) && !d[kRegisterNames[i]].is_none()) {
        // Either signed (-1 for "no system call") or unsigned 64-bit values.
        py::int_ v = d[kRegisterNames[i]];
        regs.r[i] = v < py::int_(0) ? static_cast<std::uint64_t>(v.cast<std::int64_t>()) : v.cast<std::uint64_t>();
      }
    return regs;
  }
  auto v = o.cast<std::vector<std::int64_t>>();
  if (v.size() != Registers::kCount) throw py::value_error("registers: expected 27 values in user_regs_struct order");
  for (std::size_t i = 0; i < Registers::kCount; ++i) regs.r[i] = static_cast<std::uint64_t>(v[i]);
  return regs;
}

std::vector<NativeFrame> to_frames(const py::list& frames) {
  std::vector<NativeFrame> out;
  for (const auto& item : frames) {
    auto d = item.cast<py::dict>();
    NativeFrame f;
    auto get = [&](const char* k) -> py::object { return d.contains(k) ? py::object(d[k]) : py::object(py::none()); };
    if (auto v = get("pc"); !v.is_none()) f.pc = v.cast<Addr>();
    if (auto v = get("function"); !v.is_none()) f.function = v.cast<std::string>();
    if (auto v = get("library"); !v.is_none()) f.library = v.cast<std::string>();
    if (auto v = get("rdi"); !v.is_none()) f.rdi = v.cast<std::uint64_t>();
    if (auto v = get("rsi"); !v.is_none()) f.rsi = v.cast<std::uint64_t>();
    out.push_back(std::move(f));
  }
  return out;
}

// The per-target facts lock decoding needs, found once.
class LockReader {
 public:
  LockReader(std::shared_ptr<Target> target, std::optional<std::string> force_version)
      : target_(std::move(target)), mapper_(*target_) {
    if (force_version) {
      if (auto v = parse_glibc_version(*force_version)) {
        v->source = "given";
        version_ = *v;
      } else {
        version_ = Error(ErrorReason::Unsupported, "not a glibc version: " + *force_version);
      }
    } else {
      version_ = detect_version(target_->space());
    }
    if (version_) {
      auto choice = choose_layouts(*version_);
      if (choice) {
        layouts_ = choice->row;
        // A release newer than the newest checked one: usable, and said (never a problem,
        // which would mark the layouts unknown).
        const auto& seen = target_->warnings();
        std::string w = "locks: " + choice->warning;
        if (!choice->warning.empty() && std::find(seen.begin(), seen.end(), w) == seen.end())
          target_->add_warning(w);
      }
      problem_ = choice.problem();
    } else {
      problem_ = version_.problem();
    }
  }

  py::object glibc() const {
    if (!version_) return py::none();
    py::dict d;
    d["version"] = version_->text;
    d["source"] = version_->source;
    d["exact"] = version_->exact;
    d["layouts"] = layouts_ ? py::object(py::str(std::string(layouts_->name))) : py::none();
    return d;
  }
  const std::string& problem() const { return problem_; }

  py::object decode(const std::string& kind, Addr addr) {
    if (!layouts_) return py::none();
    MemoryReader& mem = target_->memory();
    switch (parse_wait_kind(kind).value_or(WaitKind::None)) {
      case WaitKind::Mutex: return lock_dict(decode_mutex(mem, addr, *layouts_->mutex));
      case WaitKind::Rwlock: return lock_dict(decode_rwlock(mem, addr, *layouts_->rwlock));
      case WaitKind::Semaphore: return lock_dict(decode_semaphore(mem, addr, *layouts_->sem));
      case WaitKind::Condvar: return lock_dict(decode_condvar(mem, addr, *layouts_->cond));
      default: throw py::value_error("kind must be mutex, rwlock, semaphore or condvar");
    }
  }

  py::dict identify(int tid, const py::object& regs, const py::list& frames, bool explain) {
    if (!layouts_) {
      BlockedOn b;
      b.problem = problem_;
      return blocked_dict(b, explain);
    }
    BlockedThread t;
    t.tid = tid;
    t.regs = to_registers(regs);
    t.frames = to_frames(frames);
    return blocked_dict(identify_blocked(target_->memory(), *layouts_, t), explain);
  }

  py::object pthread_tid(Addr pthread) { return opt(mapper_.tid(pthread)); }
  const std::string& pthread_problem() const { return mapper_.problem(); }

 private:
  std::shared_ptr<Target> target_;
  VersionResult version_ = Error(ErrorReason::NotFound, "glibc version not read yet");
  const Layouts* layouts_ = nullptr;
  std::string problem_;
  nptl::PthreadMapper mapper_;
};

}  // namespace

void register_locks(py::module_& m) {
  bind_enum(m, "LockType", kLockTypeNames, "The type of a decoded glibc lock (the 'kind' of lock dicts).");
  bind_enum(m, "LockFlag", kLockFlagNames, "What a glibc lock's bytes say besides owner and counts ('flags').");
  bind_enum(m, "WaitKind", kWaitKindNames, "What a blocked thread waits for in glibc's terms (LockReader.identify()['kind']).");
  m.def("is_glibc_library", [](const std::string& path) { return glibc::is_glibc(path); }, py::arg("path"),
        "Whether a path names one of glibc's own libraries (libc, libpthread, the dynamic loader).");
  py::class_<LockReader>(m, "LockReader")
      .def(py::init<std::shared_ptr<Target>, std::optional<std::string>>(), py::arg("target"),
           py::arg("glibc_version") = py::none(), py::keep_alive<1, 2>(),
           "glibc lock decoding for a target; glibc_version overrides detection (e.g. '2.23').")
      .def_property_readonly("glibc", &LockReader::glibc)
      .def_property_readonly("problem", &LockReader::problem)
      .def_property_readonly("pthread_problem", &LockReader::pthread_problem)
      .def("decode", &LockReader::decode, py::arg("kind"), py::arg("address"))
      .def("identify", &LockReader::identify, py::arg("tid"), py::arg("registers"), py::arg("frames") = py::list(),
           py::arg("explain") = false,
           "What a blocked thread waits for, from frame 0's registers and the top native frames; "
           "explain=True adds every candidate considered with its score and reasons.")
      .def("pthread_tid", &LockReader::pthread_tid, py::arg("pthread"), "pthread_t → TID, or None.");

  m.def(
      "frame_hint", [](const std::string& f) { return std::string(to_string(frame_hint(f))); }, py::arg("function"),
      "The lock family a libc function name suggests, or ''.");
}

}  // namespace pyhang::bindings
