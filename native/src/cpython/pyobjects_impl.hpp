// The state behind PyObjects (pyhang/cpython/pyobjects.hpp), shared by the
// files that implement it: pyobjects.cpp (kinds, numbers, strings, values)
// and pyobjects_containers.cpp (dicts, sequences, sets, attributes, modules).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "cpython/internal.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::cpython {

namespace pyobjects_detail {

using detail::plausible_pointer;
using detail::RemoteStruct;
using detail::span_of;

inline bool flag(std::optional<std::uint64_t> flags, std::int64_t bit) {
  return flags && bit > 0 && (*flags & static_cast<std::uint64_t>(bit));
}

inline void set(ReadProblem* out, ReadProblem why) {
  if (out) *out = std::move(why);
}

}  // namespace pyobjects_detail

// Only the two files implementing PyObjects include this header.
using namespace pyobjects_detail;

struct PyObjects::Impl {
  Impl(MemoryReader& m, const PythonState& state, const ObjectLimits& lim) : mem(m), limits(lim) {
    auto l = detail::layout_of(mem, state);
    ol = object_layout_for(state.major, state.minor);
    if (!l || !ol) {
      problem.path.push_back({ReadPart::Object, 0, {}, 0});
      problem.why = ReadWhy::NoLayout;
      problem.name = state.version;
      return;
    }
    layout = *l;
    options.max_string = lim.max_string;
    objects.emplace(mem, layout, options);
    for (const auto& t : state.threads)
      if (t.interp_id == 0 && plausible_pointer(t.interp)) {
        main_interp = t.interp;
        break;
      }
    if (!main_interp && state.runtime && layout.has(layout.runtime_interpreters_main))
      main_interp = mem.read_pointer(state.runtime + layout.runtime_interpreters_main).value_or(0);
  }

  MemoryReader& mem;
  ObjectLimits limits;
  Layout layout;
  const ObjectLayout* ol = nullptr;
  Options options;
  std::optional<detail::ObjectReader> objects;
  Addr main_interp = 0;
  ReadProblem problem;

  // Where the entries of a keys object are and how to read them.
  struct KeysView {
    Addr entries = 0;
    std::int64_t nentries = 0, entry_size = 0, key = 0, value = 0;
  };

  std::optional<KeysView> keys_view(Addr keys, ReadProblem* why) {
    const Layout& l = layout;
    KeysView v;
    if (!plausible_pointer(keys)) {
      set(why, unread(ReadPart::DictKeys, keys, ReadWhy::Implausible));
      return std::nullopt;
    }
    RemoteStruct k;
    if (l.has(l.dictkeys_nentries)) {  // the headers describe the keys object (3.11+)
      if (!k.load(mem, keys, span_of({l.dictkeys_log2_size, l.dictkeys_log2_index_bytes, l.dictkeys_kind,
                                      l.dictkeys_nentries}))) {
        set(why, unread(ReadPart::DictKeys, keys));
        return std::nullopt;
      }
      auto log2_size = k.get<std::uint8_t>(l.dictkeys_log2_size).value_or(255);
      auto log2_index = k.get<std::uint8_t>(l.dictkeys_log2_index_bytes).value_or(255);
      auto kind = k.get<std::uint8_t>(l.dictkeys_kind).value_or(255);
      v.nentries = k.get<std::int64_t>(l.dictkeys_nentries).value_or(-1);
      if (log2_size > 30 || log2_index > 33 || log2_index < log2_size) {
        set(why, unread(ReadPart::DictKeys, keys, ReadWhy::Implausible));
        return std::nullopt;
      }
      v.entries = keys + l.dictkeys_indices + (Addr{1} << log2_index);
      bool general = kind == l.dictkeys_kind_general;
      v.entry_size = general ? l.dictentry_size : l.dictuentry_size;
      v.key = general ? l.dictentry_key : l.dictuentry_key;
      v.value = general ? l.dictentry_value : l.dictuentry_value;
    } else {  // Objects/dict-common.h, from the hand-written table (<= 3.10)
      if (ol->dk_size < 0 || !k.load(mem, keys, span_of({ol->dk_size, ol->dk_nentries}))) {
        set(why, unread(ReadPart::DictKeys, keys));
        return std::nullopt;
      }
      auto size = k.get<std::int64_t>(ol->dk_size).value_or(-1);
      v.nentries = k.get<std::int64_t>(ol->dk_nentries).value_or(-1);
      if (size < 8 || size > (std::int64_t{1} << 30) || (size & (size - 1)) != 0) {
        set(why, unread_named(ReadPart::DictKeys, keys, ReadWhy::Implausible, "dk_size", size));
        return std::nullopt;
      }
      std::int64_t ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffLL ? 4 : 8;
      v.entries = keys + ol->dk_indices + static_cast<Addr>(size * ix);
      v.entry_size = ol->entry_size;
      v.key = ol->entry_key;
      v.value = ol->entry_value;
    }
    if (v.nentries < 0 || v.nentries > (std::int64_t{1} << 30) || v.entry_size <= 0) {
      set(why, unread(ReadPart::DictKeys, keys, ReadWhy::Implausible));
      return std::nullopt;
    }
    return v;
  }

