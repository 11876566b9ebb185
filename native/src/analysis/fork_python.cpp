// Python-side fork facts read from the target's own module objects (see
// pyhang/analysis/fork.hpp), through the Python object reader.
#include <algorithm>

#include "pyhang/analysis/fork.hpp"
#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::fork {

namespace {

using cpython::ValueKind;

bool container_kind(ValueKind kind) {
  return kind == ValueKind::List || kind == ValueKind::Dict || kind == ValueKind::Set || kind == ValueKind::Frozenset ||
         kind == ValueKind::Tuple;
}

// The container's own bytes plus its first-level items, from a sample.
std::int64_t estimate_bytes(cpython::PyObjects& objs, const cpython::PyValue& v, std::size_t sample) {
  std::int64_t n = v.length.value_or(0);
  std::int64_t own = objs.basic_size(v.address).value_or(0) + n * 8;  // the item pointers (or hash slots)
  std::vector<Addr> items;
  if (v.kind == ValueKind::List || v.kind == ValueKind::Tuple) {
    items = objs.sequence_items(v.address, sample);
  } else if (v.kind == ValueKind::Dict) {
    own = objs.basic_size(v.address).value_or(0) + n * 32;  // index + entry per item, roughly
    for (auto [k, val] : objs.dict_items(v.address, sample)) {
      items.push_back(k);
      items.push_back(val);
    }
  }
  if (items.empty()) return own;
  std::int64_t total = 0, counted = 0;
  for (Addr a : items) {
    auto b = objs.basic_size(a);
    if (!b) continue;
    auto item = objs.value(a);
    std::int64_t extra = 0;
    if (item.kind == ValueKind::Str && item.length) extra = *item.length;
    total += *b + extra;
    ++counted;
  }
  if (!counted) return own;
  double per_item = static_cast<double>(total) / counted * (v.kind == ValueKind::Dict ? 2 : 1);
  return own + static_cast<std::int64_t>(per_item * static_cast<double>(n));
}

}  // namespace

namespace {

std::vector<BigContainer> containers_in(cpython::PyObjects& objs, Addr modules, const PythonScanOptions& opts) {
  std::vector<BigContainer> out;
  auto mods = objs.dict_items(modules, opts.max_modules);
  std::vector<Addr> seen;  // a container bound under several names is listed once
  for (auto [key, module] : mods) {
    auto mname = objs.str(key);
    if (!mname || objs.type_name(module).value_or("") != "module") continue;
    Addr globals = objs.instance_dict(module);
    if (!globals) continue;
    for (auto [gk, gv] : objs.dict_items(globals, opts.max_globals)) {
      auto length = objs.length(gv);
      if (!length || *length < opts.min_length) continue;
      auto v = objs.value(gv);
      if (!container_kind(v.kind) || std::find(seen.begin(), seen.end(), gv) != seen.end()) continue;
      seen.push_back(gv);
      BigContainer c;
      c.where = *mname + "." + objs.str(gk).value_or("?");
      c.type = v.type;
      c.length = *length;
      c.address = gv;
      c.estimated_bytes = estimate_bytes(objs, v, opts.sample);
      out.push_back(std::move(c));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const BigContainer& a, const BigContainer& b) { return a.estimated_bytes > b.estimated_bytes; });
  return out;
}

}  // namespace

PythonForkFacts python_fork_facts(MemoryReader& memory, const cpython::PythonState& state,
                                  const PythonScanOptions& opts) {
  PythonForkFacts f;
  if (state.status != cpython::Status::Ok && state.status != cpython::Status::Finalizing) {
    f.problems.push_back(cpython::no_python_state(to_string(state.status)));
    return f;
  }
  cpython::PyObjects objs(memory, state);
  if (!objs.ok()) {
    f.problems.push_back(objs.problem());
    return f;
  }
  cpython::ReadProblem why;
  Addr modules = objs.sys_modules(&why);
  if (!modules) {
    f.problems.push_back(why);
    return f;
  }

  // multiprocessing: the default context and the current process object.
  if (Addr ctx = objs.module_attribute("multiprocessing.context", "_default_context", &why)) {
    f.multiprocessing = true;
    if (Addr d = objs.attribute(ctx, "_default_context")) f.default_context = objs.type_name(d).value_or("");
    cpython::ReadProblem w2;
    Addr actual = objs.attribute(ctx, "_actual_context", &w2);
    auto at = actual ? objs.type_name(actual) : std::nullopt;
    if (at && *at != "NoneType") f.actual_context = *at;
    if (!actual)
      f.problems.push_back(w2.within(cpython::ReadPart::Attribute, ctx, "multiprocessing.context._default_context._actual_context"));
  }
  if (Addr cur = objs.module_attribute("multiprocessing.process", "_current_process", nullptr)) {
    f.multiprocessing = true;
    f.current_process_type = objs.type_name(cur).value_or("");
    if (Addr name = objs.attribute(cur, "_name")) f.current_process_name = objs.str(name).value_or("");
    if (Addr ppid = objs.attribute(cur, "_parent_pid")) f.parent_pid = objs.integer(ppid);
  }

  // torch.cuda's own record of CUDA initialisation (torch/cuda/__init__.py).
  if (objs.module("torch.cuda", nullptr)) {
    f.torch = true;
    auto flag = [&](const char* name) -> std::optional<bool> {
      Addr v = objs.module_attribute("torch.cuda", name, nullptr);
      if (!v) return std::nullopt;
      auto value = objs.value(v);
      return value.boolean;
    };
    f.cuda_initialized = flag("_initialized");
    f.cuda_in_bad_fork = flag("_in_bad_fork");
  }

  if (Addr active = objs.module_attribute("threading", "_active", nullptr)) f.threading_active = objs.length(active);

  if (opts.containers) f.containers = containers_in(objs, modules, opts);
  return f;
}

std::vector<BigContainer> large_containers(MemoryReader& memory, const cpython::PythonState& state,
                                           std::vector<cpython::ReadProblem>& problems,
                                           const PythonScanOptions& opts) {
  if (state.status != cpython::Status::Ok && state.status != cpython::Status::Finalizing) return {};
  cpython::PyObjects objs(memory, state);
  if (!objs.ok()) {
    problems.push_back(objs.problem());
    return {};
  }
  cpython::ReadProblem why;
  Addr modules = objs.sys_modules(&why);
  if (!modules) {
    problems.push_back(why);
    return {};
  }
  return containers_in(objs, modules, opts);
}

}  // namespace pyhang::fork
