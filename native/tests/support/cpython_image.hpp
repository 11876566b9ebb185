// Synthetic CPython memory images for the decoder tests: objects are laid
// out with the generated layout tables, so a test states *what* the
// interpreter holds and the tables decide *where*.
#pragma once

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "cpython/internal.hpp"
#include "cpython/layouts/layout.hpp"
#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython::testing {

inline const Layout& layout(int minor) {
  const Layout* l = layout_for(3, minor);
  if (!l) throw std::runtime_error("no layout for 3." + std::to_string(minor));
  return *l;
}

// A line table whose first entry covers the whole code (64 code units on
// 3.11+) and says "line first+delta", in the layout's format.
inline std::vector<std::uint8_t> whole_code_at(const Layout& l, int delta) {
  switch (l.linetable) {
    case LineTableFormat::Lnotab: return {0, static_cast<std::uint8_t>(delta)};
    case LineTableFormat::LineTable310: return {254, static_cast<std::uint8_t>(delta)};
    case LineTableFormat::LocationTable: {
      std::vector<std::uint8_t> t;
      for (int i = 0; i < 8; ++i) {  // 8 entries of 8 units, "no column" form
        t.push_back(0x80 | (13 << 3) | 7);
        t.push_back(static_cast<std::uint8_t>(i == 0 ? delta << 1 : 0));
      }
      return t;
    }
  }
  return {};
}

class Image {
 public:
  static constexpr Addr kBase = 0x10000000;
  static constexpr Addr kUnmapped = 0x7f0000000000;  // never part of the image

  explicit Image(const Layout& l) : l_(l), bytes_(1 << 21) {
    str_type_ = type("str", static_cast<std::uint64_t>(l.tpflags_unicode_subclass));
    bytes_type_ = type("bytes", static_cast<std::uint64_t>(l.tpflags_bytes_subclass));
    code_type_ = type("code", 0);
  }
  const Layout& layout() const { return l_; }

  Addr alloc(std::size_t n) {
    Addr a = kBase + used_;
    used_ += (n + 64 + 15) & ~std::size_t{15};
    if (used_ > bytes_.size()) throw std::runtime_error("test image full");
    return a;
  }
  template <class T>
  void put(Addr base, std::int64_t offset, T value) {
    if (offset < 0) throw std::runtime_error("writing a field the layout does not have");
    std::memcpy(&bytes_[base - kBase + offset], &value, sizeof(T));
  }
  void put_bytes(Addr at, const void* p, std::size_t n) { std::memcpy(&bytes_[at - kBase], p, n); }
  // What was written at `base + offset`.
  template <class T>
  T get(Addr base, std::int64_t offset) const {
    T value;
    std::memcpy(&value, &bytes_.at(base - kBase + offset), sizeof(T));
    return value;
  }

  Addr cstring(const std::string& s) {
    Addr a = alloc(s.size() + 1);
    put_bytes(a, s.c_str(), s.size() + 1);
    return a;
  }
  // A type object of `size` bytes (a heap type's ht_cached_keys lies past 512).
  Addr type(const std::string& name, std::uint64_t flags, std::size_t size = 512) {
    Addr t = alloc(size);
    put<Addr>(t, l_.type_tp_name, cstring(name));
    put<std::uint64_t>(t, l_.type_tp_flags, flags);
    return t;
  }

  // A compact str of the smallest kind that holds every code point (as
  // CPython makes them), or of `force_kind`.
  Addr str(const std::u32string& text, int force_kind = 0) {
    std::uint32_t maxc = 0;
    for (char32_t c : text) maxc = std::max<std::uint32_t>(maxc, c);
    int kind = force_kind ? force_kind : maxc < 0x100 ? 1 : maxc < 0x10000 ? 2 : 4;
    bool ascii = maxc < 0x80 && kind == 1;
    std::int64_t header = ascii ? l_.unicode_ascii_data : l_.unicode_compact_data;
    Addr s = alloc(static_cast<std::size_t>(header) + (text.size() + 1) * kind);
    put<Addr>(s, l_.object_ob_type, str_type_);
    put<std::int64_t>(s, l_.unicode_length, static_cast<std::int64_t>(text.size()));
    put<std::uint32_t>(s, l_.unicode_state, state_word(kind, true, ascii));
    for (std::size_t i = 0; i < text.size(); ++i) {
      std::uint32_t c = text[i];
      std::memcpy(&bytes_[s - kBase + header + i * kind], &c, kind);  // little-endian
    }
    return s;
  }
  Addr str(const std::string& utf8) { return str(decode_utf8(utf8)); }