  // (key, value) pairs of a keys object; `values` is the split table's
  // values array (0 for a combined table).
  // At most `max` live entries, in order.  Deleted entries keep their slot
  // (dk_nentries counts them: sys.modules after many failed optional imports
  // holds hundreds), so slots are read a chunk at a time until `max` live
  // ones are found, within limits.max_entries slots.
  std::vector<std::pair<Addr, Addr>> entries(Addr keys, Addr values, std::size_t max, ReadProblem* why) {
    std::vector<std::pair<Addr, Addr>> out;
    auto v = keys_view(keys, why);
    if (!v) return out;
    const auto slots = static_cast<std::size_t>(
        std::min<std::int64_t>(v->nentries, static_cast<std::int64_t>(limits.max_entries)));
    const auto size = static_cast<std::size_t>(v->entry_size);
    max = std::min(max, limits.max_entries);
    for (std::size_t first = 0; first < slots && out.size() < max;) {
      std::size_t n = std::min(slots - first, std::max<std::size_t>(max - out.size(), 64));
      auto bytes = mem.read_bytes(v->entries + first * size, n * size);
      std::vector<std::uint8_t> vals;
      if (values) vals = mem.read_bytes(values + first * 8, n * 8);
      for (std::size_t i = 0; i < n && out.size() < max; ++i) {
        std::size_t at = i * size;
        if (at + size > bytes.size()) {
          set(why, unread(ReadPart::DictEntries, v->entries, ReadWhy::PartlyUnreadable));
          return out;
        }
        Addr key, value = 0;
        std::memcpy(&key, bytes.data() + at + v->key, 8);
        if (values) {
          if ((i + 1) * 8 > vals.size()) return out;
          std::memcpy(&value, vals.data() + i * 8, 8);
        } else {
          std::memcpy(&value, bytes.data() + at + v->value, 8);
        }
        if (!plausible_pointer(key) || !plausible_pointer(value)) continue;  // deleted or empty
        out.emplace_back(key, value);
      }
      first += n;
    }
    return out;
  }

  bool is_dict(Addr obj) {
    if (!plausible_pointer(obj)) return false;
    if (flag(objects->type_flags(obj), layout.tpflags_dict_subclass)) return true;
    auto name = objects->type_name(obj);
    return name && *name == "dict";
  }

  std::vector<std::pair<Addr, Addr>> dict_items(Addr dict, std::size_t max, ReadProblem* why) {
    if (!is_dict(dict)) {
      set(why, unread(ReadPart::Dict, dict, ReadWhy::NotA));
      return {};
    }
    RemoteStruct d;
    if (!d.load(mem, dict, span_of({layout.dict_ma_keys, layout.dict_ma_values, layout.dict_ma_used}))) {
      set(why, unread(ReadPart::Dict, dict));
      return {};
    }
    Addr keys = d.ptr(layout.dict_ma_keys), values = d.ptr(layout.dict_ma_values);
    if (values) values += static_cast<Addr>(std::max<std::int64_t>(layout.dictvalues_values, 0));
    return entries(keys, values, max, why);
  }

  Addr lookup(Addr keys, Addr values, std::string_view name, ReadProblem* why) {
    for (auto [k, v] : entries(keys, values, limits.max_entries, why)) {
      auto s = objects->read_str(k, nullptr);
      if (s && *s == name) return v;
    }
    set(why, unread_named(ReadPart::Dict, 0, ReadWhy::NoKey, std::string(name)));
    return 0;
  }

