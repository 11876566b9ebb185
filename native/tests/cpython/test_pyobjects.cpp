// The Python object reader on synthetic images laid out with the generated
// tables and the hand-written object table, for every version: numbers,
// str, containers, dict lookups, module globals through sys.modules;
// garbage gives nothing, never a crash.
#include <catch2/catch.hpp>

#include <random>

#include "cpython/layouts/objects.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "support/cpython_image.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::layout;

namespace {

struct Objects {
  const Layout& l;
  const ObjectLayout& ol;
  Image img;
  Addr int_type, bool_type, float_type, list_type, dict_type, module_type, none_type;

  explicit Objects(int minor) : l(layout(minor)), ol(*object_layout_for(3, minor)), img(l) {
    int_type = img.type("int", static_cast<std::uint64_t>(l.tpflags_long_subclass));
    bool_type = img.type("bool", static_cast<std::uint64_t>(l.tpflags_long_subclass));
    float_type = img.type("float", 0);
    list_type = img.type("list", static_cast<std::uint64_t>(l.tpflags_list_subclass));
    dict_type = img.type("dict", static_cast<std::uint64_t>(l.tpflags_dict_subclass));
    module_type = img.type("module", 0);
    none_type = img.type("NoneType", 0);
    img.put<std::int64_t>(module_type, l.type_dictoffset, 16);  // PyModuleObject.md_dict
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
  // A combined dict of str keys.
  Addr dict(const std::vector<std::pair<std::string, Addr>>& items) {
    const std::int64_t log2 = 4, size = 1 << log2;  // room for up to 10 entries
    Addr keys = img.alloc(1024);
    Addr entries;
    std::int64_t esize = l.has(l.dictentry_size) ? l.dictentry_size : ol.entry_size;
    std::int64_t ekey = l.has(l.dictentry_key) ? l.dictentry_key : ol.entry_key;
    std::int64_t evalue = l.has(l.dictentry_value) ? l.dictentry_value : ol.entry_value;
    if (l.has(l.dictkeys_nentries)) {
      img.put<std::uint8_t>(keys, l.dictkeys_log2_size, log2);
      img.put<std::uint8_t>(keys, l.dictkeys_log2_index_bytes, log2);
      img.put<std::uint8_t>(keys, l.dictkeys_kind, static_cast<std::uint8_t>(l.dictkeys_kind_general));
      img.put<std::int64_t>(keys, l.dictkeys_nentries, static_cast<std::int64_t>(items.size()));
      entries = keys + l.dictkeys_indices + size;
    } else {
      img.put<std::int64_t>(keys, ol.dk_size, size);
      img.put<std::int64_t>(keys, ol.dk_nentries, static_cast<std::int64_t>(items.size()));
      entries = keys + ol.dk_indices + size;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      img.put<Addr>(entries + i * esize, ekey, img.str(items[i].first));
      img.put<Addr>(entries + i * esize, evalue, items[i].second);
    }
    Addr d = img.alloc(64);
    img.put<Addr>(d, l.object_ob_type, dict_type);
    img.put<std::int64_t>(d, l.dict_ma_used, static_cast<std::int64_t>(items.size()));
    img.put<Addr>(d, l.dict_ma_keys, keys);
    img.put<Addr>(d, l.dict_ma_values, 0);
    return d;
  }
  Addr module(Addr globals) {
    Addr m = img.alloc(64);
    img.put<Addr>(m, l.object_ob_type, module_type);
    img.put<Addr>(m, 16, globals);
    return m;
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

}  // namespace

TEST_CASE("numbers, str, containers and module globals through sys.modules, in every version", "[pyobjects]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr big = o.integer(1234567890123LL), neg = o.integer(-42), zero = o.integer(0);
    Addr yes = o.integer(1, o.bool_type), pi = o.real(3.25), s = o.img.str("fork");
    Addr lst = o.list({big, neg, zero});
    Addr ctx_type = o.img.type("ForkContext", 0);
    Addr ctx = o.img.alloc(32);
    o.img.put<Addr>(ctx, o.l.object_ob_type, ctx_type);
    Addr globals = o.dict({{"DATA", lst}, {"_flag", yes}, {"_ratio", pi}, {"_name", s}, {"_ctx", ctx}});
    Addr modules = o.dict({{"sys", o.module(o.dict({}))}, {"mod.sub", o.module(globals)}});
    auto st = o.state(modules);
    auto mem = o.img.reader();
    PyObjects objs(mem, st);
    REQUIRE(objs.ok());
    CHECK(objs.integer(big) == 1234567890123LL);
    CHECK(objs.integer(neg) == -42);
    CHECK(objs.integer(zero) == 0);
    CHECK(objs.real(pi) == 3.25);
    CHECK(objs.str(s) == "fork");
    CHECK(objs.length(lst) == 3);
    CHECK(objs.sequence_items(lst, 10) == std::vector<Addr>{big, neg, zero});
    CHECK(objs.sys_modules() == modules);
    CHECK(objs.module("mod.sub") != 0);
    std::string why;
    CHECK(objs.module("absent", &why) == 0);
    CHECK(why == "module absent is not imported");
    CHECK(objs.module_attribute("mod.sub", "DATA") == lst);
    auto flag = objs.value(objs.module_attribute("mod.sub", "_flag"));
    CHECK(flag.kind == ValueKind::Bool);
    CHECK(flag.boolean == true);
    auto data = objs.value(lst);
    CHECK(data.kind == ValueKind::List);
    CHECK(data.length == 3);
    CHECK(objs.value(pi).kind == ValueKind::Float);
    CHECK(objs.type_name(objs.module_attribute("mod.sub", "_ctx")) == "ForkContext");
    CHECK(objs.dict_items(globals, 100).size() == 5);
    CHECK(objs.length(globals) == 5);
  }
}

TEST_CASE("garbage objects give nothing and a reason, never a crash", "[pyobjects]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr junk = o.img.alloc(4096);
    std::mt19937_64 rng(minor);
    for (int i = 0; i < 512; ++i) o.img.put<std::uint64_t>(junk, 8 * i, rng());
    // Pointers into the junk, to the junk itself, and to nowhere.
    for (int i = 0; i < 64; ++i) o.img.put<Addr>(junk, 8 * (i * 7 % 512), junk + 8 * (rng() % 512));
    Addr modules = o.dict({{"m", junk}, {"n", o.module(junk + 64)}});
    auto st = o.state(modules);
    auto mem = o.img.reader();
    PyObjects objs(mem, st);
    for (Addr a : {junk, junk + 8, junk + 64, Addr{0}, Addr{0x10}, Image::kUnmapped, junk + 4}) {
      std::string why;
      (void)objs.value(a);
      (void)objs.integer(a, &why);
      (void)objs.str(a, &why);
      (void)objs.length(a, &why);
      (void)objs.dict_items(a, 100, &why);
      (void)objs.sequence_items(a, 100, &why);
      (void)objs.attribute(a, "x", &why);
      CHECK_FALSE(why.empty());
    }
    std::string why;
    CHECK(objs.module_attribute("n", "x", &why) == 0);
    CHECK_FALSE(why.empty());
  }
  PythonState unknown;
  unknown.major = 3;
  unknown.minor = 99;
  ImageReader empty;
  PyObjects objs(empty, unknown);
  CHECK_FALSE(objs.ok());
  std::string why;
  CHECK(objs.module("sys", &why) == 0);
  CHECK(why.find("no object layout") != std::string::npos);
}
