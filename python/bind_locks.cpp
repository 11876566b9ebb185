// glibc locks and pthread_t → TID, for lock-owner and the report.  What it finds crosses as the records of
// pyhang.model.waits (python/records.hpp; the tables below):
//
//   r = LockReader(target)              # or LockReader(target, "2.23") to force a glibc version
//   r.glibc        -> GlibcRelease | None: the release found and the layouts chosen for it
//   r.problem      -> LayoutsIssue | None: why locks cannot be decoded
//   r.caveat       -> LayoutsIssue | None: why the layouts used need a caveat (kind newer-than-checked)
//   r.decode("mutex"|"rwlock"|"semaphore"|"condvar", address) -> GlibcLock | None
//   r.identify(tid, registers, frames, explain=False)  -> LockIdentification (see BlockedOn in
//       pyhang/glibc/identify.hpp; `candidates` lists every candidate considered only with explain=True;
//       evidence, problem and each lock's problem are kinds and numbers, worded by python/pyhang/render/glibc.py)
//       registers: dict of user_regs_struct names (as Target returns them),
//                  a list of 27 ints, or None
//       frames: [{"pc": int, "function": str|None, "library": str|None,
//                 "rdi": int|None, "rsi": int|None}], frame 0 first
//   r.pthread_tid(pthread_t) -> int | None
//   r.pthread_problem -> DescriptorsIssue | None
#include <algorithm>
#include <string_view>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/glibc/identify.hpp"
#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/glibc/version.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

using namespace pyhang::glibc;

namespace {

// The parts of one BlockedOn that are records of their own, and the whole of it as the collector asks.
// How the kind was decided: the best candidate (candidates[0]) is part of it.
struct HowIdentified {
  const BlockedOn& b;
};
struct IdentifyFailure {
  const BlockedOn& b;
};
struct LockIdentification {
  const BlockedOn& b;
  bool explain;  // every candidate considered, with its score: only when asked (a dozen records per thread)
};

// The release LockReader found, with the name of the layouts it chose.
struct GlibcRelease {
  const GlibcVersion& version;
  const Layouts* layouts;
};

}  // namespace

