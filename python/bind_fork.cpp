// Fork facts of a target (pyhang/analysis/fork.hpp), for python/pyhang/forks.py to turn into hazards,
// crossing as the records of pyhang.model.fork_facts (python/records.hpp; the tables below):
//
//   fork_facts(target, own_threads, python, interpreter, containers) -> ForkFacts
//     descriptors: [ThreadDescriptor (start_routine: CodeAddress | None)], descriptor_issue: ForkIssue | None,
//     descriptors_issue: DescriptorsIssue | None, mappings_scanned, internal_locks: [InternalLock],
//     internal_locks_issue: ForkIssue | None, libraries: [path], python: PythonForkFacts | None
//     (containers: [BigContainer], problems: [ReadProblem]); process is left to the caller (None)
//   process_facts(pid, ppid) -> ProcessFacts (mapped, parent_mapped: Landmarks; issue: ForkIssue | None;
//     start_ticks and parent_start_ticks are left to the caller)
//   fork_containers(interpreter) -> ForkContainers
//   python_value(target, module, name, interpreter) -> {kind, type, ...} (a dict)
//   Kinds are their name tables' names (ForkProblem, LockFound).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/analysis/fork.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

// A code address and the symbol the target's objects give it.
struct CodeAddress {
  Target& target;
  Addr address;
};
// A thread descriptor, with the target its start routine is symbolized in.
struct DescriptorOf {
  Target& target;
  const fork::ThreadDescriptor& d;
};
// What fork_facts() reads of a target, as one ForkFacts record.
struct ForkAnswer {
  Target& target;
  const fork::DescriptorScan& scan;
  const fork::InternalLocks& locks;
  py::object python;  // a PythonForkFacts, or None when not asked
};
// fork_containers()'s answer.
struct ContainersAnswer {
  const std::vector<fork::BigContainer>& containers;
  const std::vector<cpython::ReadProblem>& problems;
};

py::object problem_list(const std::vector<cpython::ReadProblem>& problems) {
  py::list out;
  for (const auto& p : problems) out.append(read_problem(p));
  return std::move(out);
}

// What could not be read (a ForkIssue); None when all was.
py::object issue_or_none(const fork::ForkIssue& i);

// The thread's start routine as a CodeAddress, None when it has none.
py::object start_routine(const DescriptorOf& x);

py::object library_of(const CodeAddress& c) {
  auto s = c.target.space().symbolize(c.address);
  return s.object ? py::object(py::str(s.object->path)) : py::object(py::none());
}

std::vector<DescriptorOf> descriptors(const ForkAnswer& f) {
  std::vector<DescriptorOf> out;
  out.reserve(f.scan.descriptors.size());
  for (const auto& d : f.scan.descriptors) out.push_back({f.target, d});
  return out;
}

std::vector<std::string> libraries(Target& t) {
  std::vector<std::string> out;
  for (const auto& o : t.space().objects()) out.push_back(o.path);
  return out;
}

}  // namespace