  Addr dict_get(Addr dict, std::string_view name, ReadProblem* why) {
    if (!is_dict(dict)) {
      set(why, unread(ReadPart::Dict, dict, ReadWhy::NotA));
      return 0;
    }
    RemoteStruct d;
    if (!d.load(mem, dict, span_of({layout.dict_ma_keys, layout.dict_ma_values}))) {
      set(why, unread(ReadPart::Dict, dict));
      return 0;
    }
    Addr keys = d.ptr(layout.dict_ma_keys), values = d.ptr(layout.dict_ma_values);
    if (values) values += static_cast<Addr>(std::max<std::int64_t>(layout.dictvalues_values, 0));
    Addr v = lookup(keys, values, name, why);
    if (!v) set(why, unread_named(ReadPart::Dict, dict, ReadWhy::NoKey, std::string(name)));
    return v;
  }

  // Where obj's attributes are: a dict object, or the keys and values
  // arrays of values kept outside a dict (3.11+ managed dicts); nullopt
  // when obj has none or they cannot be read (*no_dict: its class gives
  // it no __dict__).
  struct AttributeTable {
    Addr dict = 0;
    Addr keys = 0, values = 0;
  };
  std::optional<AttributeTable> attribute_table(Addr obj, ReadProblem* why, bool* no_dict = nullptr) {
    const Layout& l = layout;
    auto type = plausible_pointer(obj) ? mem.read_pointer(obj + l.object_ob_type) : std::nullopt;
    RemoteStruct t;
    if (!type || !plausible_pointer(*type) ||
        !t.load(mem, *type, span_of({l.type_tp_flags, l.type_basicsize, l.type_dictoffset, l.heaptype_cached_keys}))) {
      set(why, unread(ReadPart::Type, obj));
      return std::nullopt;
    }
    std::uint64_t flags = t.get<std::uint64_t>(l.type_tp_flags).value_or(0);
    Addr cached_keys = t.ptr(l.heaptype_cached_keys);
    Addr values_off = static_cast<Addr>(std::max<std::int64_t>(l.dictvalues_values, 0));
    auto dict = [&](Addr d) { return AttributeTable{d, 0, 0}; };
    if (l.has(l.tpflags_managed_dict) && (flags & static_cast<std::uint64_t>(l.tpflags_managed_dict))) {
      switch (ol->managed_dict) {
        case ManagedDict::ValuesAndDict: {
          Addr values = mem.read_pointer(obj + ol->managed_values_ptr).value_or(0);
          if (values) return AttributeTable{0, cached_keys, values + values_off};
          return dict(mem.read_pointer(obj + ol->managed_dict_ptr).value_or(0));
        }
        case ManagedDict::TaggedDictOrValues: {
          Addr w = mem.read_pointer(obj + ol->managed_dict_ptr).value_or(0);
          if (w & 1) return AttributeTable{0, cached_keys, (w + 1) + values_off};
          return dict(w);
        }
        case ManagedDict::InlineValues: {
          if (l.has(l.tpflags_inline_values) && (flags & static_cast<std::uint64_t>(l.tpflags_inline_values))) {
            auto basicsize = t.get<std::int64_t>(l.type_basicsize);
            Addr values = obj + static_cast<Addr>(basicsize.value_or(0));
            auto valid = mem.read_value<std::uint8_t>(values + l.dictvalues_valid);
            if (basicsize && *basicsize > 0 && *basicsize < 4096 && valid && *valid)
              return AttributeTable{0, cached_keys, values + l.dictvalues_values};
          }
          return dict(mem.read_pointer(obj + ol->managed_dict_ptr).value_or(0));
        }
        case ManagedDict::None:
          break;
      }
      set(why, unread(ReadPart::ManagedDict, obj, ReadWhy::NoLayout));
      return std::nullopt;
    }
    auto dictoffset = t.get<std::int64_t>(l.type_dictoffset);
    if (no_dict) *no_dict = dictoffset && *dictoffset == 0;
    if (!dictoffset || *dictoffset <= 0 || *dictoffset > 4096) {
      set(why, unread(ReadPart::Object, obj, ReadWhy::NoInstanceDict));
      return std::nullopt;
    }
    return dict(mem.read_pointer(obj + static_cast<Addr>(*dictoffset)).value_or(0));
  }

