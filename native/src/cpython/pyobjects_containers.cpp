// Containers and names of the target's Python objects (see
// pyhang/cpython/pyobjects.hpp): dict tables (combined and split), tuples
// and lists, set tables, instance attributes, sys.modules and module globals.

#include "cpython/member_defs.hpp"
#include "cpython/pyobjects_impl.hpp"

namespace pyhang::cpython {

std::vector<std::pair<Addr, Addr>> PyObjects::dict_items(Addr dict, std::size_t max, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return {};
  }
  return impl_->dict_items(dict, max, problem);
}

Addr PyObjects::dict_get(Addr dict, std::string_view key, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return 0;
  }
  return impl_->dict_get(dict, key, problem);
}

std::vector<Addr> PyObjects::sequence_items(Addr obj, std::size_t max, ReadProblem* problem) {
  std::vector<Addr> out;
  if (!ok()) {
    set(problem, impl_->problem);
    return out;
  }
  const Layout& l = impl_->layout;
  auto flags = plausible_pointer(obj) ? impl_->objects->type_flags(obj) : std::nullopt;
  bool list = flag(flags, l.tpflags_list_subclass), tuple = flag(flags, l.tpflags_tuple_subclass);
  if (!list && !tuple) {
    set(problem, unread(ReadPart::Sequence, obj, ReadWhy::NotA));
    return out;
  }
  auto n = impl_->length(obj, problem);
  if (!n) return out;
  Addr items = obj + static_cast<Addr>(l.tuple_ob_item);
  if (list) {
    items = impl_->mem.read_pointer(obj + l.list_ob_item).value_or(0);
    if (*n > 0 && !plausible_pointer(items)) {
      auto p = unread_field(ReadPart::List, obj, "ob_item", ReadWhy::Implausible);
      p.path.back().address = items;
      set(problem, std::move(p));
      return out;
    }
  }
  auto count = static_cast<std::size_t>(std::min<std::int64_t>(*n, static_cast<std::int64_t>(
                                                                      std::min(max, impl_->limits.max_entries))));
  out.resize(count);
  std::size_t got = count ? impl_->mem.read_partial(items, out.data(), count * 8) / 8 : 0;
  if (got < count) {
    set(problem, unread(ReadPart::Items, obj, ReadWhy::PartlyUnreadable));
    out.resize(got);
  }
  return out;
}

std::vector<Addr> PyObjects::set_items(Addr obj, std::size_t max, ReadProblem* problem) {
  std::vector<Addr> out;
  if (!ok()) {
    set(problem, impl_->problem);
    return out;
  }
  const Layout& l = impl_->layout;
  auto name = plausible_pointer(obj) ? impl_->objects->type_name(obj) : std::nullopt;
  if (!name || (*name != "set" && *name != "frozenset")) {
    set(problem, unread(ReadPart::Set, obj, ReadWhy::NotA));
    return out;
  }
  RemoteStruct s;
  if (!s.load(impl_->mem, obj, span_of({l.set_used, l.set_mask, l.set_table}))) {
    set(problem, unread(ReadPart::Set, obj));
    return out;
  }
  auto mask = s.get<std::int64_t>(l.set_mask).value_or(-1);
  Addr table = s.ptr(l.set_table);
  // The table has mask + 1 slots, a power of two.
  if (mask < 0 || mask >= (std::int64_t{1} << 24) || ((mask + 1) & mask) != 0 || !plausible_pointer(table) ||
      l.setentry_size <= 0) {
    set(problem, unread_named(ReadPart::Set, obj, ReadWhy::Implausible, "table"));
    return out;
  }
  auto slots = static_cast<std::size_t>(mask + 1);
  std::vector<std::uint8_t> bytes(slots * static_cast<std::size_t>(l.setentry_size));
  std::size_t got = impl_->mem.read_partial(table, bytes.data(), bytes.size());
  std::size_t limit = std::min(max, impl_->limits.max_entries);
  for (std::size_t i = 0; (i + 1) * static_cast<std::size_t>(l.setentry_size) <= got && out.size() < limit; ++i) {
    Addr key = 0;
    std::memcpy(&key, bytes.data() + i * static_cast<std::size_t>(l.setentry_size) + l.setentry_key, sizeof key);
    // Empty slots are NULL; deleted ones point at the dummy key, whose type is no user type.
    if (plausible_pointer(key) && impl_->objects->type_name(key).value_or("") != "<dummy key> type") out.push_back(key);
  }
  if (got < bytes.size()) set(problem, unread(ReadPart::Set, obj, ReadWhy::PartlyUnreadable));
  return out;
}

Addr PyObjects::attribute(Addr obj, std::string_view name, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return 0;
  }
  return impl_->attribute(obj, name, problem);
}

std::vector<std::pair<Addr, Addr>> PyObjects::attributes(Addr obj, std::size_t max, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return {};
  }
  return impl_->attributes(obj, max, problem);
}

std::optional<std::vector<std::pair<Addr, Addr>>> PyObjects::instance_attributes(Addr obj, std::size_t max,
                                                                                 ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return std::vector<std::pair<Addr, Addr>>{};
  }
  return impl_->instance_attributes(obj, max, problem);
}

