// Exceptions, instances of classes defined in Python and subclasses of the
// built-in containers as values, on synthetic images laid out with each
// version's tables (3.6 - 3.15): BaseException's repr of the args, libpython's
// <Foo(a=1) at remote 0x…> of an instance's __dict__, managed dict or
// __slots__, bounded in items and depth, cycles, and garbage (a __dict__
// that holds its instance, a huge args tuple, an unmapped dict or args
// pointer, junk types) that gives a marked placeholder, never an exception.
#include <catch2/catch.hpp>

#include <random>

#include "pyhang/base/format.hpp"
#include "pyhang/cpython/values.hpp"
#include "support/cpython_objects.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

namespace {

struct Instances : Objects {
  explicit Instances(int minor) : Objects(minor) {}

  std::uint64_t flag(std::int64_t bit) const { return static_cast<std::uint64_t>(bit); }
  void add_flags(Addr type, std::uint64_t flags) {
    img.put<std::uint64_t>(type, l.type_tp_flags, img.get<std::uint64_t>(type, l.type_tp_flags) | flags);
  }

  // A class defined in Python whose instances keep a __dict__ at kDictOffset.
  Addr heap_class(const std::string& name) {
    Addr t = type_with_dict(name);
    add_flags(t, flag(l.tpflags_heaptype));
    return t;
  }
  // An exception type (built-in, or `heap` for one defined in Python).
  Addr exception_type(const std::string& name, bool heap = false) {
    Addr t = heap ? heap_class(name) : img.type(name, 0);
    add_flags(t, flag(l.tpflags_base_exc_subclass));
    return t;
  }
  Addr exception(Addr type, Addr args) {
    Addr e = img.alloc(static_cast<std::size_t>(l.exception_args) + 64);
    img.put<Addr>(e, l.object_ob_type, type);
    img.put<Addr>(e, l.exception_args, args);
    return e;
  }
  // A class defined in Python with __slots__ `names` (at offsets 16, 24, ...
  // after `first`), no __dict__, derived from `base` (0: object).
  Addr slots_class(const std::string& name, const std::vector<std::string>& names, std::int64_t first, Addr base) {
    Addr t = img.type(name, flag(l.tpflags_heaptype));
    std::vector<MemberDef> members;
    for (std::size_t i = 0; i < names.size(); ++i)
      members.push_back({img.cstring(names[i]), static_cast<std::int32_t>(l.t_object_ex),
                         first + 8 * static_cast<std::int64_t>(i)});
    member_table(t, members, base);
    return t;
  }
};

std::string at(Addr a) { return " at remote " + hex(a) + ">"; }

}  // namespace

using namespace pyhang::cpython::testing;

TEST_CASE("exceptions render as BaseException's repr of their args, in every version", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr runtime = o.exception_type("RuntimeError"), empty = o.exception_type("_queue.Empty");
    Addr mine = o.exception_type("MyError", true);
    Addr one = o.exception(runtime, o.tuple({o.img.str("I am an error")}));
    Addr two = o.exception(runtime, o.tuple({o.integer(2), o.img.str("No such file")}));
    Addr none = o.exception(empty, o.tuple({}));
    Addr user = o.exception(mine, o.tuple({o.list({o.integer(1)})}));
    Addr nested = o.exception(runtime, o.tuple({user}));
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    CHECK(r.render(one).repr == "RuntimeError('I am an error')");
    CHECK(r.render(two).repr == "RuntimeError(2, 'No such file')");
    CHECK(r.render(none).repr == "Empty()");
    CHECK(r.render(user).repr == "MyError([1])");
    CHECK(r.render(nested).repr == "RuntimeError(MyError([1]))");
    CHECK(r.render(one).complete);
    CHECK(r.render(one).type == "RuntimeError");
  }
}

TEST_CASE("an exception's args are bounded, its cycles and unreadable args marked", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr type = o.exception_type("ValueError");
    std::vector<Addr> many;
    for (int i = 0; i < 1000; ++i) many.push_back(o.integer(i));
    Addr huge = o.exception(type, o.tuple(many));
    Addr self = o.exception(type, 0);
    o.img.put<Addr>(self, o.l.exception_args, o.tuple({self}));
    Addr unmapped = o.exception(type, Image::kUnmapped);
    Addr not_tuple = o.exception(type, o.integer(5));
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    auto v = r.render(huge);
    CHECK(v.repr == "ValueError(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...(1000 items))");
    CHECK_FALSE(v.complete);
    CHECK(r.render(self).repr == "ValueError(ValueError(...))");
    v = r.render(unmapped);
    CHECK(v.repr == "ValueError(<unreadable at " + hex(unmapped) + ">)");
    CHECK_FALSE(v.complete);
    CHECK(says(v.problem, ReadWhy::NotA, {{ReadPart::ExceptionArgs, unmapped}, {ReadPart::Tuple, Image::kUnmapped}}));
    v = r.render(not_tuple);
    CHECK(v.repr == "ValueError(<unreadable at " + hex(not_tuple) + ">)");
    REQUIRE(v.problem.path.size() == 2);
    CHECK(v.problem.why == ReadWhy::NotA);
    CHECK(v.problem.path[0] == ReadStep{ReadPart::ExceptionArgs, not_tuple, {}, 0});
    CHECK(v.problem.path[1].part == ReadPart::Tuple);
  }
}

