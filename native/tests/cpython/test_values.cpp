// Python values as text and the locals of a frame, on synthetic images
// laid out with each version's tables (3.6 - 3.13): every kind of value,
// containers bounded in items, depth and output, cycles, locks and threads
// named as pyhang names them, and garbage that gives a marked placeholder
// and a reason, never an exception.
#include <catch2/catch.hpp>

#include <random>

#include "pyhang/base/format.hpp"
#include "pyhang/cpython/locals.hpp"
#include "pyhang/cpython/values.hpp"
#include "support/cpython_objects.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

namespace {

struct Values : Objects {
  Addr lock_type, rlock_type, cell_type, type_type;

  explicit Values(int minor) : Objects(minor) {
    lock_type = img.type("_thread.lock", 0);
    rlock_type = img.type("_thread.RLock", 0);
    cell_type = img.type("cell", 0);
    type_type = img.type("type", 0);
  }

  // An int of any digits (least significant first).
  Addr big(const std::vector<std::uint32_t>& digits, bool negative) {
    Addr o = img.alloc(static_cast<std::size_t>(l.long_digits) + 4 * digits.size() + 8);
    img.put<Addr>(o, l.object_ob_type, int_type);
    auto n = static_cast<std::int64_t>(digits.size());
    if (l.has(l.long_lv_tag))
      img.put<std::uint64_t>(o, l.long_lv_tag, (static_cast<std::uint64_t>(n) << l.long_non_size_bits) | (negative ? 2 : 0));
    else
      img.put<std::int64_t>(o, l.var_ob_size, negative ? -n : n);
    for (std::size_t i = 0; i < digits.size(); ++i) img.put<std::uint32_t>(o, l.long_digits + 4 * i, digits[i]);
    return o;
  }
  Addr cell(Addr v) {
    Addr c = object(cell_type);
    img.put<Addr>(c, ol.cell_ob_ref, v);
    return c;
  }
};

std::string repr(ValueRenderer& r, Addr a) { return r.render(a).repr; }

}  // namespace

using namespace pyhang::cpython::testing;