PYHANG_RECORD(LockIssue, "pyhang.model.waits", "LockIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(fatal), PYHANG_FIELD(value), PYHANG_FIELD(other))
PYHANG_RECORD(Reason, "pyhang.model.waits", "Reason",
              PYHANG_FIELD(kind), PYHANG_FIELD(points), PYHANG_FIELD_AS("hint", name_or_none(v.hint, WaitKind::None)))
PYHANG_RECORD(Candidate, "pyhang.model.waits", "Candidate",
              PYHANG_FIELD(kind), PYHANG_FIELD(address), PYHANG_FIELD(score), PYHANG_FIELD_AS("layout", v.lock.layout),
              PYHANG_FIELD_AS("problem", v.lock.problems), PYHANG_FIELD(reasons))
PYHANG_RECORD(HowIdentified, "pyhang.model.waits", "HowIdentified",
              PYHANG_FIELD_AS("kind", v.b.evidence), PYHANG_FIELD_AS("futex", v.b.futex),
              PYHANG_FIELD_AS("futex_op", v.b.futex_op),
              PYHANG_FIELD_AS("hint", name_or_none(v.b.hint, WaitKind::None)),
              PYHANG_FIELD_AS("best", v.b.evidence == Evidence::FutexCall && !v.b.candidates.empty()
                                          ? to_py(v.b.candidates.front())
                                          : py::none()))
PYHANG_RECORD(IdentifyFailure, "pyhang.model.waits", "IdentifyFailure",
              PYHANG_FIELD_AS("kind", v.b.problem), PYHANG_FIELD_AS("futex", v.b.futex),
              PYHANG_FIELD_AS("syscall", v.b.syscall))
PYHANG_RECORD(DescriptorIssue, "pyhang.model.waits", "DescriptorIssue",
              PYHANG_FIELD(kind),
              PYHANG_FIELD_AS("desc", (std::vector<std::uint32_t>{v.desc.size_bits, v.desc.count, v.desc.offset})),
              PYHANG_FIELD(value), PYHANG_FIELD(least), PYHANG_FIELD(most))
PYHANG_RECORD(nptl::DescriptorsIssue, "pyhang.model.waits", "DescriptorsIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(library), PYHANG_FIELD(tried), PYHANG_FIELD(unopened),
              PYHANG_FIELD_AS("tid", v.kind == nptl::DescriptorsProblem::TidNotOneWord ? to_py(v.tid) : py::none()))
PYHANG_RECORD(LayoutsIssue, "pyhang.model.waits", "LayoutsIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(version), PYHANG_FIELD(exact), PYHANG_FIELD(source),
              PYHANG_FIELD(library), PYHANG_FIELD(detail), PYHANG_FIELD(error_number), PYHANG_FIELD(build_id),
              PYHANG_FIELD(core_build_id), PYHANG_FIELD(oldest), PYHANG_FIELD(newest), PYHANG_FIELD(open_ended),
              PYHANG_FIELD(layouts), PYHANG_FIELD(differs), PYHANG_FIELD(missing))
PYHANG_RECORD(LockInfo, "pyhang.model.waits", "GlibcLock",
              PYHANG_FIELD(kind), PYHANG_FIELD(address), PYHANG_FIELD(layout), PYHANG_FIELD(readable),
              PYHANG_FIELD(plausible), PYHANG_FIELD_AS("problem", v.problems), PYHANG_FIELD(locked),
              PYHANG_FIELD(owners), PYHANG_FIELD(owner_source), PYHANG_FIELD(write_locked), PYHANG_FIELD(readers),
              PYHANG_FIELD(waiters), PYHANG_FIELD(read_waiters), PYHANG_FIELD(write_waiters),
              PYHANG_FIELD(recursion), PYHANG_FIELD(value), PYHANG_FIELD(mutex), PYHANG_FIELD(flags),
              PYHANG_FIELD_AS("fields", as_dict(v.fields)))
PYHANG_RECORD(LockIdentification, "pyhang.model.waits", "LockIdentification",
              PYHANG_FIELD_AS("kind", name_or_none(v.b.kind, WaitKind::None)), PYHANG_FIELD_AS("address", v.b.address),
              PYHANG_FIELD_AS("futex", v.b.futex), PYHANG_FIELD_AS("futex_op", v.b.futex_op),
              PYHANG_FIELD_AS("futex_value", v.b.futex_value), PYHANG_FIELD_AS("restarted", v.b.restarted),
              PYHANG_FIELD_AS("lock", v.b.lock), PYHANG_FIELD_AS("owners", v.b.owners),
              PYHANG_FIELD_AS("owner_source", v.b.owner_source), PYHANG_FIELD_AS("confidence", v.b.confidence),
              PYHANG_FIELD_AS("evidence", v.b.evidence == Evidence::None ? py::none() : to_py(HowIdentified{v.b})), PYHANG_FIELD_AS("condvar_mutex", v.b.condvar_mutex),
              PYHANG_FIELD_AS("problem", v.b.problem == IdentifyProblem::None ? py::none() : to_py(IdentifyFailure{v.b})),
              PYHANG_FIELD_AS("candidates", v.explain ? to_py(v.b.candidates) : py::list()))
PYHANG_RECORD(GlibcRelease, "pyhang.model.waits", "GlibcRelease",
              PYHANG_FIELD_AS("version", v.version.text), PYHANG_FIELD_AS("source", v.version.source),
              PYHANG_FIELD_AS("exact", v.version.exact),
              PYHANG_FIELD_AS("layouts", v.layouts ? to_py(v.layouts->name) : py::none()))

py::object descriptors_issue(const nptl::DescriptorsIssue& i) { return i ? to_py(i) : py::none(); }

namespace {

py::object layouts_issue(const LayoutsIssue& i) { return i ? to_py(i) : py::none(); }

// A register's or a frame field's value: signed (-1 for "no system call") or unsigned 64-bit.
std::uint64_t to_u64(PyObject* value) {
  py::int_ v = py::reinterpret_borrow<py::object>(value);
  unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
  if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return static_cast<std::uint64_t>(v.cast<std::int64_t>());
  }
  return u;
}

// The index of register `name` in user_regs_struct order, or kCount.
std::size_t register_index(std::string_view name) {
  for (std::size_t i = 0; i < Registers::kCount; ++i)
    if (name == kRegisterNames[i]) return i;
  return Registers::kCount;
}

std::optional<Registers> to_registers(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  Registers regs;
  if (PyDict_Check(o.ptr())) {
    // Only the registers the dict holds (a live thread's record gives a few of the 27).
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o.ptr(), &pos, &key, &value)) {
      if (value == Py_None || !PyUnicode_Check(key)) continue;
      Py_ssize_t len = 0;
      const char* name = PyUnicode_AsUTF8AndSize(key, &len);
      if (name == nullptr) throw py::error_already_set();
      std::size_t i = register_index(std::string_view(name, static_cast<std::size_t>(len)));
      if (i < Registers::kCount) regs.r[i] = to_u64(value);
    }
    return regs;
  }
  auto v = o.cast<std::vector<std::int64_t>>();
  if (v.size() != Registers::kCount) throw py::value_error("registers: expected 27 values in user_regs_struct order");
  for (std::size_t i = 0; i < Registers::kCount; ++i) regs.r[i] = static_cast<std::uint64_t>(v[i]);
  return regs;
}

