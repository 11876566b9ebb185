// Targets (live, core, callback), their memory and their mapped objects; what about them could not be read
// crosses as the records of pyhang.model.warning_facts (python/records.hpp).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "pyhang/base/confidence.hpp"
#include "pyhang/target/target.hpp"

namespace py = pybind11;

namespace pyhang::bindings {

namespace {

py::dict registers_dict(const Registers& regs) {
  py::dict d;
  for (std::size_t i = 0; i < Registers::kCount; ++i) d[key(kRegisterNames[i])] = regs.r[i];
  return d;
}

}  // namespace

// What about the target could not be read: its kind and what it names.
PYHANG_RECORD(TargetIssue, "pyhang.model.warning_facts", "TargetIssue",
              PYHANG_FIELD(kind), PYHANG_FIELD(path), PYHANG_FIELD(number), PYHANG_FIELD(other), PYHANG_FIELD(text),
              PYHANG_FIELD(other_text))
// A file the target maps, and how far its symbols can be read.
PYHANG_RECORD(LoadedObject, "pyhang.model.target_facts", "MappedObject",
              PYHANG_FIELD(path), PYHANG_FIELD(start), PYHANG_FIELD(end), PYHANG_FIELD(bias),
              PYHANG_FIELD_AS("symbols", v.elf ? v.elf->symbol_count() : 0),
              PYHANG_FIELD_AS("debug_info", v.elf ? v.elf->has_debug_info() : false), PYHANG_FIELD(problem))

void register_target(py::module_& m) {
  bind_enum(m, "TargetKind", kTargetKindNames, "Where a target's memory comes from (Target.kind).");
  bind_enum(m, "TargetProblem", kTargetProblemNames, "What about a target could not be read (Target.warnings' kind).");
  bind_enum(m, "Confidence", kConfidenceNames, "How sure a finding is (the 'confidence' of lock and cycle dicts).");
  bind_enum(m, "OwnerSource", kOwnerSourceNames, "Where a lock's owner came from (the 'owner_source' / 'source' of dicts).");
  bind_enum(m, "ErrorReason", kErrorReasonNames, "Why a target or file could not be opened (ReaderError.reason).");
  // pyhang::Error as _pyhang_native.ReaderError, its reason, path and number
  // as the exception's attributes (render.target.reader_error words them).
  static py::exception<Error> reader_error(m, "ReaderError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object exc = py::handle(reader_error.ptr())(e.what());
      exc.attr("reason") = e.reason();
      exc.attr("path") = e.path();
      exc.attr("number") = e.number();
      PyErr_SetObject(reader_error.ptr(), exc.ptr());
    }
  });

  py::class_<Target, std::shared_ptr<Target>>(m, "Target")
      .def_static("live", &Target::live, py::arg("pid"),
                  "Open a live process (stopped by gdb) through process_vm_readv and /proc/PID/mem.")
      .def_static(
          "core",
          [](const std::string& path, const std::string& executable, const std::string& sysroot,
             const std::vector<std::string>& search_path) {
            return Target::core(path, CoreFileSearch{executable, sysroot, search_path});
          },
          py::arg("path"), py::arg("executable") = "", py::arg("sysroot") = "",
          py::arg("search_path") = std::vector<std::string>{},
          "Open a core file; memory it omits is read from the files of its NT_FILE note, each looked for as "
          "the executable given (for the core's executable), SYSROOT/PATH, DIR/NAME for each search_path "
          "directory, then PATH, the one whose build-id matches the core's first.")
      .def_static(
          "from_callback",
          [](std::function<py::object(Addr, std::size_t)> read, std::vector<std::tuple<Addr, Addr, std::uint64_t, std::string>> maps,
             std::string description) {
            // The callback returns bytes (possibly fewer than asked) or None.
            auto fn = [read](Addr addr, void* buf, std::size_t n) -> std::size_t {
              py::gil_scoped_acquire gil;
              py::object r = read(addr, n);
              if (r.is_none()) return 0;
              std::string b = r.cast<std::string>();
              std::size_t got = std::min(n, b.size());
              std::memcpy(buf, b.data(), got);
              return got;
            };
            std::vector<Mapping> mappings;
            for (auto& [start, end, offset, path] : maps) mappings.push_back({start, end, offset, "", path});
            return Target::from_reader(std::make_shared<CallbackReader>(fn, description), std::move(mappings),
                                       TargetKind::Callback);
          },
          py::arg("read"), py::arg("mappings"), py::arg("description"),
          "A target read through a function of the host, e.g. gdb's inferior.read_memory.")
      .def_property_readonly("kind", [](const Target& t) { return std::string(to_string(t.kind())); })
      .def_property_readonly("pid", &Target::pid)
      .def_property_readonly(
          "parent_pid",
          [](const Target& t) -> py::object {
            if (!t.core_file() || t.core_file()->parent_pid() <= 0) return py::none();
            return py::cast(t.core_file()->parent_pid());
          },
          "A core's parent PID (NT_PRPSINFO pr_ppid); None for other targets or when not recorded.")
      .def_property_readonly(
          "warnings",
          [](const Target& t) { return to_py(t.warnings()); },
          "What about the target could not be read or trusted: [TargetIssue] (kind a TargetProblem), worded by "
          "pyhang.render.")
      .def_property_readonly("executable", &Target::executable)
      .def_property_readonly("description", [](Target& t) { return t.memory().describe(); })
      .def("invalidate", &Target::invalidate, "Forget cached memory (the target ran).")
      .def("batch_pages", [](Target& t) { return t.memory().batch_pages(); },
           "How many pages one prefetch() may bring in and find all still kept when they are used (0: no "
           "bound).")
      .def(
          "prefetch", [](Target& t, const std::vector<Addr>& addresses) { prefetch(t.memory(), addresses); },
          py::arg("addresses"),
          "Read the pages holding the addresses into the cache in one batch (a live target: a few system calls for "
          "a thousand pages), ahead of the reads that need them.")
      .def(
          "read",
          [](Target& t, Addr addr, std::size_t n) -> py::object {
            auto b = t.memory().read_bytes(addr, n);
            if (b.size() < n) return py::none();
            return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
          },
          py::arg("address"), py::arg("size"), "Bytes at address, or None when not all of them can be read.")
      .def(
          "symbolize",
          [](Target& t, const std::vector<Addr>& pcs) {
            py::list out;
            for (Addr pc : pcs) {
              auto s = t.space().symbolize(pc);
              out.append(py::make_tuple(s.function.empty() ? py::object(py::none()) : py::str(s.function),
                                        s.object ? py::object(py::str(s.object->path)) : py::object(py::none()),
                                        s.offset, s.from_debug_file));
            }
            return out;
          },
          py::arg("pcs"), "(function or None, library path or None, offset, named from a separate debug file) for each pc, "
          "from ELF symbols.")
      .def("set_debug_directories", &Target::set_debug_directories, py::arg("directories"),
           "Where separate debug files are (gdb's debug-file-directory): a pc with no symbol in its own "
           "object is named from DIR/.build-id/xx/yyyy.debug when that file's build-id is the object's.")
      .def(
          "symbol_address",
          [](Target& t, const std::string& name) { return t.space().symbol_address(name); }, py::arg("name"))
      .def(
          "objects", [](Target& t) { return to_py(t.space().objects()); },
          "Every file the target maps: [MappedObject] (path, start, end, bias, symbols, debug_info, problem).")
      .def(
          "registers",
          [](Target& t, int tid) -> py::object {
            auto regs = t.registers(tid);
            return regs ? py::object(registers_dict(*regs)) : py::none();
          },
          py::arg("tid"),
          "Frame 0's registers of a thread (user_regs_struct names): from the core, or live when the caller "
          "is the thread's tracer (gdb); None otherwise.")
      .def("core_threads",
           [](Target& t) {
             py::list out;
             if (!t.core_file()) return out;
             for (auto& th : t.core_file()->threads()) out.append(py::make_tuple(th.tid, registers_dict(th.regs)));
             return out;
           })
      .def("stats", [](Target& t) {
        auto& s = t.memory().stats();
        py::dict d;
        d[key("calls")] = s.calls;
        d[key("syscalls")] = s.syscalls;
        d[key("bytes")] = s.bytes;
        d[key("cache_hits")] = s.cache_hits;
        d[key("cache_misses")] = s.cache_misses;
        return d;
      });
}

}  // namespace pyhang::bindings