TEST_CASE("values render as Python's repr, in every version", "[values]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    Addr one = o.integer(1), neg = o.integer(-42);
    // 2**100 = digits of 30 bits (15 bits before... the layout's shift): built from the shift
    std::vector<std::uint32_t> d;
    {
      int bits = 100;
      while (bits >= o.l.long_shift) {
        d.push_back(0);
        bits -= static_cast<int>(o.l.long_shift);
      }
      d.push_back(1u << bits);
    }
    Addr two100 = o.big(d, true);
    Addr lst = o.list({one, o.img.str("a'b"), o.none});
    Addr tup1 = o.tuple({o.real(0.1)});
    Addr dct = o.dict({{"k", o.boolean(true)}, {"z", o.boolean(false)}});
    Addr st = o.set({one});
    Addr lock = o.object(o.lock_type), rlock = o.img.alloc(64);
    o.img.put<Addr>(rlock, o.l.object_ob_type, o.rlock_type);
    o.img.put<std::uint8_t>(lock, 32, 1);
    o.img.put<std::uint64_t>(rlock, 24, 0xabc);  // the owner's pthread_t
    o.img.put<std::uint64_t>(rlock, 32, 2);
    Addr mod = o.module(o.dict({{"__name__", o.img.str("os.path")}}));
    Addr cls = o.object(o.type_type);
    o.img.put<Addr>(cls, o.l.type_tp_name, o.img.cstring("Queue"));
    Addr thread_type = o.type_with_dict("Worker");
    Addr thread = o.instance(thread_type, {{"_name", o.img.str("loader")}, {"_ident", o.integer(0xabc)},
                                           {"_started", o.object(o.none_type)}});
    Addr plain = o.object(o.img.type("Widget", 0));
    Addr func = o.img.alloc(static_cast<std::size_t>(o.l.func_qualname) + 8);
    o.img.put<Addr>(func, o.l.object_ob_type, o.img.type("function", 0));
    o.img.put<Addr>(func, o.l.func_qualname, o.img.str("Queue.get"));
    Addr def = o.img.alloc(32);
    o.img.put<Addr>(def, o.l.methoddef_name, o.img.cstring("len"));
    Addr builtin = o.img.alloc(64);
    o.img.put<Addr>(builtin, o.l.object_ob_type, o.img.type("builtin_function_or_method", 0));
    o.img.put<Addr>(builtin, o.l.cfunction_ml, def);
    Addr bound = o.img.alloc(64);  // lock.acquire: bound to a lock; len: to the builtins module
    Addr acquire = o.img.alloc(32);
    o.img.put<Addr>(acquire, o.l.methoddef_name, o.img.cstring("acquire"));
    o.img.put<Addr>(bound, o.l.object_ob_type, o.img.get<Addr>(builtin, o.l.object_ob_type));
    o.img.put<Addr>(bound, o.l.cfunction_ml, acquire);
    o.img.put<Addr>(bound, o.l.cfunction_self, lock);
    o.img.put<Addr>(builtin, o.l.cfunction_self, o.module(o.dict({})));
    std::vector<std::pair<Addr, std::string>> cases{
        {o.none, "None"},
        {o.boolean(true), "True"},
        {neg, "-42"},
        {two100, "-1267650600228229401496703205376"},
        {o.real(3.25), "3.25"},
        {o.real(1e16), "1e+16"},
        {o.real(1e15), "1000000000000000.0"},
        {o.real(1.5e-5), "1.5e-05"},
        {o.real(-2.0), "-2.0"},
        {o.img.str("tab\there\n"), "'tab\\there\\n'"},
        {o.img.str(U"\u00e9t\u00e9 \u4e2d \U0001F600"), "'\u00e9t\u00e9 \u4e2d \U0001F600'"},  // kinds 1, 2, 4
        {o.img.str(U"abc", 2), "'abc'"},
        {o.img.bytes({'h', 'i', 0, 0xff}), "b'hi\\x00\\xff'"},
        {lst, "[1, \"a'b\", None]"},
        {tup1, "(0.1,)"},
        {o.tuple({}), "()"},
        {dct, "{'k': True, 'z': False}"},
        {st, "{1}"},
        {o.set({}), "set()"},
        {o.set({}, true), "frozenset()"},
        {o.set({neg}, true), "frozenset({-42})"},
        {lock, "<threading.Lock at " + hex(lock) + " locked>"},
        {rlock, "<threading.RLock at " + hex(rlock) + " owned by LWP 4242 (count 2)>"},
        {mod, "<module 'os.path'>"},
        {cls, "<class 'Queue'>"},
        {thread, "<Worker 'loader' (LWP 4242) at " + hex(thread) + ">"},
        {plain, "<Widget object at " + hex(plain) + ">"},
        {func, "<function Queue.get at " + hex(func) + ">"},
        {builtin, "<built-in function len>"},
        {bound, "<built-in method acquire of _thread.lock object at " + hex(lock) + ">"},
    };
    auto state = o.state(o.dict({}));
    state.threads[0].thread_id = 0xabc;
    state.threads[0].native_tid = 4242;
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    REQUIRE(r.ok());
    for (const auto& [a, want] : cases) CHECK(repr(r, a) == want);
    auto v = r.render(lst);
    CHECK(v.type == "list");
    CHECK(v.complete);
    CHECK(v.problem.empty());
  }
}

TEST_CASE("values are bounded: items, depth, characters, output, cycles", "[values]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    std::vector<Addr> many;
    for (int i = 0; i < 30; ++i) many.push_back(o.integer(i));
    Addr lst = o.list(many);
    Addr deep = o.list({o.list({o.list({o.list({o.integer(7)})})})});
    Addr self = o.img.alloc(64);
    Addr storage = o.img.alloc(16);
    o.img.put<Addr>(storage, 0, self);
    o.img.put<Addr>(self, o.l.object_ob_type, o.list_type);
    o.img.put<std::int64_t>(self, o.l.var_ob_size, 1);
    o.img.put<Addr>(self, o.l.list_ob_item, storage);
    Addr longstr = o.img.str(std::string(500, 'x'));
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueLimits lim;
    lim.items = 3;
    lim.depth = 2;
    lim.str_chars = 5;
    ValueRenderer r(mem, state, lim);
    auto v = r.render(lst);
    CHECK(v.repr == "[0, 1, 2, ...(30 items)]");
    CHECK_FALSE(v.complete);
    CHECK(repr(r, deep) == "[[[...(1 items)]]]");
    CHECK(repr(r, self) == "[[...]]");
    CHECK(repr(r, longstr) == "'xxxxx'...(500 characters)");
    ValueLimits tiny;
    tiny.output = 20;
    ValueRenderer small(mem, state, tiny);
    auto t = small.render(lst);
    CHECK(t.repr.size() <= 23);
    CHECK(t.repr.ends_with("..."));
    CHECK_FALSE(t.complete);
    ValueLimits few;
    few.reads = 24;
    ValueRenderer starved(mem, state, few);
    auto s = starved.render(lst);
    CHECK(s.repr.find("<read limit at ") != std::string::npos);
    CHECK(s.problem.why == ReadWhy::ReadLimit);
    CHECK(s.problem.limit == 24);
    // the limit is per value: the next value is read in full
    CHECK(starved.render(many[5]).repr == "5");
  }
}