PYHANG_RECORD(fork::ForkIssue, "pyhang.model.fork_facts", "ForkIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(number), PYHANG_FIELD(other), PYHANG_FIELD(text))
PYHANG_RECORD(CodeAddress, "pyhang.model.fork_facts", "CodeAddress",
              PYHANG_FIELD(address), PYHANG_FIELD_AS("function", text(v.target.space().symbolize(v.address).function)),
              PYHANG_FIELD_AS("library", library_of(v)))
PYHANG_RECORD(DescriptorOf, "pyhang.model.fork_facts", "ThreadDescriptor",
              PYHANG_FIELD_AS("address", v.d.address),
              PYHANG_FIELD_AS("stack", (std::vector<Addr>{v.d.stack_start, v.d.stack_end})),
              PYHANG_FIELD_AS("tid", v.d.tid), PYHANG_FIELD_AS("cancelhandling", v.d.cancelhandling),
              PYHANG_FIELD_AS("exited", v.d.exited), PYHANG_FIELD_AS("start_routine", start_routine(v)))
PYHANG_RECORD(fork::NamedLock, "pyhang.model.fork_facts", "InternalLock",
              PYHANG_FIELD(name), PYHANG_FIELD(address), PYHANG_FIELD(found), PYHANG_FIELD(library))
PYHANG_RECORD(fork::BigContainer, "pyhang.model.fork_facts", "BigContainer",
              PYHANG_FIELD(where), PYHANG_FIELD(type), PYHANG_FIELD(length), PYHANG_FIELD(address),
              PYHANG_FIELD(estimated_bytes))
PYHANG_RECORD(fork::PythonForkFacts, "pyhang.model.fork_facts", "PythonForkFacts",
              PYHANG_FIELD(multiprocessing), PYHANG_FIELD_AS("default_context", text(v.default_context)),
              PYHANG_FIELD_AS("actual_context", text(v.actual_context)),
              PYHANG_FIELD_AS("current_process_type", text(v.current_process_type)),
              PYHANG_FIELD_AS("current_process_name", text(v.current_process_name)), PYHANG_FIELD(parent_pid),
              PYHANG_FIELD(torch), PYHANG_FIELD(cuda_initialized), PYHANG_FIELD(cuda_in_bad_fork),
              PYHANG_FIELD(threading_active), PYHANG_FIELD(containers),
              PYHANG_FIELD_AS("problems", problem_list(v.problems)))
PYHANG_RECORD(fork::ProcessFacts::Landmarks, "pyhang.model.fork_facts", "Landmarks",
              PYHANG_FIELD(exe), PYHANG_FIELD(libc), PYHANG_FIELD(heap))
PYHANG_RECORD(fork::ProcessFacts, "pyhang.model.fork_facts", "ProcessFacts",
              PYHANG_FIELD(pid), PYHANG_FIELD(ppid), PYHANG_FIELD(exe), PYHANG_FIELD(parent_exe), PYHANG_FIELD(cmdline),
              PYHANG_FIELD(parent_cmdline), PYHANG_FIELD(same_address_space), PYHANG_FIELD(mapped),
              PYHANG_FIELD(parent_mapped), PYHANG_FIELD(parent_threads), PYHANG_FIELD(parent_thread_names),
              PYHANG_FIELD_AS("smaps_rollup", py::cast(v.smaps_rollup)),
              PYHANG_FIELD_AS("parent_smaps_rollup", py::cast(v.parent_smaps_rollup)),
              PYHANG_FIELD_AS("issue", issue_or_none(v.problem)))
PYHANG_RECORD(ForkAnswer, "pyhang.model.fork_facts", "ForkFacts",
              PYHANG_FIELD_AS("descriptors", descriptors(v)), PYHANG_FIELD_AS("descriptor_issue", issue_or_none(v.scan.problem)),
              PYHANG_FIELD_AS("descriptors_issue", descriptors_issue(v.scan.descriptors_problem)),
              PYHANG_FIELD_AS("mappings_scanned", v.scan.mappings_scanned), PYHANG_FIELD_AS("internal_locks", v.locks.locks),
              PYHANG_FIELD_AS("internal_locks_issue", issue_or_none(v.locks.problem)),
              PYHANG_FIELD_AS("libraries", libraries(v.target)), PYHANG_FIELD(python))
PYHANG_RECORD(ContainersAnswer, "pyhang.model.fork_facts", "ForkContainers",
              PYHANG_FIELD(containers), PYHANG_FIELD_AS("problems", problem_list(v.problems)))

namespace {

py::object issue_or_none(const fork::ForkIssue& i) { return i ? to_py(i) : py::none(); }

py::object start_routine(const DescriptorOf& x) {
  return x.d.start_routine ? to_py(CodeAddress{x.target, x.d.start_routine}) : py::none();
}

// Everything fork-hazards reads from the target.  `own` are the struct
// pthread addresses (fs_base) of the target's threads.
// The interpreter's state without frames: the given Interpreter's, else read now.
const cpython::PythonState& python_state_of(Target& target, const std::shared_ptr<cpython::Interpreter>& interp,
                                            cpython::PythonState& storage) {
  if (interp) return interp->state();
  cpython::Options opts;
  opts.frames = false;
  storage = cpython::inspect(target, opts);
  return storage;
}

py::object fork_facts(const std::shared_ptr<Target>& target, const std::vector<Addr>& own, bool python,
                      const std::shared_ptr<cpython::Interpreter>& interp, bool containers) {
  auto scan = fork::scan_thread_descriptors(*target, own);
  auto locks = fork::glibc_internal_locks(target->space());
  py::object py_facts = py::none();
  if (python) {
    cpython::PythonState storage;
    const auto& state = python_state_of(*target, interp, storage);
    fork::PythonScanOptions opts;
    opts.containers = containers;
    py_facts = to_py(fork::python_fork_facts(target->memory(), state, opts));
  }
  return to_py(ForkAnswer{*target, scan, locks, std::move(py_facts)});
}

// Python values by module path, for scripts and tests: a model.python_values.ObjectValue.
py::object python_value(const std::shared_ptr<Target>& target, const std::string& module, const std::string& name,
                        const std::shared_ptr<cpython::Interpreter>& interp) {
  cpython::PythonState storage;
  const auto& state = python_state_of(*target, interp, storage);
  cpython::PyObjects objs(target->memory(), state);
  cpython::ReadProblem why;
  Addr a = objs.module_attribute(module, name, &why);
  if (!a) {
    cpython::PyValue none;   // kind unreadable
    none.problem = why.empty() ? objs.problem() : why;
    return object_value(none);
  }
  return object_value(objs, a);
}

}  // namespace

void register_fork(py::module_& m) {
  bind_enum(m, "ValueKind", cpython::kValueKindNames, "What a Python value is (an ObjectValue's kind: python_value(), the values of locals).");
  bind_enum(m, "ForkProblem", fork::kForkProblemNames,
            "What a fork fact could not be read for (fork_facts()'s descriptor_issue and internal_locks_issue, "
            "process_facts()'s issue: a ForkIssue).");
  bind_enum(m, "LockFound", fork::kLockFoundNames,
            "How a glibc-internal lock's address was found (fork_facts().internal_locks[i].found).");
  m.def("fork_facts", &fork_facts, py::arg("target"), py::arg("own_threads"), py::arg("python") = true,
        py::arg("interpreter") = nullptr, py::arg("containers") = true,
        "What a fork child inherited (a ForkFacts record): thread descriptors of threads that did not survive fork, glibc-internal "
        "locks, and Python-side facts (multiprocessing, torch.cuda, and with `containers` the large containers "
        "among module globals).  The /proc facts of a live process are process_facts().");
  m.def(
      "process_facts", [](int pid, int ppid) { return to_py(fork::process_facts(pid, ppid)); },
      py::arg("pid"), py::arg("ppid"),
      "A ProcessFacts record: /proc facts of a live process and its parent `ppid` (which the caller read from /proc/PID/stat with "
      "pyhang.procfs; 0 when not known): executables, command lines, whether the address space is the "
      "parent's and the starts it was decided from (mapped, parent_mapped: {exe, libc, heap}, 0 where not "
      "mapped), the parent's threads, smaps_rollup of both.");
  m.def(
      "fork_containers",
      [](const std::shared_ptr<cpython::Interpreter>& interp) {
        std::vector<cpython::ReadProblem> problems;
        auto found = fork::large_containers(interp->shared_target()->memory(), interp->state(), problems);
        return to_py(ContainersAnswer{found, problems});
      },
      py::arg("interpreter"),
      "A ForkContainers record: the large builtin containers among the globals of every module "
      "(fork_facts().python.containers), and what could not be read.");
  m.def("python_value", &python_value, py::arg("target"), py::arg("module"), py::arg("name"),
        py::arg("interpreter") = nullptr,
        "sys.modules[module].name of the target, decoded: a model.python_values.ObjectValue (kind unreadable, and "
        "its problem, when it could not be found).");
}

}  // namespace pyhang::bindings
