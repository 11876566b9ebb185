// The Python object reader on synthetic images laid out with the generated
// tables and the hand-written object table, for every version: numbers,
// str, containers, dict lookups, module globals through sys.modules;
// garbage gives nothing, never a crash.
#include <catch2/catch.hpp>

#include <limits>
#include <random>

#include "pyhang/cpython/pyobjects.hpp"
#include "support/read_problem.hpp"
#include "support/cpython_objects.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

using namespace pyhang::cpython::testing;

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
    ReadProblem why;
    CHECK(objs.module("absent", &why) == 0);
    CHECK(says(why, ReadWhy::NotImported, {{ReadPart::Module, 0}}));
    CHECK(why.name == "absent");
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
      ReadProblem why;
      (void)objs.value(a);
      (void)objs.integer(a, &why);
      (void)objs.str(a, &why);
      (void)objs.length(a, &why);
      (void)objs.dict_items(a, 100, &why);
      (void)objs.sequence_items(a, 100, &why);
      (void)objs.attribute(a, "x", &why);
      CHECK_FALSE(why.empty());
    }
    ReadProblem why;
    CHECK(objs.module_attribute("n", "x", &why) == 0);
    CHECK_FALSE(why.empty());
  }
  PythonState unknown;
  unknown.major = 3;
  unknown.minor = 99;
  ImageReader empty;
  PyObjects objs(empty, unknown);
  CHECK_FALSE(objs.ok());
  ReadProblem why;
  CHECK(objs.module("sys", &why) == 0);
  CHECK(says(why, ReadWhy::NoLayout, {{ReadPart::Object, 0}}));
}

// Sizes that made the int decoder overflow (UndefinedBehaviorSanitizer):
// ob_size = INT64_MIN (its negation) and a digit count whose bit count
// overflows.  Each is "does not fit 64 bits", never a wrapped number.
TEST_CASE("ints of impossible sizes are refused, never decoded with an overflow", "[pyobjects]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr n = o.integer(5);
    Addr huge = o.integer(7);
    if (o.l.has(o.l.long_lv_tag)) {
      o.img.put<std::uint64_t>(n, o.l.long_lv_tag, ~std::uint64_t{0} & ~std::uint64_t{3});  // ndigits 2^61-1, sign 0
      o.img.put<std::uint64_t>(huge, o.l.long_lv_tag, (std::uint64_t{1} << 62) | 2);
    } else {
      o.img.put<std::int64_t>(n, o.l.var_ob_size, std::numeric_limits<std::int64_t>::min());
      o.img.put<std::int64_t>(huge, o.l.var_ob_size, std::numeric_limits<std::int64_t>::max());
    }
    auto st = o.state(o.dict({}));
    auto mem = o.img.reader();
    PyObjects objs(mem, st);
    ReadProblem why;
    CHECK(!objs.integer(n, &why));
    CHECK(says(why, ReadWhy::TooLarge, {{ReadPart::Int, n}}));
    CHECK(!objs.integer(huge));
  }
}