// A frame's field `key`, or nullptr when absent or None (borrowed).
PyObject* field(PyObject* frame, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(frame, key);
  if (v == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return v == Py_None ? nullptr : v;
}

std::vector<NativeFrame> to_frames(const py::list& frames) {
  // The keys, made once (never freed: they live as long as the module).
  static PyObject* const kPc = PyUnicode_InternFromString("pc");
  static PyObject* const kFunction = PyUnicode_InternFromString("function");
  static PyObject* const kLibrary = PyUnicode_InternFromString("library");
  static PyObject* const kRdi = PyUnicode_InternFromString("rdi");
  static PyObject* const kRsi = PyUnicode_InternFromString("rsi");
  std::vector<NativeFrame> out;
  out.reserve(frames.size());
  for (const auto& item : frames) {
    auto d = item.cast<py::dict>();
    NativeFrame f;
    if (PyObject* v = field(d.ptr(), kPc)) f.pc = py::reinterpret_borrow<py::object>(v).cast<Addr>();
    if (PyObject* v = field(d.ptr(), kFunction)) f.function = py::reinterpret_borrow<py::object>(v).cast<std::string>();
    if (PyObject* v = field(d.ptr(), kLibrary)) f.library = py::reinterpret_borrow<py::object>(v).cast<std::string>();
    if (PyObject* v = field(d.ptr(), kRdi)) f.rdi = py::reinterpret_borrow<py::object>(v).cast<std::uint64_t>();
    if (PyObject* v = field(d.ptr(), kRsi)) f.rsi = py::reinterpret_borrow<py::object>(v).cast<std::uint64_t>();
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
        LayoutsIssue why;
        why.kind = LayoutsProblem::NotAVersion;
        why.version = *force_version;
        version_ = why;
      }
    } else {
      version_ = detect_version(target_->space());
    }
    if (version_) {
      LayoutChoice choice = choose_layouts(*version_);
      layouts_ = choice.row;
      // A release newer than the newest checked one: usable, with a caveat (never a problem,
      // which would mark the layouts unknown).
      if (choice) caveat_ = choice.issue;
      else problem_ = choice.issue;
    } else {
      problem_ = version_.problem();
    }
  }

  py::object glibc() const { return version_ ? to_py(GlibcRelease{*version_, layouts_}) : py::none(); }
  py::object problem() const { return layouts_issue(problem_); }
  py::object caveat() const { return layouts_issue(caveat_); }

  py::object decode(const std::string& kind, Addr addr) {
    if (!layouts_) return py::none();
    MemoryReader& mem = target_->memory();
    switch (parse_wait_kind(kind).value_or(WaitKind::None)) {
      case WaitKind::Mutex: return to_py(decode_mutex(mem, addr, *layouts_->mutex));
      case WaitKind::Rwlock: return to_py(decode_rwlock(mem, addr, *layouts_->rwlock));
      case WaitKind::Semaphore: return to_py(decode_semaphore(mem, addr, *layouts_->sem));
      case WaitKind::Condvar: return to_py(decode_condvar(mem, addr, *layouts_->cond));
      default: throw py::value_error("kind must be mutex, rwlock, semaphore or condvar");
    }
  }

  py::object identify(int tid, const py::object& regs, const py::list& frames, bool explain) {
    if (!layouts_) {
      BlockedOn b;
      b.problem = IdentifyProblem::LayoutsUnknown;
      return to_py(LockIdentification{b, explain});
    }
    BlockedThread t;
    t.tid = tid;
    t.regs = to_registers(regs);
    t.frames = to_frames(frames);
    return to_py(LockIdentification{identify_blocked(target_->memory(), *layouts_, t), explain});
  }

  // identify() of each (tid, registers, frames), in runs whose pages (each thread's futex word, the top of
  // its stack) are read in one batch first: a thousand blocked threads are a few system calls.
  py::list identify_all(const py::list& asked, bool explain) {
    std::vector<BlockedThread> threads;
    threads.reserve(asked.size());
    for (const auto& item : asked) {
      auto t = item.cast<py::sequence>();
      if (t.size() != 3) throw py::value_error("identify_all: each item is (tid, registers, frames)");
      BlockedThread b;
      b.tid = t[0].cast<int>();
      b.regs = to_registers(t[1]);
      b.frames = to_frames(t[2].cast<py::list>());
      threads.push_back(std::move(b));
    }
    py::list out;
    if (!layouts_) {
      BlockedOn b;
      b.problem = IdentifyProblem::LayoutsUnknown;
      for (std::size_t i = 0; i < threads.size(); ++i) out.append(to_py(LockIdentification{b, explain}));
      return out;
    }
    py::gil_scoped_release nogil;
    in_prefetched_runs(
        target_->memory(), threads.size(),
        [&](std::size_t i, std::vector<Addr>& pages) {
          if (!threads[i].regs) return;
          pages.push_back(threads[i].regs->rdi());
          pages.push_back(threads[i].regs->rsp());
        },
        [&](std::size_t i) {
          BlockedOn b = identify_blocked(target_->memory(), *layouts_, threads[i]);
          py::gil_scoped_acquire gil;  // each answer a record at once: none of them is held natively
          out.append(to_py(LockIdentification{b, explain}));
        });
    return out;
  }

  py::object pthread_tid(Addr pthread) { return opt(mapper_.tid(pthread)); }
  py::object pthread_problem() const { return descriptors_issue(mapper_.problem()); }

 private:
  std::shared_ptr<Target> target_;
  VersionResult version_ = LayoutsIssue{LayoutsProblem::NotRead};
  const Layouts* layouts_ = nullptr;
  LayoutsIssue problem_, caveat_;
  nptl::PthreadMapper mapper_;
};

}  // namespace