  Addr attribute(Addr obj, std::string_view name, ReadProblem* why) {
    auto t = attribute_table(obj, why);
    if (!t) return 0;
    return t->dict || !t->keys ? dict_get(t->dict, name, why) : lookup(t->keys, t->values, name, why);
  }

  std::vector<std::pair<Addr, Addr>> attributes(Addr obj, std::size_t max, ReadProblem* why) {
    auto t = attribute_table(obj, why);
    if (!t) return {};
    return t->dict || !t->keys ? dict_items(t->dict, max, why) : entries(t->keys, t->values, max, why);
  }

  std::optional<std::vector<std::pair<Addr, Addr>>> instance_attributes(Addr obj, std::size_t max,
                                                                        ReadProblem* why) {
    bool no_dict = false;
    auto t = attribute_table(obj, why, &no_dict);
    if (!t && no_dict) {
      set(why, {});
      return std::nullopt;
    }
    if (!t || (!t->dict && !t->keys && !t->values)) return std::vector<std::pair<Addr, Addr>>{};  // none set yet
    if (t->dict && !is_dict(t->dict)) {
      set(why, unread(ReadPart::InstanceDict, t->dict, ReadWhy::NotA).within(ReadPart::Object, obj));
      return std::vector<std::pair<Addr, Addr>>{};
    }
    return t->dict || !t->keys ? dict_items(t->dict, max, why) : entries(t->keys, t->values, max, why);
  }

  // The sign and the digits (PyLong_SHIFT bits each, least significant
  // first) of an int, when it has at most max_digits of them.
  struct IntDigits {
    bool negative = false;
    std::vector<std::uint32_t> digits;
  };
  // *too_many: the digit count when it was more than max_digits.
  std::optional<IntDigits> int_digits(Addr obj, std::size_t max_digits, ReadProblem* why,
                                      std::int64_t* too_many = nullptr) {
    const Layout& l = layout;
    if (!flag(objects->type_flags(obj), l.tpflags_long_subclass)) {
      set(why, unread(ReadPart::Int, obj, ReadWhy::NotA));
      return std::nullopt;
    }
    IntDigits out;
    std::int64_t ndigits = 0;
    if (l.has(l.long_lv_tag)) {  // 3.12+: size and sign in lv_tag
      auto tag = mem.read_value<std::uint64_t>(obj + l.long_lv_tag);
      if (!tag) {
        set(why, unread(ReadPart::Int, obj));
        return std::nullopt;
      }
      auto sign = *tag & static_cast<std::uint64_t>(l.long_sign_mask);
      ndigits = static_cast<std::int64_t>(*tag >> l.long_non_size_bits);
      if (sign == 1) return out;  // zero
      out.negative = sign == 2;
    } else {  // sign and number of digits in ob_size
      auto size = mem.read_value<std::int64_t>(obj + l.var_ob_size);
      if (!size) {
        set(why, unread(ReadPart::Int, obj));
        return std::nullopt;
      }
      out.negative = *size < 0;
      // INT64_MIN has no positive counterpart: far too many digits anyway
      ndigits = *size == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max()
                : out.negative                                   ? -*size
                                                                 : *size;
    }
    if (ndigits == 0) return out;
    // ndigits is compared before it is used: it comes from target bytes
    if (l.long_shift <= 0 || ndigits < 0 || static_cast<std::uint64_t>(ndigits) > max_digits) {
      if (too_many) *too_many = ndigits;
      auto p = unread_named(ReadPart::Int, obj, ReadWhy::TooManyDigits, {}, ndigits);
      p.limit = static_cast<std::int64_t>(max_digits);
      set(why, std::move(p));
      return std::nullopt;
    }
    out.digits.resize(static_cast<std::size_t>(ndigits));
    if (!mem.read(obj + l.long_digits, out.digits.data(), out.digits.size() * 4)) {
      set(why, unread_field(ReadPart::Int, obj, "digits"));
      return std::nullopt;
    }
    for (auto d : out.digits)
      if (d >> l.long_shift) {
        auto p = unread(ReadPart::Int, obj, ReadWhy::WideDigit);
        p.limit = l.long_shift;
        set(why, std::move(p));
        return std::nullopt;
      }
    return out;
  }