using detail::kMaxBases;
using detail::kMaxMembers;

std::vector<std::pair<std::string, Addr>> PyObjects::slots(Addr obj, std::size_t max, ReadProblem* problem) {
  std::vector<std::pair<std::string, Addr>> out;
  if (!ok()) {
    set(problem, impl_->problem);
    return out;
  }
  const Layout& l = impl_->layout;
  MemoryReader& mem = impl_->mem;
  if (!l.has(l.type_tp_members) || !l.has(l.type_tp_base) || !l.has(l.tpflags_heaptype) || l.memberdef_size <= 0)
    return out;
  // The heap types from obj's class up: a built-in base declares no __slots__.
  std::vector<Addr> members;
  Addr type = plausible_pointer(obj) ? mem.read_pointer(obj + l.object_ob_type).value_or(0) : 0;
  for (int depth = 0; plausible_pointer(type) && depth < kMaxBases; ++depth) {
    RemoteStruct t;
    if (!t.load(mem, type, span_of({l.type_tp_flags, l.type_tp_members, l.type_tp_base}))) {
      set(problem, unread(ReadPart::Type, obj));
      break;
    }
    if (!(t.get<std::uint64_t>(l.type_tp_flags).value_or(0) & static_cast<std::uint64_t>(l.tpflags_heaptype))) break;
    members.push_back(t.ptr(l.type_tp_members));
    type = t.ptr(l.type_tp_base);
  }
  for (auto it = members.rbegin(); it != members.rend() && out.size() < max; ++it) {
    if (!plausible_pointer(*it)) continue;
    for (const auto& d : detail::member_defs(mem, l, *it, kMaxMembers)) {
      if (out.size() >= max) break;
      if (d.kind != l.t_object_ex || d.offset <= 0 || d.offset > 4096 || !plausible_pointer(d.name)) continue;
      auto text = mem.read_cstring(d.name, 256);
      Addr value = mem.read_pointer(obj + static_cast<Addr>(d.offset)).value_or(0);
      if (text && value) out.emplace_back(*text, value);  // a slot never assigned is NULL
    }
  }
  return out;
}

Addr PyObjects::instance_dict(Addr obj, ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return 0;
  }
  const Layout& l = impl_->layout;
  auto type = plausible_pointer(obj) ? impl_->mem.read_pointer(obj + l.object_ob_type) : std::nullopt;
  RemoteStruct t;
  if (!type || !plausible_pointer(*type) || !t.load(impl_->mem, *type, span_of({l.type_tp_flags, l.type_dictoffset}))) {
    set(problem, unread(ReadPart::Type, obj));
    return 0;
  }
  std::uint64_t flags = t.get<std::uint64_t>(l.type_tp_flags).value_or(0);
  Addr d = 0;
  if (l.has(l.tpflags_managed_dict) && (flags & static_cast<std::uint64_t>(l.tpflags_managed_dict))) {
    Addr w = impl_->mem.read_pointer(obj + impl_->ol->managed_dict_ptr).value_or(0);
    d = (w & 1) ? 0 : w;  // 3.12 tags a values pointer with bit 0
  } else {
    auto off = t.get<std::int64_t>(l.type_dictoffset);
    if (off && *off > 0 && *off <= 4096) d = impl_->mem.read_pointer(obj + static_cast<Addr>(*off)).value_or(0);
  }
  if (!impl_->is_dict(d)) {
    set(problem, unread_named(ReadPart::Object, obj, ReadWhy::NoInstanceDict, {}, 1));
    return 0;
  }
  return d;
}

Addr PyObjects::sys_modules(ReadProblem* problem) {
  if (!ok()) {
    set(problem, impl_->problem);
    return 0;
  }
  const Layout& l = impl_->layout;
  if (!impl_->main_interp || !l.has(l.interp_modules)) {
    set(problem, unread(ReadPart::SysModules, 0, ReadWhy::NotFound));
    return 0;
  }
  Addr m = impl_->mem.read_pointer(impl_->main_interp + l.interp_modules).value_or(0);
  if (!impl_->is_dict(m)) {
    set(problem, unread(ReadPart::Dict, m, ReadWhy::NotA).within(ReadPart::SysModules, impl_->main_interp));
    return 0;
  }
  return m;
}

Addr PyObjects::module(std::string_view name, ReadProblem* problem) {
  Addr modules = sys_modules(problem);
  if (!modules) return 0;
  Addr m = impl_->dict_get(modules, name, nullptr);
  if (!m) set(problem, unread_named(ReadPart::Module, 0, ReadWhy::NotImported, std::string(name)));
  return m;
}

Addr PyObjects::module_attribute(std::string_view module_name, std::string_view name, ReadProblem* problem) {
  Addr m = module(module_name, problem);
  if (!m) return 0;
  ReadProblem why;
  Addr v = impl_->attribute(m, name, &why);
  if (!v) set(problem, std::move(why.within(ReadPart::Attribute, 0, std::string(module_name) + "." + std::string(name))));
  return v;
}

}  // namespace pyhang::cpython