  static std::u32string decode_utf8(const std::string& s) {
    std::u32string out;
    for (std::size_t i = 0; i < s.size();) {
      auto b = static_cast<unsigned char>(s[i]);
      int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      char32_t c = n == 1 ? b : b & (0x7F >> n);
      for (int k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      out.push_back(c);
      i += n;
    }
    return out;
  }

  std::uint32_t state_word(int kind, bool compact, bool ascii) const {
    auto shift = [](std::int64_t mask) { return std::countr_zero(static_cast<std::uint32_t>(mask)); };
    std::uint32_t w = static_cast<std::uint32_t>(kind) << shift(l_.unicode_kind_mask);
    if (compact) w |= static_cast<std::uint32_t>(l_.unicode_compact_mask);
    if (ascii) w |= static_cast<std::uint32_t>(l_.unicode_ascii_mask);
    if (l_.unicode_ready_mask > 0) w |= static_cast<std::uint32_t>(l_.unicode_ready_mask);
    return w;
  }

  Addr bytes(const std::vector<std::uint8_t>& b) {
    Addr o = alloc(static_cast<std::size_t>(l_.bytes_ob_sval) + b.size() + 1);
    put<Addr>(o, l_.object_ob_type, bytes_type_);
    put<std::int64_t>(o, l_.var_ob_size, static_cast<std::int64_t>(b.size()));
    if (!b.empty()) put_bytes(o + l_.bytes_ob_sval, b.data(), b.size());
    return o;
  }

  // A code object; on 3.11+ with `units` code units of inline bytecode.
  Addr code(const std::string& name, const std::string& file, int firstlineno, const std::vector<std::uint8_t>& table,
            int units = 64) {
    std::size_t size = static_cast<std::size_t>(l_.code_size) + (l_.has(l_.code_code_adaptive) ? units * 2 : 0);
    Addr c = alloc(size);
    put<Addr>(c, l_.object_ob_type, code_type_);
    put<Addr>(c, l_.code_name, str(name + "_short"));
    if (l_.has(l_.code_qualname)) put<Addr>(c, l_.code_qualname, str(name));
    else put<Addr>(c, l_.code_name, str(name));
    put<Addr>(c, l_.code_filename, str(file));
    put<std::int32_t>(c, l_.code_firstlineno, firstlineno);
    put<Addr>(c, l_.has(l_.code_linetable) ? l_.code_linetable : l_.code_lnotab, bytes(table));
    if (l_.has(l_.code_firsttraceable)) put<std::int32_t>(c, l_.code_firsttraceable, 0);
    return c;
  }

  // <= 3.10: a PyFrameObject at f_lasti (in the layout's units).
  Addr frame_object(Addr code, int lasti, Addr back) {
    Addr f = alloc(static_cast<std::size_t>(l_.frame_size));
    put<Addr>(f, l_.frame_code, code);
    put<std::int32_t>(f, l_.frame_lasti, lasti);
    put<Addr>(f, l_.frame_back, back);
    return f;
  }
  // 3.11+: an interpreter frame whose instruction pointer is at byte
  // `offset` of the code.
  Addr interpreter_frame(Addr code, std::int64_t offset, Addr previous, int owner = 0, bool is_entry = false) {
    Addr f = alloc(static_cast<std::size_t>(l_.iframe_size));
    write_interpreter_frame(f, code, offset, previous, owner, is_entry);
    return f;
  }
  // The same frame written at `f`, e.g. inside a generator (gi_iframe).
  void write_interpreter_frame(Addr f, Addr code, std::int64_t offset, Addr previous, int owner = 0,
                               bool is_entry = false) {
    put<Addr>(f, l_.iframe_code, code);
    put<Addr>(f, l_.iframe_previous, previous);
    put<Addr>(f, l_.iframe_instr, code + l_.code_code_adaptive + offset);
    put<std::int8_t>(f, l_.iframe_owner, static_cast<std::int8_t>(owner));
    if (l_.has(l_.iframe_is_entry)) put<std::uint8_t>(f, l_.iframe_is_entry, is_entry);
  }

  // A thread state whose innermost frame is `top`, following the layout's
  // TopFrame rule.
  Addr thread_state(Addr interp, Addr top, std::uint64_t pthread, int native_tid) {
    Addr t = alloc(static_cast<std::size_t>(l_.tstate_size));
    put<Addr>(t, l_.tstate_interp, interp);
    put<std::uint64_t>(t, l_.tstate_thread_id, pthread);
    if (l_.has(l_.tstate_native_thread_id)) put<std::uint64_t>(t, l_.tstate_native_thread_id, native_tid);
    switch (l_.top_frame) {
      case TopFrame::ThreadStateFrameObject: put<Addr>(t, l_.tstate_frame, top); break;
      case TopFrame::ThreadState: put<Addr>(t, l_.tstate_current_frame, top); break;
      case TopFrame::CFrame: {
        Addr cf = alloc(64);
        put<Addr>(cf, l_.cframe_current_frame, top);
        put<Addr>(t, l_.tstate_cframe, cf);
        break;
      }
    }
    return t;
  }
  void link_threads(Addr interp, const std::vector<Addr>& tstates) {
    put<Addr>(interp, l_.interp_threads_head, tstates.empty() ? 0 : tstates[0]);
    for (std::size_t i = 0; i < tstates.size(); ++i) {
      put<Addr>(tstates[i], l_.tstate_prev, i ? tstates[i - 1] : 0);
      put<Addr>(tstates[i], l_.tstate_next, i + 1 < tstates.size() ? tstates[i + 1] : 0);
    }
  }
  // An interpreter (its struct is only as large as the fields used).
  Addr interpreter(std::int64_t id) {
    std::int64_t end = std::max({l_.interp_next, l_.interp_id, l_.interp_threads_head, l_.interp_ceval_gil,
                                 l_.interp_own_gil + l_.gil_size}) + 8;
    Addr i = alloc(static_cast<std::size_t>(end));
    if (l_.has(l_.interp_id)) put<std::int64_t>(i, l_.interp_id, id);
    return i;
  }
  // _PyRuntime with one interpreter and (for 3.7 - 3.11) the embedded GIL.
  Addr runtime(Addr interp) {
    std::int64_t end = std::max({l_.runtime_interpreters_head, l_.runtime_interpreters_main, l_.runtime_finalizing,
                                 l_.runtime_initialized, l_.runtime_tstate_current,
                                 l_.runtime_ceval_gil + l_.gil_size, l_.dbg_size});
    Addr r = alloc(static_cast<std::size_t>(end) + 8);
    put<Addr>(r, l_.runtime_interpreters_head, interp);
    put<Addr>(r, l_.runtime_interpreters_main, interp);
    if (l_.has(l_.runtime_initialized)) put<std::int32_t>(r, l_.runtime_initialized, 1);
    if (l_.has_debug_offsets) write_debug_offsets(r);
    return r;
  }
  // The target's _Py_DebugOffsets, as CPython fills it, from the table.
  void write_debug_offsets(Addr r) {
    put_bytes(r, "xdebugpy", 8);
    put<std::uint64_t>(r, l_.dbg_version, (3u << 24) | (static_cast<unsigned>(l_.minor) << 16) | (l_.patch << 8) | 0xf0);
    auto w = [&](std::int64_t where, std::int64_t value) {
      if (where >= 0 && value >= 0) put<std::uint64_t>(r, where, static_cast<std::uint64_t>(value));
    };
    for (const auto& f : detail::debug_offset_fields()) w(l_.*f.where, l_.*f.field);
    if (l_.has(l_.dbg_free_threaded)) w(l_.dbg_free_threaded, 0);
    w(l_.dbg_interp_gil_locked, l_.interp_own_gil + l_.gil_locked);
    w(l_.dbg_interp_gil_holder, l_.interp_own_gil + l_.gil_last_holder);
    // Sizes of the object structs that bound their offsets (not in the table).
    for (auto size : {l_.dbg_heaptype_size, l_.dbg_set_size, l_.dbg_dict_size, l_.dbg_float_size, l_.dbg_long_size,
                      l_.dbg_gc_size, l_.dbg_gen_size})
      w(size, 1024);
    if (l_.has(l_.dbg_interp_gc) && l_.has(l_.dbg_gc_collecting) && l_.has(l_.interp_gc_collecting)) {
      w(l_.dbg_interp_gc, l_.interp_gc_collecting);  // the reader adds the two: any split that sums right
      w(l_.dbg_gc_collecting, 0);
    }
  }

  // The memory reader over everything written so far.
  ImageReader reader() const {
    ImageReader r;
    r.add(kBase, bytes_.data(), used_);
    return r;
  }

 private:
  const Layout& l_;
  std::vector<std::uint8_t> bytes_;
  std::size_t used_ = 0;
  Addr str_type_ = 0, bytes_type_ = 0, code_type_ = 0;
};

}  // namespace pyhang::cpython::testing
