// Python objects on synthetic CPython memory images (support/cpython_image.hpp):
// ints, bools, floats, lists, sets, dicts of any keys, modules, instances whose
// attributes live in an instance dict or (3.11+) a managed dict, and a
// PythonState whose main interpreter holds a given sys.modules.  Laid out
// with the generated tables and the hand-written object table, for every
// version.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cpython/layouts/objects.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "support/cpython_image.hpp"

namespace pyhang::cpython::testing {

struct Objects {
  // Where an instance with tp_dictoffset keeps its dict pointer (as a
  // module's md_dict).
  static constexpr std::int64_t kDictOffset = 16;
  // tp_basicsize of a managed_type(): a bare PyObject header.
  static constexpr std::int64_t kManagedBasicSize = 16;
  // DICT_KEYS_SPLIT of pycore_dict.h (3.11+): the keys a type shares.
  static constexpr std::uint8_t kDictKeysSplit = 2;

  const Layout& l;
  const ObjectLayout& ol;
  Image img;
  Addr int_type, bool_type, float_type, list_type, dict_type, module_type, none_type, set_type, frozenset_type;
  Addr tuple_type;
  Addr none;  // the None object

  explicit Objects(int minor) : l(layout(minor)), ol(*object_layout_for(3, minor)), img(l) {
    int_type = img.type("int", static_cast<std::uint64_t>(l.tpflags_long_subclass));
    bool_type = img.type("bool", static_cast<std::uint64_t>(l.tpflags_long_subclass));
    float_type = img.type("float", 0);
    list_type = img.type("list", static_cast<std::uint64_t>(l.tpflags_list_subclass));
    dict_type = img.type("dict", static_cast<std::uint64_t>(l.tpflags_dict_subclass));
    module_type = type_with_dict("module");
    none_type = img.type("NoneType", 0);
    none = object(none_type);
    set_type = img.type("set", 0);
    frozenset_type = img.type("frozenset", 0);
    tuple_type = img.type("tuple", static_cast<std::uint64_t>(l.tpflags_tuple_subclass));
  }

  // A type whose instances keep their attributes in a dict at kDictOffset.
  Addr type_with_dict(const std::string& name) {
    Addr t = img.type(name, 0);
    img.put<std::int64_t>(t, l.type_dictoffset, kDictOffset);
    return t;
  }
  // A bare instance of `type`.
  Addr object(Addr type) {
    Addr o = img.alloc(32);
    img.put<Addr>(o, l.object_ob_type, type);
    return o;
  }

  Addr integer(std::int64_t v, Addr type = 0) {
    std::uint64_t m = v < 0 ? static_cast<std::uint64_t>(-v) : static_cast<std::uint64_t>(v);
    std::vector<std::uint32_t> digits;
    while (m) {
      digits.push_back(static_cast<std::uint32_t>(m & ((1u << l.long_shift) - 1)));
      m >>= l.long_shift;
    }
    Addr o = img.alloc(static_cast<std::size_t>(l.long_digits) + 4 * (digits.size() + 1));
    img.put<Addr>(o, l.object_ob_type, type ? type : int_type);
    auto n = static_cast<std::int64_t>(digits.size());
    if (l.has(l.long_lv_tag)) {
      std::uint64_t sign = v == 0 ? 1 : v < 0 ? 2 : 0;
      img.put<std::uint64_t>(o, l.long_lv_tag, (static_cast<std::uint64_t>(n) << l.long_non_size_bits) | sign);
    } else {
      img.put<std::int64_t>(o, l.var_ob_size, v < 0 ? -n : n);
    }
    for (std::size_t i = 0; i < digits.size(); ++i) img.put<std::uint32_t>(o, l.long_digits + 4 * i, digits[i]);
    return o;
  }
  Addr boolean(bool v) { return integer(v ? 1 : 0, bool_type); }
  Addr real(double v) {
    Addr o = img.alloc(32);
    img.put<Addr>(o, l.object_ob_type, float_type);
    img.put<double>(o, l.float_ob_fval, v);
    return o;
  }
  Addr list(const std::vector<Addr>& items) {
    Addr storage = img.alloc(8 * items.size() + 8);
    for (std::size_t i = 0; i < items.size(); ++i) img.put<Addr>(storage, 8 * i, items[i]);
    Addr o = img.alloc(64);
    img.put<Addr>(o, l.object_ob_type, list_type);
    img.put<std::int64_t>(o, l.var_ob_size, static_cast<std::int64_t>(items.size()));
    img.put<Addr>(o, l.list_ob_item, storage);
    return o;
  }