TEST_CASE("instances of classes defined in Python show their __dict__ as libpython does", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr foo = o.heap_class("Foo");
    Addr plain = o.instance(foo, {{"an_int", o.integer(42)}, {"name", o.img.str("x")}});
    Addr bare = o.instance(foo, {});
    Addr no_dict = o.instance(foo, {});
    o.img.put<Addr>(no_dict, Objects::kDictOffset, 0);  // no attribute set yet
    Addr inner = o.instance(foo, {{"items", o.list({o.none})}});
    Addr outer = o.instance(foo, {{"child", inner}});
    Addr p = 0, q = 0;
    if (minor >= 11) {  // a managed dict: values kept with the object (3.11 - 3.12 before it, 3.13+ after it)
      Addr managed = o.managed_type("Point");
      o.add_flags(managed, o.flag(o.l.tpflags_heaptype));
      p = o.managed_instance(managed, {{"x", o.integer(1)}, {"y", o.img.str("two")}});
      q = o.managed_instance(managed, {{"x", o.integer(3)}, {"y", o.none}}, true);
    }
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    auto v = r.render(plain);
    CHECK(v.repr == "<Foo(an_int=42, name='x')" + at(plain));
    CHECK(v.complete);
    CHECK(v.type == "Foo");
    CHECK(r.render(bare).repr == "<Foo" + at(bare));
    CHECK(r.render(no_dict).repr == "<Foo" + at(no_dict));
    CHECK(r.render(no_dict).complete);
    CHECK(r.render(outer).repr == "<Foo(child=<Foo(items=[None])" + at(inner) + ")" + at(outer));
    if (minor >= 11) {
      CHECK(r.render(p).repr == "<Point(x=1, y='two')" + at(p));
      CHECK(r.render(q).repr == "<Point(x=3, y=None)" + at(q));
    }
  }
}

TEST_CASE("instances are bounded in attributes and depth; one inside itself is <Foo(...)>", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr foo = o.heap_class("Foo");
    std::vector<std::pair<std::string, Addr>> attrs;
    for (int i = 0; i < 40; ++i) attrs.emplace_back("a" + std::to_string(i), o.integer(i));
    Addr wide = o.instance(foo, attrs);
    Addr cyclic = o.instance(foo, {});
    o.img.put<Addr>(cyclic, Objects::kDictOffset, o.dict({{"self", cyclic}}));  // a __dict__ that holds its instance
    Addr deep = o.instance(foo, {{"next", o.instance(foo, {{"next", o.instance(foo, {{"next", o.instance(foo, {})}})}})}});
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueLimits lim;
    lim.items = 3;
    ValueRenderer r(mem, state, lim);
    auto v = r.render(wide);
    CHECK(v.repr == "<Foo(a0=0, a1=1, a2=2, ...)" + at(wide));
    CHECK_FALSE(v.complete);
    v = r.render(cyclic);
    CHECK(v.repr == "<Foo(self=<Foo(...)" + at(cyclic) + ")" + at(cyclic));
    CHECK(v.complete);
    v = r.render(deep);
    CHECK(v.repr.starts_with("<Foo(next=<Foo(next=<Foo(next=<Foo(...) at remote "));
    CHECK_FALSE(v.complete);
  }
}

TEST_CASE("__slots__ of an instance and of its classes' bases are its attributes", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr base = o.slots_class("Base", {"z"}, 16, 0);
    Addr sub = o.slots_class("Sub", {"x", "y"}, 24, base);
    Addr s = o.img.alloc(48);
    o.img.put<Addr>(s, o.l.object_ob_type, sub);
    o.img.put<Addr>(s, 16, o.integer(1));
    o.img.put<Addr>(s, 24, o.img.str("a"));  // y (at 32) never assigned: NULL
    Addr unset = o.img.alloc(48);
    o.img.put<Addr>(unset, o.l.object_ob_type, sub);
    Addr junk_members = o.slots_class("Junk", {}, 16, 0);
    o.img.put<Addr>(junk_members, o.l.type_tp_members, Image::kUnmapped);
    Addr j = o.object(junk_members);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    CHECK(r.render(s).repr == "<Sub(z=1, x='a')" + at(s));
    CHECK(r.render(unset).repr == "<Sub" + at(unset));
    CHECK(r.render(j).repr == "<Junk" + at(j));
  }
}