  std::optional<std::int64_t> integer(Addr obj, ReadProblem* why) {
    const Layout& l = layout;
    std::int64_t too_many = -1;
    auto d = int_digits(obj, 4, why, &too_many);
    if (!d) {
      if (too_many >= 0)
        set(why, unread_named(ReadPart::Int, obj, ReadWhy::TooLarge, {}, too_many));
      return std::nullopt;
    }
    if (static_cast<std::int64_t>(d->digits.size()) * l.long_shift > 63 + l.long_shift) {
      set(why, unread_named(ReadPart::Int, obj, ReadWhy::TooLarge, {}, static_cast<std::int64_t>(d->digits.size())));
      return std::nullopt;
    }
    unsigned __int128 v = 0;
    for (auto it = d->digits.rbegin(); it != d->digits.rend(); ++it) v = (v << l.long_shift) | *it;
    if (v > static_cast<unsigned __int128>(INT64_MAX)) {
      set(why, unread(ReadPart::Int, obj, ReadWhy::TooLarge));
      return std::nullopt;
    }
    auto r = static_cast<std::int64_t>(v);
    return d->negative ? -r : r;
  }

  // Base 2^shift digits to decimal: limbs of 10^9, each step limb * 2^shift
  // + carry fits 64 bits for shift <= 30.
  std::optional<std::string> int_decimal(Addr obj, std::size_t max_digits, ReadProblem* why) {
    auto d = int_digits(obj, max_digits, why);
    if (!d) return std::nullopt;
    if (layout.long_shift > 30) {
      set(why, unread_named(ReadPart::Int, obj, ReadWhy::Unsupported, "PyLong_SHIFT", layout.long_shift));
      return std::nullopt;
    }
    constexpr std::uint64_t kBase = 1000000000;
    std::vector<std::uint64_t> limbs;  // least significant first
    for (auto it = d->digits.rbegin(); it != d->digits.rend(); ++it) {
      std::uint64_t carry = *it;
      for (auto& limb : limbs) {
        std::uint64_t v = (limb << layout.long_shift) + carry;
        limb = v % kBase;
        carry = v / kBase;
      }
      while (carry) {
        limbs.push_back(carry % kBase);
        carry /= kBase;
      }
    }
    if (limbs.empty()) return std::string("0");
    std::string out = d->negative ? "-" : "";
    out += std::to_string(limbs.back());
    for (auto it = limbs.rbegin() + 1; it != limbs.rend(); ++it) {
      std::string part = std::to_string(*it);
      out += std::string(9 - part.size(), '0') + part;
    }
    return out;
  }

  std::optional<std::int64_t> length(Addr obj, ReadProblem* why) {
    const Layout& l = layout;
    auto flags = objects->type_flags(obj);
    if (!flags) {
      set(why, unread(ReadPart::Object, obj));
      return std::nullopt;
    }
    std::optional<std::int64_t> n;
    if (flag(flags, l.tpflags_dict_subclass)) {
      n = mem.read_value<std::int64_t>(obj + l.dict_ma_used);
    } else if (flag(flags, l.tpflags_list_subclass) || flag(flags, l.tpflags_tuple_subclass) ||
               flag(flags, l.tpflags_bytes_subclass)) {
      n = mem.read_value<std::int64_t>(obj + l.var_ob_size);
    } else if (flag(flags, l.tpflags_unicode_subclass)) {
      n = mem.read_value<std::int64_t>(obj + l.unicode_length);
    } else {
      auto name = objects->type_name(obj).value_or("");
      if (name == "set" || name == "frozenset") {
        n = mem.read_value<std::int64_t>(obj + l.set_used);
      } else if (name == "collections.deque") {  // a PyVarObject: ob_size is its length
        n = mem.read_value<std::int64_t>(obj + l.var_ob_size);
      } else {
        set(why, unread_named(ReadPart::Object, obj, ReadWhy::NoLength, name));
        return std::nullopt;
      }
    }
    if (!n || *n < 0 || *n > limits.max_length) {
      set(why, n ? unread_named(ReadPart::Object, obj, ReadWhy::Implausible, "length", *n)
                 : unread_field(ReadPart::Object, obj, "length"));
      return std::nullopt;
    }
    return n;
  }
};

}  // namespace pyhang::cpython