TEST_CASE("a list whose items cannot be read says so and why, never as items left out", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    Addr null_items = o.list({o.none, o.none, o.none});
    o.img.put<Addr>(null_items, o.l.list_ob_item, 0);
    Addr unmapped_items = o.list({o.none, o.none});
    o.img.put<Addr>(unmapped_items, o.l.list_ob_item, Image::kUnmapped);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    auto v = r.render(null_items);
    CHECK(v.repr == "[<3 items unreadable at " + hex(null_items) + ">]");
    CHECK_FALSE(v.complete);
    CHECK(says(v.problem, ReadWhy::Implausible, {{ReadPart::List, null_items}, {ReadPart::Field, 0}}));
    CHECK(v.problem.path.back().name == "ob_item");
    v = r.render(unmapped_items);
    CHECK(v.repr == "[<2 items unreadable at " + hex(unmapped_items) + ">]");
    CHECK(says(v.problem, ReadWhy::PartlyUnreadable, {{ReadPart::Items, unmapped_items}}));
  }
}

TEST_CASE("garbage values give a marked placeholder and a reason, never an exception", "[values]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    Addr junk = o.img.alloc(4096);
    std::mt19937_64 rng(minor * 7);
    for (int i = 0; i < 512; ++i) o.img.put<std::uint64_t>(junk, 8 * i, rng());
    for (int i = 0; i < 64; ++i) o.img.put<Addr>(junk, 8 * (i * 5 % 512), junk + 8 * (rng() % 512));
    // a list whose items are junk, a dict whose keys object is junk, a str with a huge length
    Addr bad_list = o.list({junk, junk + 8, Image::kUnmapped, 0x10});
    Addr bad_dict = o.dict({{"a", o.none}});
    o.img.put<Addr>(bad_dict, o.l.dict_ma_keys, junk + 16);
    Addr bad_str = o.img.str("abc");
    o.img.put<std::int64_t>(bad_str, o.l.unicode_length, std::int64_t{1} << 50);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    CHECK(repr(r, Image::kUnmapped) == "<unreadable at " + hex(Image::kUnmapped) + ">");
    CHECK_FALSE(r.render(Image::kUnmapped).problem.empty());
    CHECK(repr(r, 0x10) == "<unreadable at 0x10>");
    auto l = r.render(bad_list);
    CHECK(l.repr.starts_with("[<unreadable at "));
    CHECK_FALSE(l.complete);
    CHECK_NOTHROW(r.render(bad_dict));
    CHECK(r.render(bad_str).repr == "<unreadable at " + hex(bad_str) + ">");
    for (int i = 0; i < 512; ++i) {
      auto v = r.render(junk + 8 * static_cast<Addr>(i));
      CHECK_FALSE(v.repr.empty());
      CHECK(v.repr.size() <= 1024 + 3);
    }
  }
}

namespace {

// A function frame: def f(a, b, *args, **kw) with locals x, y (unbound),
// a cell c captured by a nested function and a free variable fr.
struct FunctionFrame {
  PyFrame frame;
  Addr a, b, args, kw, x, c, fr;
};

FunctionFrame function_frame(Values& o) {
  FunctionFrame ff;
  const Layout& l = o.l;
  ff.a = o.integer(1);
  ff.b = o.img.str("two");
  ff.args = o.tuple({o.integer(3)});
  ff.kw = o.dict({{"k", o.none}});
  ff.x = o.list({});
  ff.c = o.real(2.5);
  ff.fr = o.img.str("outer");
  Addr code = o.img.code("f", "/app.py", 10, {});
  o.img.put<std::int32_t>(code, l.code_argcount, 2);
  o.img.put<std::int32_t>(code, l.code_kwonlyargcount, 0);
  o.img.put<std::int32_t>(code, l.code_flags, static_cast<std::int32_t>(l.co_varargs | l.co_varkeywords));
  std::vector<Addr> slots;
  Addr frame;
  if (l.frame_model == FrameModel::FrameObject) {
    o.img.put<Addr>(code, l.code_varnames, o.names({"a", "b", "args", "kw", "x", "y"}));
    o.img.put<std::int32_t>(code, l.code_nlocals, 6);
    o.img.put<Addr>(code, l.code_cellvars, o.names({"c"}));
    o.img.put<Addr>(code, l.code_freevars, o.names({"fr"}));
    slots = {ff.a, ff.b, ff.args, ff.kw, ff.x, 0, o.cell(ff.c), o.cell(ff.fr)};
    frame = o.img.alloc(static_cast<std::size_t>(l.frame_size) + 8 * slots.size());
    o.img.put<Addr>(frame, l.frame_code, code);
    for (std::size_t i = 0; i < slots.size(); ++i) o.img.put<Addr>(frame, l.frame_localsplus + 8 * i, slots[i]);
  } else {
    const auto local = static_cast<std::uint8_t>(l.co_fast_local), cell = static_cast<std::uint8_t>(l.co_fast_cell),
               free = static_cast<std::uint8_t>(l.co_fast_free);
    o.img.put<Addr>(code, l.code_localsplusnames, o.names({"a", "b", "args", "kw", "x", "y", "c", "fr"}));
    o.img.put<Addr>(code, l.code_localspluskinds, o.img.bytes({local, local, local, local, local, local, cell, free}));
    o.img.put<std::int32_t>(code, l.code_nlocalsplus, 8);
    slots = {ff.a, ff.b, ff.args, ff.kw, ff.x, 0, o.cell(ff.c), o.cell(ff.fr)};
    frame = o.img.alloc(static_cast<std::size_t>(l.iframe_size) + 8 * slots.size());
    o.img.put<Addr>(frame, l.iframe_code, code);
    for (std::size_t i = 0; i < slots.size(); ++i) o.img.put<Addr>(frame, l.iframe_localsplus + 8 * i, slots[i]);
  }
  ff.frame.frame = frame;
  ff.frame.code = code;
  return ff;
}

}  // namespace

