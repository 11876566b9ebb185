// Which variable of the program refers to an object (see
// pyhang/cpython/object_names.hpp): module globals, attributes of the
// instances they and the innermost frames' locals refer to.
#include "pyhang/cpython/object_names.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_set>

#include "pyhang/cpython/locals.hpp"
#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::cpython {

namespace {

// Values whose attributes name nothing of the program's own: functions,
// classes, modules (searched as modules), descriptors, built-in values.
constexpr std::array<std::string_view, 24> kNotInstances{
    "type", "module", "function", "builtin_function_or_method", "method", "method_descriptor",
    "wrapper_descriptor", "getset_descriptor", "member_descriptor", "classmethod", "staticmethod", "property",
    "cell", "code", "frame", "NoneType", "bool", "int", "float", "str", "bytes", "tuple", "list", "dict"};

class Search {
 public:
  Search(MemoryReader& memory, const PythonState& state, const std::vector<Addr>& wanted,
         const ObjectNameLimits& limits)
      : memory_(memory), state_(state), objects_(memory, state), limits_(limits) {
    for (Addr a : wanted)
      if (a) left_.insert(a);
  }

  bool done() const { return left_.empty() || !objects_.ok(); }
  std::unordered_map<Addr, ObjectPath> result() { return std::move(out_); }

  // A module's globals: those that are wanted get their name; the rest are returned, for their attributes.
  std::vector<std::pair<Addr, Addr>> globals(const std::string& module, Addr module_object) {
    return globals_of(module, objects_.instance_dict(module_object));
  }

  // The same, from the module's dict.
  std::vector<std::pair<Addr, Addr>> globals_of(const std::string& module, Addr dict) {
    std::vector<std::pair<Addr, Addr>> rest;
    if (!dict) return rest;
    for (auto [key, value] : objects_.dict_items(dict, limits_.globals)) {
      if (!left_.count(value)) {
        rest.emplace_back(key, value);
        continue;
      }
      if (auto name = objects_.str(key)) found(value, ObjectPath{module, *name, "", "", 0, 0, ""});
    }
    return rest;
  }

  // The attributes of `instance` that are wanted, named from `path` (its variable).
  void attributes(Addr instance, const ObjectPath& path) {
    if (done() || instances_ >= limits_.instances || !seen_.insert(instance).second) return;
    auto type = objects_.type_name(instance);
    if (!type || std::find(kNotInstances.begin(), kNotInstances.end(), *type) != kNotInstances.end()) return;
    ++instances_;
    for (auto [key, value] : objects_.attributes(instance, limits_.attributes)) {
      if (!left_.count(value)) continue;
      auto name = objects_.str(key);
      if (!name) continue;
      ObjectPath p = path;
      p.attribute = *name;
      p.owner_type = *type;
      p.owner = instance;
      found(value, std::move(p));
    }
  }

  // A module: its globals, then the attributes of the instances they refer to.
  void module(const std::string& name, Addr module_object) {
    for (auto [key, value] : globals(name, module_object)) {
      if (done()) return;
      auto variable = objects_.str(key);
      if (variable) attributes(value, ObjectPath{name, *variable, "", "", 0, 0, ""});
    }
  }

  // The attributes of the instances the innermost frames' locals refer to.
  void frames() {
    LocalsLimits locals;
    for (const auto& t : state_.threads) {
      for (std::size_t i = 0; i < t.frames.size() && i < limits_.frames && !done(); ++i) {
        for (const auto& local : frame_locals(memory_, state_, t.frames[i], locals).locals)
          attributes(local.value, ObjectPath{"", local.name, "", "", 0, t.native_tid.value_or(0), t.frames[i].function});
      }
    }
  }

  // The modules whose code the innermost frames of the threads run (their
  // f_globals, named by their __name__): a lock a thread waits on in a
  // module's function is most often a global of that module, which
  // sys.modules may list after more modules than limits.modules (a server
  // imports hundreds before the application).
  void frame_modules() {
    LocalsLimits locals;
    locals.names = 0;   // only the frame's globals are wanted
    std::unordered_set<Addr> searched;   // module dicts whose globals were read
    for (const auto& t : state_.threads) {
      for (std::size_t i = 0; i < t.frames.size() && i < limits_.frames && !done(); ++i) {
        Addr dict = frame_locals(memory_, state_, t.frames[i], locals).globals;
        auto name = dict && searched.insert(dict).second ? objects_.str(objects_.dict_get(dict, "__name__"))
                                                         : std::nullopt;
        if (!name) continue;
        for (auto [key, value] : globals_of(*name, dict)) {
          if (done()) return;
          if (auto variable = objects_.str(key)) attributes(value, ObjectPath{*name, *variable, "", "", 0, 0, ""});
        }
      }
    }
  }