void register_locks(py::module_& m) {
  bind_enum(m, "LockType", kLockTypeNames, "The type of a decoded glibc lock (the 'kind' of lock dicts).");
  bind_enum(m, "LockFlag", kLockFlagNames, "What a glibc lock's bytes say besides owner and counts ('flags').");
  bind_enum(m, "WaitKind", kWaitKindNames, "What a blocked thread waits for in glibc's terms (LockReader.identify()['kind']).");
  bind_enum(m, "LockProblem", kLockProblemNames, "What is odd about a glibc lock's bytes (lock dicts' 'problem' kinds).");
  bind_enum(m, "ScoreReason", kScoreReasonNames,
            "Why a lock candidate gained or lost points (LockReader.identify() candidates' 'reasons' kinds).");
  bind_enum(m, "LockEvidence", kEvidenceNames, "How LockReader.identify() decided what a thread waits for ('evidence' kind).");
  bind_enum(m, "LayoutsProblem", kLayoutsProblemNames,
            "Why glibc's lock layouts cannot be used, or need a caveat (LockReader.problem / caveat 'kind').");
  bind_enum(m, "DescriptorsProblem", nptl::kDescriptorsProblemNames,
            "Why pthread_t cannot be mapped to TIDs (LockReader.pthread_problem, fork_facts()' 'descriptors_issue').");
  bind_enum(m, "DescriptorCheck", kDescriptorCheckNames,
            "A libthread_db descriptor that contradicts the decoders' assumptions (a LayoutsIssue's 'differs').");
  bind_enum(m, "IdentifyProblem", kIdentifyProblemNames,
            "Why LockReader.identify() identified nothing ('problem' kind).");
  m.def("is_glibc_library", [](const std::string& path) { return glibc::is_glibc(path); }, py::arg("path"),
        "Whether a path names one of glibc's own libraries (libc, libpthread, the dynamic loader).");
  py::class_<LockReader>(m, "LockReader")
      .def(py::init<std::shared_ptr<Target>, std::optional<std::string>>(), py::arg("target"),
           py::arg("glibc_version") = py::none(), py::keep_alive<1, 2>(),
           "glibc lock decoding for a target; glibc_version overrides detection (e.g. '2.23').")
      .def_property_readonly("glibc", &LockReader::glibc)
      .def_property_readonly("problem", &LockReader::problem,
                             "Why glibc's lock layouts cannot be used (a dict: kind, version, library, ...), or None.")
      .def_property_readonly("caveat", &LockReader::caveat,
                             "Why the lock layouts used need a caveat (kind newer-than-checked), or None.")
      .def_property_readonly("pthread_problem", &LockReader::pthread_problem,
                             "Why pthread_t cannot be mapped to TIDs (a dict: kind, library, tried, ...), or None.")
      .def("decode", &LockReader::decode, py::arg("kind"), py::arg("address"))
      .def("identify", &LockReader::identify, py::arg("tid"), py::arg("registers"), py::arg("frames") = py::list(),
           py::arg("explain") = false,
           "What a blocked thread waits for, from frame 0's registers and the top native frames; "
           "explain=True adds every candidate considered with its score and reasons.")
      .def("identify_all", &LockReader::identify_all, py::arg("threads"), py::arg("explain") = false,
           "[identify(tid, registers, frames, explain) of each (tid, registers, frames)]: the memory each reads "
           "first read in a few batches.")
      .def("pthread_tid", &LockReader::pthread_tid, py::arg("pthread"), "pthread_t → TID, or None.");

  m.def(
      "frame_hint", [](const std::string& f) { return std::string(to_string(frame_hint(f))); }, py::arg("function"),
      "The lock family a libc function name suggests, or ''.");
}

}  // namespace pyhang::bindings
