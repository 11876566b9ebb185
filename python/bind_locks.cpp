// glibc locks and pthread_t → TID, for lock-owner and the report.
//
//   r = LockReader(target)              # or LockReader(target, "2.23") to force a glibc version
//   r.glibc        -> {"version": "2.36", "source": ..., "exact": bool, "layouts": "glibc 2.41+"} | None
//   r.problem      -> dict | None: why locks cannot be decoded (a LayoutsIssue: kind and facts)
//   r.caveat       -> dict | None: why the layouts used need a caveat (kind newer-than-checked)
//   r.decode("mutex"|"rwlock"|"semaphore"|"condvar", address) -> dict | None
//   r.identify(tid, registers, frames, explain=False)  -> dict (see BlockedOn in pyhang/glibc/identify.hpp;
//       "candidates" lists every candidate considered only with explain=True; "evidence", "problem" and each
//       lock's "problem" are kinds and numbers, worded by python/pyhang/render/glibc.py)
//       registers: dict of user_regs_struct names (as Target returns them),
//                  a list of 27 ints, or None
//       frames: [{"pc": int, "function": str|None, "library": str|None,
//                 "rdi": int|None, "rsi": int|None}], frame 0 first
//   r.pthread_tid(pthread_t) -> int | None
#include <algorithm>
#include <string_view>
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

py::list issues_list(const std::vector<LockIssue>& issues) {
  py::list out;
  for (const LockIssue& i : issues) {
    py::dict d;
    d[key("kind")] = py::str(to_string(i.kind));
    d[key("fatal")] = i.fatal;
    d[key("value")] = i.value;
    d[key("other")] = i.other;
    out.append(d);
  }
  return out;
}

py::list reasons_list(const std::vector<Reason>& reasons) {
  py::list out;
  for (const Reason& r : reasons) {
    py::dict d;
    d[key("kind")] = py::str(to_string(r.kind));
    d[key("points")] = r.points;
    d[key("hint")] = r.hint == WaitKind::None ? py::object(py::none()) : py::str(to_string(r.hint));
    out.append(d);
  }
  return out;
}

py::dict candidate_dict(const Candidate& c) {
  py::dict d;
  d[key("kind")] = py::str(to_string(c.kind));
  d[key("address")] = c.address;
  d[key("score")] = c.score;
  d[key("layout")] = c.lock.layout;
  d[key("problem")] = issues_list(c.lock.problems);
  d[key("reasons")] = reasons_list(c.reasons);
  return d;
}

// How the kind was decided, or None: the best candidate (candidates[0]) is part of it.
py::object evidence_dict(const BlockedOn& b) {
  if (b.evidence == Evidence::None) return py::none();
  py::dict d;
  d[key("kind")] = py::str(to_string(b.evidence));
  d[key("futex")] = opt(b.futex);
  d[key("futex_op")] = opt(b.futex_op);
  d[key("hint")] = b.hint == WaitKind::None ? py::object(py::none()) : py::str(to_string(b.hint));
  d[key("best")] = b.evidence == Evidence::FutexCall && !b.candidates.empty()
                       ? py::object(candidate_dict(b.candidates.front()))
                       : py::none();
  return d;
}

py::object problem_dict(const BlockedOn& b) {
  if (b.problem == IdentifyProblem::None) return py::none();
  py::dict d;
  d[key("kind")] = py::str(to_string(b.problem));
  d[key("futex")] = opt(b.futex);
  d[key("syscall")] = opt(b.syscall);
  return d;
}

py::dict descriptor_issue_dict(const DescriptorIssue& x) {
  py::dict d;
  d[key("kind")] = py::str(to_string(x.kind));
  d[key("desc")] = std::vector<std::uint32_t>{x.desc.size_bits, x.desc.count, x.desc.offset};
  d[key("value")] = x.value;
  d[key("least")] = x.least;
  d[key("most")] = x.most;
  return d;
}

}  // namespace

py::object descriptors_issue_dict(const nptl::DescriptorsIssue& i) {
  if (!i) return py::none();
  py::dict d;
  d[key("kind")] = py::str(to_string(i.kind));
  d[key("library")] = i.library;
  d[key("tried")] = i.tried;
  d[key("unopened")] = i.unopened;
  d[key("tid")] = i.kind == nptl::DescriptorsProblem::TidNotOneWord ? py::object(descriptor_issue_dict(i.tid))
                                                                     : py::none();
  return d;
}