  // Every module of sys.modules but `skip`, at most limits.modules.
  void other_modules(const std::string& skip) {
    Addr modules = objects_.sys_modules();
    std::vector<std::pair<std::string, Addr>> found_modules;
    for (auto [key, value] : objects_.dict_items(modules, limits_.modules + 1)) {
      auto name = objects_.str(key);
      if (name && *name != skip) found_modules.emplace_back(*name, value);
    }
    for (const auto& [name, m] : found_modules) {
      if (done()) return;
      globals(name, m);
    }
    for (const auto& [name, m] : found_modules) {
      if (done()) return;
      module(name, m);
    }
  }

  PyObjects& objects() { return objects_; }

 private:
  void found(Addr object, ObjectPath path) {
    if (left_.erase(object)) out_.emplace(object, std::move(path));
  }

  MemoryReader& memory_;
  const PythonState& state_;
  PyObjects objects_;
  ObjectNameLimits limits_;
  std::unordered_set<Addr> left_;
  std::unordered_set<Addr> seen_;
  std::size_t instances_ = 0;
  std::unordered_map<Addr, ObjectPath> out_;
};

bool is_instance(PyObjects& objects, Addr obj, std::string* type = nullptr) {
  auto t = objects.type_name(obj);
  if (!t || std::find(kNotInstances.begin(), kNotInstances.end(), *t) != kNotInstances.end()) return false;
  if (type) *type = *t;
  return true;
}

}  // namespace

ThreadReferences thread_references(MemoryReader& memory, const PythonState& state, const std::vector<Addr>& wanted,
                                   const ReferenceLimits& limits) {
  ThreadReferences out;
  std::unordered_set<Addr> want(wanted.begin(), wanted.end());
  want.erase(0);
  PyObjects objects(memory, state);
  if (want.empty() || !objects.ok()) {
    out.complete = want.empty();
    return out;
  }
  std::unordered_map<Addr, std::vector<Addr>> attributes_of;  // instance → its wanted attribute values
  std::size_t instances = 0;
  auto reached = [&](Addr value) {
    std::vector<Addr> hits;
    if (want.count(value)) hits.push_back(value);
    auto it = attributes_of.find(value);
    if (it == attributes_of.end()) {
      std::vector<Addr> found;
      if (instances < limits.instances && is_instance(objects, value)) {
        ++instances;
        for (auto [key, v] : objects.attributes(value, limits.attributes))
          if (want.count(v)) found.push_back(v);
      } else if (instances >= limits.instances) {
        out.complete = false;
      }
      it = attributes_of.emplace(value, std::move(found)).first;
    }
    hits.insert(hits.end(), it->second.begin(), it->second.end());
    return hits;
  };
  LocalsLimits locals_limits;
  // Frames read a thread: limits.frames, fewer when the threads are many (the reads stay bounded in all).
  std::size_t threads = 0;
  for (const auto& t : state.threads) threads += t.native_tid ? 1 : 0;
  std::size_t per_thread = limits.frames;
  if (threads && limits.total_frames / threads < per_thread)
    per_thread = std::max(limits.least_frames, limits.total_frames / threads);
  for (const auto& t : state.threads) {
    if (!t.native_tid) continue;
    if (t.frames.size() > per_thread || !t.problem.empty()) out.complete = false;
    std::unordered_set<Addr> mine;
    for (std::size_t i = 0; i < t.frames.size() && i < per_thread; ++i) {
      auto locals = frame_locals(memory, state, t.frames[i], locals_limits);
      if (!locals.problem.empty()) out.complete = false;
      // A module's body has its globals for locals: a global is no reference of this thread's own.
      bool module_body = locals.f_locals && locals.f_locals == locals.globals;
      for (const auto& local : locals.locals) {
        if (module_body && local.kind == LocalKind::Dict) continue;
        for (Addr hit : reached(local.value)) mine.insert(hit);
      }
    }
    for (Addr hit : mine) out.by_object[hit].push_back(*t.native_tid);
  }
  return out;
}

std::unordered_map<Addr, ObjectPath> object_names(MemoryReader& memory, const PythonState& state,
                                                  const std::vector<Addr>& wanted, const ObjectNameLimits& limits) {
  Search search(memory, state, wanted, limits);
  if (search.done()) return search.result();
  const std::string main = "__main__";
  Addr main_module = search.objects().module(main);
  // __main__'s globals first, then the instances of the frames, then those of __main__'s globals, then
  // the other modules: the first way found names the object.
  auto rest = main_module ? search.globals(main, main_module) : std::vector<std::pair<Addr, Addr>>{};
  search.frames();
  for (auto [key, value] : rest) {
    if (search.done()) break;
    if (auto variable = search.objects().str(key)) search.attributes(value, ObjectPath{main, *variable, "", "", 0, 0, ""});
  }
  if (!search.done()) search.frame_modules();
  if (!search.done()) search.other_modules(main);
  return search.result();
}

}  // namespace pyhang::cpython