  Addr tuple(const std::vector<Addr>& items) {
    Addr o = img.alloc(static_cast<std::size_t>(l.tuple_ob_item) + 8 * items.size());
    img.put<Addr>(o, l.object_ob_type, tuple_type);
    img.put<std::int64_t>(o, l.var_ob_size, static_cast<std::int64_t>(items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) img.put<Addr>(o, l.tuple_ob_item + 8 * i, items[i]);
    return o;
  }
  // A tuple of str: a code object's variable names.
  Addr names(const std::vector<std::string>& ns) {
    std::vector<Addr> items;
    for (const auto& n : ns) items.push_back(img.str(n));
    return tuple(items);
  }

  // A set whose table has 8 slots, the keys in the first ones.
  Addr set(const std::vector<Addr>& keys, bool frozen = false) {
    if (keys.size() > 5) throw std::runtime_error("test set too large");
    Addr table = img.alloc(static_cast<std::size_t>(8 * l.setentry_size));
    for (std::size_t i = 0; i < keys.size(); ++i) img.put<Addr>(table + i * l.setentry_size, l.setentry_key, keys[i]);
    Addr o = img.alloc(static_cast<std::size_t>(l.set_table) + 64);
    img.put<Addr>(o, l.object_ob_type, frozen ? frozenset_type : set_type);
    img.put<std::int64_t>(o, l.set_used, static_cast<std::int64_t>(keys.size()));
    img.put<std::int64_t>(o, l.set_fill, static_cast<std::int64_t>(keys.size()));
    img.put<std::int64_t>(o, l.set_mask, 7);
    img.put<Addr>(o, l.set_table, table);
    return o;
  }

  // A combined dict of any keys (at most 85 entries: one-byte indices);
  // its object at `at` when given (img.alloc(64): a dict that holds itself).
  Addr dict_of(const std::vector<std::pair<Addr, Addr>>& items, Addr at = 0) {
    if (items.size() > 85) throw std::runtime_error("test dict too large");
    std::int64_t log2 = 4;  // room for up to 10 entries, more when needed
    while ((std::int64_t{2} << log2) / 3 < static_cast<std::int64_t>(items.size())) ++log2;
    const std::int64_t size = std::int64_t{1} << log2;
    std::int64_t esize = l.has(l.dictentry_size) ? l.dictentry_size : ol.entry_size;
    std::int64_t ekey = l.has(l.dictentry_key) ? l.dictentry_key : ol.entry_key;
    std::int64_t evalue = l.has(l.dictentry_value) ? l.dictentry_value : ol.entry_value;
    Addr keys = img.alloc(static_cast<std::size_t>(64 + size + static_cast<std::int64_t>(items.size()) * esize));
    Addr entries;
    if (l.has(l.dictkeys_nentries)) {
      img.put<std::uint8_t>(keys, l.dictkeys_log2_size, static_cast<std::uint8_t>(log2));
      img.put<std::uint8_t>(keys, l.dictkeys_log2_index_bytes, static_cast<std::uint8_t>(log2));
      img.put<std::uint8_t>(keys, l.dictkeys_kind, static_cast<std::uint8_t>(l.dictkeys_kind_general));
      img.put<std::int64_t>(keys, l.dictkeys_nentries, static_cast<std::int64_t>(items.size()));
      entries = keys + l.dictkeys_indices + size;
    } else {
      img.put<std::int64_t>(keys, ol.dk_size, size);
      img.put<std::int64_t>(keys, ol.dk_nentries, static_cast<std::int64_t>(items.size()));
      entries = keys + ol.dk_indices + size;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      img.put<Addr>(entries + i * esize, ekey, items[i].first);
      img.put<Addr>(entries + i * esize, evalue, items[i].second);
    }
    Addr d = at ? at : img.alloc(64);
    img.put<Addr>(d, l.object_ob_type, dict_type);
    img.put<std::int64_t>(d, l.dict_ma_used, static_cast<std::int64_t>(items.size()));
    img.put<Addr>(d, l.dict_ma_keys, keys);
    img.put<Addr>(d, l.dict_ma_values, 0);
    return d;
  }
  // Where a dict_of() dict counts its entries (dk_nentries).
  Addr dict_nentries(Addr d) const {
    Addr keys = img.get<Addr>(d, l.dict_ma_keys);
    return keys + (l.has(l.dictkeys_nentries) ? l.dictkeys_nentries : ol.dk_nentries);
  }
  // A combined dict of str keys.
  Addr dict(const std::vector<std::pair<std::string, Addr>>& items) {
    std::vector<std::pair<Addr, Addr>> pairs;
    for (const auto& [name, value] : items) pairs.emplace_back(img.str(name), value);
    return dict_of(pairs);
  }

  // An instance of a type_with_dict() type whose instance dict holds `attrs`.
  Addr instance(Addr type, const std::vector<std::pair<std::string, Addr>>& attrs) {
    Addr o = img.alloc(static_cast<std::size_t>(kDictOffset) + 8);
    img.put<Addr>(o, l.object_ob_type, type);
    img.put<Addr>(o, kDictOffset, dict(attrs));
    return o;
  }

  // 3.11+: a heap type whose instances keep their attributes in a managed
  // dict (Py_TPFLAGS_MANAGED_DICT; 3.13: and inline values after the
  // object's tp_basicsize bytes).
  Addr managed_type(const std::string& name) {
    auto flags = static_cast<std::uint64_t>(l.tpflags_managed_dict);
    if (l.has(l.tpflags_inline_values)) flags |= static_cast<std::uint64_t>(l.tpflags_inline_values);
    Addr t = img.type(name, flags, static_cast<std::size_t>(l.heaptype_cached_keys) + 8);
    img.put<std::int64_t>(t, l.type_basicsize, kManagedBasicSize);
    return t;
  }
  // An instance of a managed_type() whose attributes are `attrs`: values in
  // the order of the type's shared keys (made from the first instance's
  // names; later instances must use the same names in the same order), or
  // with `materialised`, a dict object (as after obj.__dict__ is used).
  Addr managed_instance(Addr type, const std::vector<std::pair<std::string, Addr>>& attrs, bool materialised = false) {
    Addr keys = img.get<Addr>(type, l.heaptype_cached_keys);
    if (!keys) img.put<Addr>(type, l.heaptype_cached_keys, keys = split_keys(attrs));
    if (img.get<std::int64_t>(keys, l.dictkeys_nentries) != static_cast<std::int64_t>(attrs.size()))
      throw std::runtime_error("managed instance: other attributes than its type's keys");
    const std::int64_t n = static_cast<std::int64_t>(attrs.size());
    const std::int64_t pre = -std::min(ol.managed_dict_ptr, ol.managed_values_ptr);  // the pre-header words
    Addr base = img.alloc(static_cast<std::size_t>(pre + kManagedBasicSize + l.dictvalues_values + 8 * n + 8));
    Addr obj = base + static_cast<Addr>(pre);
    img.put<Addr>(obj, l.object_ob_type, type);
    Addr dict_slot = obj + static_cast<Addr>(ol.managed_dict_ptr);
    if (materialised) {
      img.put<Addr>(dict_slot, 0, dict(attrs));  // 3.13: the inline values stay invalid (zero)
      return obj;
    }
    Addr values = ol.managed_dict == ManagedDict::InlineValues ? obj + kManagedBasicSize : img.alloc(8 * n + 16);
    for (std::int64_t i = 0; i < n; ++i) img.put<Addr>(values, l.dictvalues_values + 8 * i, attrs[i].second);
    switch (ol.managed_dict) {
      case ManagedDict::ValuesAndDict: img.put<Addr>(obj + static_cast<Addr>(ol.managed_values_ptr), 0, values); break;
      case ManagedDict::TaggedDictOrValues: img.put<Addr>(dict_slot, 0, values - 1); break;  // tagged: bit 0
      case ManagedDict::InlineValues: img.put<std::uint8_t>(values, l.dictvalues_valid, 1); break;
      case ManagedDict::None: throw std::runtime_error("no managed dicts before 3.11");
    }
    return obj;
  }

  Addr module(Addr globals) {
    Addr m = img.alloc(64);
    img.put<Addr>(m, l.object_ob_type, module_type);
    img.put<Addr>(m, kDictOffset, globals);
    return m;
  }
  // The split keys a managed type shares among its instances (str keys in
  // unicode entries; their values live in each instance).
  Addr split_keys(const std::vector<std::pair<std::string, Addr>>& attrs) {
    const std::int64_t log2 = 4, size = std::int64_t{1} << log2;
    if (attrs.size() > 10) throw std::runtime_error("test split keys too large");
    Addr keys = img.alloc(static_cast<std::size_t>(l.dictkeys_indices + size + l.dictuentry_size * size));
    img.put<std::uint8_t>(keys, l.dictkeys_log2_size, static_cast<std::uint8_t>(log2));
    img.put<std::uint8_t>(keys, l.dictkeys_log2_index_bytes, static_cast<std::uint8_t>(log2));
    img.put<std::uint8_t>(keys, l.dictkeys_kind, kDictKeysSplit);
    img.put<std::int64_t>(keys, l.dictkeys_nentries, static_cast<std::int64_t>(attrs.size()));
    Addr entries = keys + l.dictkeys_indices + size;
    for (std::size_t i = 0; i < attrs.size(); ++i)
      img.put<Addr>(entries + i * l.dictuentry_size, l.dictuentry_key, img.str(attrs[i].first));
    return keys;
  }

  // One PyMemberDef of a type's tp_members table.
  struct MemberDef {
    Addr name;             // its C string
    std::int32_t kind;     // T_INT, T_LONG, T_OBJECT_EX, ... (structmember.h)
    std::int64_t offset;
  };
  // `type`'s tp_members: a table of `members`, ended by a zeroed entry, and its tp_base `base` (0: none).
  void member_table(Addr type, const std::vector<MemberDef>& members, Addr base) {
    Addr defs = img.alloc(static_cast<std::size_t>(l.memberdef_size) * (members.size() + 1));
    for (std::size_t i = 0; i < members.size(); ++i) {
      Addr d = defs + i * static_cast<Addr>(l.memberdef_size);
      img.put<Addr>(d, l.memberdef_name, members[i].name);
      img.put<std::int32_t>(d, l.memberdef_type, members[i].kind);
      img.put<std::int64_t>(d, l.memberdef_offset, members[i].offset);
    }
    img.put<Addr>(type, l.type_tp_members, defs);
    img.put<Addr>(type, l.type_tp_base, base);
  }

  // A state whose main interpreter's sys.modules is `modules`.
  // A frame whose code has no fast locals and whose f_locals is `f_locals` (a module body's when it is also
  // `globals`, else a class body's).
  PyFrame namespace_frame(const std::string& name, Addr f_locals, Addr globals) {
    bool old = l.frame_model == FrameModel::FrameObject;
    Addr code = img.code(name, "/app.py", 1, {});
    if (old) {
      img.put<Addr>(code, l.code_varnames, tuple({}));
      img.put<Addr>(code, l.code_cellvars, tuple({}));
      img.put<Addr>(code, l.code_freevars, tuple({}));
    } else {
      img.put<Addr>(code, l.code_localsplusnames, tuple({}));
      img.put<Addr>(code, l.code_localspluskinds, img.bytes({}));
    }
    Addr frame = img.alloc(static_cast<std::size_t>(old ? l.frame_size : l.iframe_size) + 8);
    img.put<Addr>(frame, old ? l.frame_code : l.iframe_code, code);
    img.put<Addr>(frame, old ? l.frame_f_locals : l.iframe_f_locals, f_locals);
    img.put<Addr>(frame, old ? l.frame_f_globals : l.iframe_f_globals, globals);
    PyFrame f;
    f.frame = frame;
    f.code = code;
    return f;
  }

  PythonState state(Addr modules) {
    Addr interp = img.alloc(static_cast<std::size_t>(l.interp_modules) + 8);
    img.put<Addr>(interp, l.interp_modules, modules);
    PythonState st;
    st.status = Status::Ok;
    st.major = 3;
    st.minor = l.minor;
    PyThreadInfo t;
    t.interp = interp;
    st.threads.push_back(t);
    return st;
  }
};

}  // namespace pyhang::cpython::testing
