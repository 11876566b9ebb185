// Fork facts of a target (pyhang/analysis/fork.hpp) as plain Python dicts, for
// python/pyhang/forks.py to turn into hazards.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "pyhang/analysis/fork.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/cpython/interpreter.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {


py::list problem_list(const std::vector<cpython::ReadProblem>& problems) {
  py::list out;
  for (const auto& p : problems) out.append(read_problem(p));
  return out;
}

py::dict symbol_dict(Target& t, Addr pc) {
  py::dict d;
  d["address"] = pc;
  auto s = t.space().symbolize(pc);
  d["function"] = text(s.function);
  d["library"] = s.object ? py::object(py::str(s.object->path)) : py::object(py::none());
  return d;
}

py::list containers_list(const std::vector<fork::BigContainer>& containers) {
  py::list cs;
  for (const auto& c : containers) {
    py::dict x;
    x["where"] = c.where;
    x["type"] = c.type;
    x["length"] = c.length;
    x["address"] = c.address;
    x["estimated_bytes"] = c.estimated_bytes;
    cs.append(x);
  }
  return cs;
}

py::dict python_dict(const fork::PythonForkFacts& f) {
  py::dict d;
  d["multiprocessing"] = f.multiprocessing;
  d["default_context"] = text(f.default_context);
  d["actual_context"] = text(f.actual_context);
  d["current_process_type"] = text(f.current_process_type);
  d["current_process_name"] = text(f.current_process_name);
  d["parent_pid"] = opt(f.parent_pid);
  d["torch"] = f.torch;
  d["cuda_initialized"] = opt(f.cuda_initialized);
  d["cuda_in_bad_fork"] = opt(f.cuda_in_bad_fork);
  d["threading_active"] = opt(f.threading_active);
  d["containers"] = containers_list(f.containers);
  d["problems"] = problem_list(f.problems);
  return d;
}

// {kind, number, other, text} of what could not be read; None when all was.
py::object issue_dict(const fork::ForkIssue& i) {
  if (!i) return py::none();
  py::dict d;
  d["kind"] = std::string(to_string(i.kind));
  d["number"] = i.number;
  d["other"] = i.other;
  d["text"] = i.text;
  return d;
}

py::dict process_dict(const fork::ProcessFacts& p) {
  py::dict d;
  d["pid"] = p.pid;
  d["ppid"] = p.ppid;
  d["exe"] = p.exe;
  d["parent_exe"] = p.parent_exe;
  d["cmdline"] = p.cmdline;
  d["parent_cmdline"] = p.parent_cmdline;
  d["same_address_space"] = p.same_address_space;
  auto landmarks = [](const fork::ProcessFacts::Landmarks& l) {
    py::dict m;
    m["exe"] = l.exe;
    m["libc"] = l.libc;
    m["heap"] = l.heap;
    return m;
  };
  d["mapped"] = landmarks(p.mapped);
  d["parent_mapped"] = landmarks(p.parent_mapped);
  d["parent_threads"] = p.parent_threads;
  d["parent_thread_names"] = p.parent_thread_names;
  d["smaps_rollup"] = p.smaps_rollup;
  d["parent_smaps_rollup"] = p.parent_smaps_rollup;
  d["issue"] = issue_dict(p.problem);
  return d;
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

py::dict fork_facts(const std::shared_ptr<Target>& target, const std::vector<Addr>& own, bool python,
                    const std::shared_ptr<cpython::Interpreter>& interp, bool containers) {
  py::dict d;
  auto scan = fork::scan_thread_descriptors(*target, own);
  py::list descs;
  for (const auto& x : scan.descriptors) {
    py::dict e;
    e["address"] = x.address;
    e["stack"] = py::make_tuple(x.stack_start, x.stack_end);
    e["tid"] = x.tid;
    e["cancelhandling"] = opt(x.cancelhandling);
    e["exited"] = x.exited;
    e["start_routine"] = x.start_routine ? py::object(symbol_dict(*target, x.start_routine)) : py::object(py::none());
    descs.append(e);
  }
  d["descriptors"] = descs;
  d["descriptor_issue"] = issue_dict(scan.problem);
  d["descriptors_issue"] = descriptors_issue(scan.descriptors_problem);
  d["mappings_scanned"] = scan.mappings_scanned;
  auto locks = fork::glibc_internal_locks(target->space());
  py::list ls;
  for (const auto& l : locks.locks) {
    py::dict e;
    e["name"] = l.name;
    e["address"] = l.address;
    e["found"] = std::string(to_string(l.found));
    e["library"] = l.library;
    ls.append(e);
  }
  d["internal_locks"] = ls;
  d["internal_locks_issue"] = issue_dict(locks.problem);
  py::list libs;
  for (const auto& o : target->space().objects()) libs.append(o.path);
  d["libraries"] = libs;
  if (python) {
    cpython::PythonState storage;
    const auto& state = python_state_of(*target, interp, storage);
    fork::PythonScanOptions opts;
    opts.containers = containers;
    d["python"] = python_dict(fork::python_fork_facts(target->memory(), state, opts));
  } else {
    d["python"] = py::none();
  }
  return d;
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
  bind_enum(m, "ValueKind", cpython::kValueKindNames, "What a Python value is (python_value()['kind']).");
  bind_enum(m, "ForkProblem", fork::kForkProblemNames,
            "What a fork fact could not be read for (fork_facts()'s descriptor_issue and internal_locks_issue, "
            "process_facts()'s issue: {kind, number, other, text}).");
  bind_enum(m, "LockFound", fork::kLockFoundNames,
            "How a glibc-internal lock's address was found (fork_facts()['internal_locks'][i]['found']).");
  m.def("fork_facts", &fork_facts, py::arg("target"), py::arg("own_threads"), py::arg("python") = true,
        py::arg("interpreter") = nullptr, py::arg("containers") = true,
        "What a fork child inherited: thread descriptors of threads that did not survive fork, glibc-internal "
        "locks, and Python-side facts (multiprocessing, torch.cuda, and with `containers` the large containers "
        "among module globals).  The /proc facts of a live process are process_facts().");
  m.def(
      "process_facts", [](int pid, int ppid) { return process_dict(fork::process_facts(pid, ppid)); },
      py::arg("pid"), py::arg("ppid"),
      "/proc facts of a live process and its parent `ppid` (which the caller read from /proc/PID/stat with "
      "pyhang.procfs; 0 when not known): executables, command lines, whether the address space is the "
      "parent's and the starts it was decided from (mapped, parent_mapped: {exe, libc, heap}, 0 where not "
      "mapped), the parent's threads, smaps_rollup of both.");
  m.def(
      "fork_containers",
      [](const std::shared_ptr<cpython::Interpreter>& interp) {
        std::vector<cpython::ReadProblem> problems;
        auto found = fork::large_containers(interp->shared_target()->memory(), interp->state(), problems);
        py::dict d;
        d["containers"] = containers_list(found);
        d["problems"] = problem_list(problems);
        return d;
      },
      py::arg("interpreter"),
      "The large builtin containers among the globals of every module (fork_facts()['python']['containers']), "
      "and what could not be read: {containers, problems}.");
  m.def("python_value", &python_value, py::arg("target"), py::arg("module"), py::arg("name"),
        py::arg("interpreter") = nullptr,
        "sys.modules[module].name of the target, decoded: a model.python_values.ObjectValue (kind unreadable, and "
        "its problem, when it could not be found).");
}

}  // namespace pyhang::bindings