TEST_CASE("locals of a function frame: arguments, locals, cells and free variables, in every version", "[locals]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    auto ff = function_frame(o);
    Addr globals = o.dict({{"G", o.integer(9)}});
    const Layout& l = o.l;
    bool old = l.frame_model == FrameModel::FrameObject;
    o.img.put<Addr>(ff.frame.frame, old ? l.frame_f_globals : l.iframe_f_globals, globals);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    auto fl = frame_locals(mem, state, ff.frame);
    CHECK(fl.problem.empty());
    std::vector<std::tuple<std::string, LocalKind, Addr>> got;
    for (const auto& v : fl.locals) got.emplace_back(v.name, v.kind, v.value);
    std::vector<std::tuple<std::string, LocalKind, Addr>> want{
        {"a", LocalKind::Argument, ff.a}, {"b", LocalKind::Argument, ff.b}, {"args", LocalKind::Argument, ff.args},
        {"kw", LocalKind::Argument, ff.kw}, {"x", LocalKind::Local, ff.x},   {"c", LocalKind::Cell, ff.c},
        {"fr", LocalKind::Free, ff.fr}};
    CHECK(got == want);
    CHECK(fl.globals == globals);
    CHECK(fl.f_locals == 0);
  }
}

TEST_CASE("locals of a module frame come from its f_locals dict", "[locals]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    Addr g = o.integer(5);
    Addr globals = o.dict({{"CONFIG", g}});
    PyFrame f = o.namespace_frame("<module>", globals, globals);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    auto fl = frame_locals(mem, state, f);
    REQUIRE(fl.locals.size() == 1);
    CHECK(fl.locals[0].name == "CONFIG");
    CHECK(fl.locals[0].kind == LocalKind::Dict);
    CHECK(fl.locals[0].value == g);
    CHECK(fl.f_locals == globals);
  }
}

TEST_CASE("garbage frames and code objects give fewer locals and a problem, never an exception", "[locals]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Values o(minor);
    auto ff = function_frame(o);
    Addr junk = o.img.alloc(2048);
    std::mt19937_64 rng(minor);
    for (int i = 0; i < 256; ++i) o.img.put<std::uint64_t>(junk, 8 * i, rng());
    auto state = o.state(o.dict({}));
    const Layout& l = o.l;
    bool old = l.frame_model == FrameModel::FrameObject;
    // the names tuple replaced by junk
    o.img.put<Addr>(ff.frame.code, old ? l.code_varnames : l.code_localsplusnames, junk);
    {
      auto mem = o.img.reader();
      FrameLocals fl;
      CHECK_NOTHROW(fl = frame_locals(mem, state, ff.frame));
      CHECK_FALSE(fl.problem.empty());
    }
    // a frame and a code object that are junk, and ones that are not mapped
    auto mem = o.img.reader();
    for (Addr f : {junk, junk + 64, Image::kUnmapped, Addr{0}}) {
      PyFrame p;
      p.frame = f;
      p.code = junk + 128;
      FrameLocals fl;
      CHECK_NOTHROW(fl = frame_locals(mem, state, p));
      CHECK(fl.locals.size() <= 512);
    }
    PyFrame p;
    p.frame = Image::kUnmapped;
    p.code = Image::kUnmapped;
    CHECK_FALSE(frame_locals(mem, state, p).problem.empty());
  }
}
