// Which variable reaches an object, on synthetic images of every version:
// __main__'s globals first, then attributes of the instances they refer
// to, then other modules' globals and their instances' attributes (instance
// dicts, and 3.11+ managed dicts and inline values); limits hold; garbage
// gives nothing.
#include <catch2/catch.hpp>

#include "pyhang/cpython/object_names.hpp"
#include "support/cpython_objects.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

TEST_CASE("objects are named by the __main__ global, the instance attribute or the other module's global that "
          "reaches them, in every version",
          "[cpython][names]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr lock_type = o.img.type("_thread.lock", 0);
    Addr config = o.object(lock_type), cached = o.object(lock_type), module_lock = o.object(lock_type);
    Addr registered = o.object(lock_type), nowhere = o.object(lock_type);
    Addr cache_type = o.type_with_dict("Cache");
    Addr cache = o.instance(cache_type, {{"size", o.integer(3)}, {"_lock", cached}});
    // 3.11+: the registry keeps its attributes in a managed dict (inline values on 3.13)
    Addr registry = minor >= 11 ? o.managed_instance(o.managed_type("Registry"), {{"_lock", registered}})
                                : o.instance(o.type_with_dict("Registry"), {{"_lock", registered}});
    Addr main = o.module(o.dict({{"config_lock", config}, {"cache", cache}, {"answer", o.integer(42)}}));
    Addr mod = o.module(o.dict({{"REGISTRY", registry}, {"LOCK", module_lock}}));
    // `config` is also a global of mymod: __main__'s name comes first
    Addr other = o.module(o.dict({{"config", config}}));
    Addr modules = o.dict({{"sys", o.module(o.dict({}))}, {"aaa", other}, {"__main__", main}, {"mymod", mod}});
    auto st = o.state(modules);
    auto mem = o.img.reader();

    auto names = object_names(mem, st, {config, cached, module_lock, registered, nowhere, 0});
    REQUIRE(names.count(config));
    CHECK(names[config].module == "__main__");
    CHECK(names[config].variable == "config_lock");
    CHECK(names[config].attribute.empty());
    REQUIRE(names.count(cached));
    CHECK(names[cached].module == "__main__");
    CHECK(names[cached].variable == "cache");
    CHECK(names[cached].attribute == "_lock");
    CHECK(names[cached].owner_type == "Cache");
    CHECK(names[cached].owner == cache);
    REQUIRE(names.count(module_lock));
    CHECK(names[module_lock].module == "mymod");
    CHECK(names[module_lock].variable == "LOCK");
    REQUIRE(names.count(registered));
    CHECK(names[registered].module == "mymod");
    CHECK(names[registered].variable == "REGISTRY");
    CHECK(names[registered].attribute == "_lock");
    CHECK(names[registered].owner_type == "Registry");
    CHECK(!names.count(nowhere));
    CHECK(names.size() == 4);

    // no instance may be read: only globals name anything
    ObjectNameLimits globals_only;
    globals_only.instances = 0;
    auto direct = object_names(mem, st, {config, cached, module_lock, registered}, globals_only);
    CHECK(direct.count(config));
    CHECK(direct.count(module_lock));
    CHECK(!direct.count(cached));
    CHECK(!direct.count(registered));
  }
}

TEST_CASE("garbage modules, globals and instances name nothing and never crash", "[cpython][names]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr lock = o.object(o.img.type("_thread.lock", 0));
    Addr junk = o.img.alloc(64);  // zeros: no type
    Addr bad_instance = o.object(o.type_with_dict("Broken"));  // its dict pointer is 0
    o.img.put<Addr>(bad_instance, 16, Image::kUnmapped);
    Addr main = o.module(o.dict({{"x", junk}, {"y", bad_instance}, {"z", Image::kUnmapped}}));
    Addr modules = o.dict({{"__main__", main}, {"junk", junk}, {"gone", o.module(Image::kUnmapped)}});
    auto st = o.state(modules);
    auto mem = o.img.reader();
    CHECK(object_names(mem, st, {lock}).empty());
    // a global holding an unreadable address still names that address: it is the same value
    CHECK(object_names(mem, st, {Image::kUnmapped})[Image::kUnmapped].variable == "z");
    // no sys.modules at all
    auto none = o.state(Image::kUnmapped);
    CHECK(object_names(mem, none, {lock}).empty());
  }
}