namespace {

py::object layouts_issue_dict(const LayoutsIssue& i) {
  if (!i) return py::none();
  py::dict d;
  d[key("kind")] = py::str(to_string(i.kind));
  d[key("version")] = i.version;
  d[key("exact")] = i.exact;
  d[key("source")] = i.source;
  d[key("library")] = i.library;
  d[key("detail")] = i.detail;
  d[key("error_number")] = i.error_number;
  d[key("build_id")] = i.build_id;
  d[key("core_build_id")] = i.core_build_id;
  d[key("oldest")] = i.oldest;
  d[key("newest")] = i.newest;
  d[key("open_ended")] = i.open_ended;
  d[key("layouts")] = i.layouts;
  py::list differs;
  for (const DescriptorIssue& x : i.differs) differs.append(descriptor_issue_dict(x));
  d[key("differs")] = differs;
  d[key("missing")] = i.missing;
  return d;
}

py::dict lock_dict(const LockInfo& l) {
  py::dict d;
  d[key("kind")] = py::str(to_string(l.kind));
  d[key("address")] = l.address;
  d[key("layout")] = l.layout;
  d[key("readable")] = l.readable;
  d[key("plausible")] = l.plausible;
  d[key("problem")] = issues_list(l.problems);
  d[key("locked")] = opt(l.locked);
  d[key("owners")] = l.owners;
  d[key("owner_source")] = l.owner_source;
  d[key("write_locked")] = opt(l.write_locked);
  d[key("readers")] = opt(l.readers);
  d[key("waiters")] = opt(l.waiters);
  d[key("read_waiters")] = opt(l.read_waiters);
  d[key("write_waiters")] = opt(l.write_waiters);
  d[key("recursion")] = opt(l.recursion);
  d[key("value")] = opt(l.value);
  d[key("mutex")] = opt(l.mutex);
  py::list flags;
  for (LockFlag f : l.flags) flags.append(py::str(to_string(f)));
  d[key("flags")] = flags;
  py::dict fields;
  for (const auto& [k, v] : l.fields) fields[py::str(k)] = v;
  d[key("fields")] = fields;
  return d;
}

py::dict blocked_dict(const BlockedOn& b, bool explain) {
  py::dict d;
  d[key("kind")] = b.kind == WaitKind::None ? py::object(py::none()) : py::str(to_string(b.kind));
  d[key("address")] = opt(b.address);
  d[key("futex")] = opt(b.futex);
  d[key("futex_op")] = opt(b.futex_op);
  d[key("futex_value")] = opt(b.futex_value);
  d[key("restarted")] = b.restarted;
  d[key("lock")] = b.lock ? py::object(lock_dict(*b.lock)) : py::none();
  d[key("owners")] = b.owners;
  d[key("owner_source")] = py::str(to_string(b.owner_source));
  d[key("confidence")] = py::str(to_string(b.confidence));
  d[key("evidence")] = evidence_dict(b);
  d[key("condvar_mutex")] = opt(b.condvar_mutex);
  d[key("problem")] = problem_dict(b);
  py::list cands;  // every candidate and its score: only when asked (a dozen dicts per thread that only explanations read)
  if (explain)
    for (const auto& c : b.candidates) cands.append(candidate_dict(c));
  d[key("candidates")] = cands;
  return d;
}

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

  py::object glibc() const {
    if (!version_) return py::none();
    py::dict d;
    d[key("version")] = version_->text;
    d[key("source")] = version_->source;
    d[key("exact")] = version_->exact;
    d[key("layouts")] = layouts_ ? py::object(py::str(std::string(layouts_->name))) : py::none();
    return d;
  }
  py::object problem() const { return layouts_issue_dict(problem_); }
  py::object caveat() const { return layouts_issue_dict(caveat_); }

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
      b.problem = IdentifyProblem::LayoutsUnknown;
      return blocked_dict(b, explain);
    }
    BlockedThread t;
    t.tid = tid;
    t.regs = to_registers(regs);
    t.frames = to_frames(frames);
    return blocked_dict(identify_blocked(target_->memory(), *layouts_, t), explain);
  }

  py::object pthread_tid(Addr pthread) { return opt(mapper_.tid(pthread)); }
  py::object pthread_problem() const { return descriptors_issue_dict(mapper_.problem()); }

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
      .def("pthread_tid", &LockReader::pthread_tid, py::arg("pthread"), "pthread_t → TID, or None.");

  m.def(
      "frame_hint", [](const std::string& f) { return std::string(to_string(frame_hint(f))); }, py::arg("function"),
      "The lock family a libc function name suggests, or ''.");
}

}  // namespace pyhang::bindings