TEST_CASE("an instance whose __dict__ pointer is unmapped says so, marked incomplete", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr foo = o.heap_class("Foo");
    Addr lost = o.instance(foo, {});
    o.img.put<Addr>(lost, Objects::kDictOffset, Image::kUnmapped);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    auto v = r.render(lost);
    CHECK(v.repr == "<Foo" + at(lost));
    CHECK_FALSE(v.complete);
    CHECK(says(v.problem, ReadWhy::NotA, {{ReadPart::Object, lost}, {ReadPart::InstanceDict, Image::kUnmapped}}));
  }
}

TEST_CASE("subclasses of list, tuple and dict show their items, named by the subclass; metaclass instances are classes",
          "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    auto heap = o.flag(o.l.tpflags_heaptype);
    Addr my_list = o.img.type("MyList", heap | o.flag(o.l.tpflags_list_subclass));
    Addr my_dict = o.img.type("MyDict", heap | o.flag(o.l.tpflags_dict_subclass));
    Addr pair = o.img.type("Pair", heap | o.flag(o.l.tpflags_tuple_subclass));
    Addr l = o.list({o.integer(1), o.integer(2)});
    o.img.put<Addr>(l, o.l.object_ob_type, my_list);
    Addr d = o.dict({{"a", o.integer(1)}});
    o.img.put<Addr>(d, o.l.object_ob_type, my_dict);
    Addr t = o.tuple({o.integer(1), o.img.str("b")});
    o.img.put<Addr>(t, o.l.object_ob_type, pair);
    Addr meta = o.img.type("ABCMeta", heap | o.flag(o.l.tpflags_type_subclass));
    Addr cls = o.img.type("Widget", heap);
    o.img.put<Addr>(cls, o.l.object_ob_type, meta);
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    CHECK(r.render(l).repr == "MyList([1, 2])");
    CHECK(r.render(d).repr == "MyDict({'a': 1})");
    CHECK(r.render(t).repr == "Pair((1, 'b'))");
    CHECK(r.render(cls).repr == "<class 'Widget'>");
  }
}

TEST_CASE("junk instances and exceptions give a bounded placeholder, never an exception", "[values]") {
  for (int minor = 6; minor <= 15; ++minor) {
    INFO("3." << minor);
    Instances o(minor);
    Addr junk = o.img.alloc(4096);
    std::mt19937_64 rng(minor * 13);
    for (int i = 0; i < 512; ++i) o.img.put<std::uint64_t>(junk, 8 * i, rng());
    for (int i = 0; i < 64; ++i) o.img.put<Addr>(junk, 8 * (i * 7 % 512), junk + 8 * (rng() % 512));
    // types that say "class defined in Python" or "exception" over junk
    Addr heap = o.img.type("Junk", o.flag(o.l.tpflags_heaptype) | o.flag(o.l.tpflags_managed_dict > 0 ? o.l.tpflags_managed_dict : 0));
    o.img.put<std::int64_t>(heap, o.l.type_dictoffset, 24);
    o.img.put<Addr>(heap, o.l.type_tp_members, junk + 64);
    o.img.put<Addr>(heap, o.l.type_tp_base, heap);  // its own base: the walk up is bounded
    Addr exc = o.exception_type("JunkError", true);
    std::vector<Addr> objs;
    for (int i = 0; i < 64; ++i) {
      Addr a = o.img.alloc(64);
      o.img.put<Addr>(a, o.l.object_ob_type, i % 2 ? heap : exc);
      for (int w = 1; w < 8; ++w) o.img.put<Addr>(a, 8 * w, i % 3 ? junk + 8 * (rng() % 512) : rng());
      objs.push_back(a);
    }
    auto state = o.state(o.dict({}));
    auto mem = o.img.reader();
    ValueRenderer r(mem, state);
    for (Addr a : objs) {
      RenderedValue v;
      CHECK_NOTHROW(v = r.render(a));
      CHECK_FALSE(v.repr.empty());
      CHECK(v.repr.size() <= 1024 + 3);
    }
  }
}