TEST_CASE("thread references: nothing asked is complete, threads without readable frames reach nothing, garbage "
          "frames never crash and make the answer incomplete",
          "[cpython][names]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr lock = o.object(o.img.type("_thread.lock", 0));
    auto st = o.state(o.dict({}));
    auto mem = o.img.reader();
    CHECK(thread_references(mem, st, {}).complete);
    CHECK(thread_references(mem, st, {lock}).by_object.empty());
    // a thread whose only frame has an unreadable code object
    st.threads[0].native_tid = 77;
    st.threads[0].frames.push_back(PyFrame{"f", "/app/f.py", 1, false, Image::kUnmapped, Image::kUnmapped});
    auto r = thread_references(mem, st, {lock});
    CHECK(r.by_object.empty());
    CHECK(!r.complete);
  }
}

TEST_CASE("the modules searched are counted live: deleted entries of sys.modules do not use up the limit",
          "[cpython][names]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    Objects o(minor);
    Addr lock = o.object(o.img.type("_thread.lock", 0));
    // 60 modules imported and removed again (failed optional imports) before the application's
    std::vector<std::pair<Addr, Addr>> modules{{o.img.str("__main__"), o.module(o.dict({}))}};
    for (int i = 0; i < 60; ++i) modules.emplace_back(0, 0);
    modules.emplace_back(o.img.str("app"), o.module(o.dict({{"MODEL_LOCK", lock}})));
    auto st = o.state(o.dict_of(modules));
    auto mem = o.img.reader();
    ObjectNameLimits few;
    few.modules = 4;
    auto names = object_names(mem, st, {lock}, few);
    REQUIRE(names.count(lock));
    CHECK(names[lock].module == "app");
    CHECK(names[lock].variable == "MODEL_LOCK");
  }
}

namespace {

// A frame whose f_locals is a dict of its own (a class body's: not its globals) holding `value` as `x`.
PyFrame frame_holding(Objects& o, Addr value) { return o.namespace_frame("body", o.dict({{"x", value}}), o.dict({})); }

}  // namespace

TEST_CASE("thread references are bounded in frames read in all: many threads each get fewer frames, and a thread "
          "not read whole makes the answer incomplete",
          "[cpython][names]") {
  for (int minor : {6, 10, 11, 13}) {
    INFO("3." << minor);
    Objects o(minor);
    Addr lock = o.object(o.img.type("_thread.lock", 0));
    auto st = o.state(o.dict({}));
    // 10 threads, 12 frames each, the lock in the outermost frame's locals only
    PyFrame plain = frame_holding(o, o.integer(1)), holding = frame_holding(o, lock);
    PyThreadInfo proto = st.threads[0];
    st.threads.clear();
    for (int i = 0; i < 10; ++i) {
      PyThreadInfo t = proto;
      t.native_tid = 100 + i;
      t.frames.assign(11, plain);
      t.frames.push_back(holding);
      st.threads.push_back(t);
    }
    auto mem = o.img.reader();
    // with frames enough in all, every thread reaches it
    auto whole = thread_references(mem, st, {lock});
    CHECK(whole.complete);
    CHECK(whole.by_object[lock].size() == 10);
    // 60 frames in all: 6 a thread, none reaches the outermost: nothing found, and said incomplete
    ReferenceLimits few;
    few.total_frames = 60;
    auto cut = thread_references(mem, st, {lock}, few);
    CHECK(cut.by_object.empty());
    CHECK(!cut.complete);
    // never fewer than least_frames a thread: 12 reach it again
    few.total_frames = 10;
    few.least_frames = 12;
    auto least = thread_references(mem, st, {lock}, few);
    CHECK(least.complete);
    CHECK(least.by_object[lock].size() == 10);
  }
}
