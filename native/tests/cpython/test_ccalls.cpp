// The C callable a frame calls (cpython/ccalls.cpp), on synthetic 3.14 and
// 3.15 frames laid out with their tables: each kind of C callable named as
// CPython's repr() names it, found only at the slot the call instruction
// names below the saved stack pointer; garbage, a heap type, a stack pointer
// outside the frame give nothing, and 3.6 - 3.13 frames without readable code
// nothing either (their depths: test_bytecode.cpp, real processes: gdbext).
#include <catch2/catch.hpp>

#include <random>

#include "pyhang/base/format.hpp"
#include "support/cpython_image.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;

namespace {

struct CallWorld {
  const Layout& l;
  Image img;
  Addr module_type, cfunction_type, method_descr_type, wrapper_descr_type, method_wrapper_type, type_type;
  Addr tuple_type;

  explicit CallWorld(int minor) : l(testing::layout(minor)), img(l) {
    module_type = img.type("module", 0);
    cfunction_type = img.type("builtin_function_or_method", 0);
    method_descr_type = img.type("method_descriptor", 0);
    wrapper_descr_type = img.type("wrapper_descriptor", 0);
    method_wrapper_type = img.type("method-wrapper", 0);
    type_type = img.type("type", 0);
    tuple_type = img.type("tuple", static_cast<std::uint64_t>(l.tpflags_tuple_subclass));
  }

  Addr object(Addr type, std::size_t size = 64) {
    Addr o = img.alloc(size);
    img.put<Addr>(o, l.object_ob_type, type);
    return o;
  }
  Addr names(const std::vector<std::string>& items) {
    Addr t = img.alloc(static_cast<std::size_t>(l.tuple_ob_item) + 8 * items.size());
    img.put<Addr>(t, l.object_ob_type, tuple_type);
    img.put<std::int64_t>(t, l.var_ob_size, static_cast<std::int64_t>(items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) img.put<Addr>(t, l.tuple_ob_item + 8 * i, img.str(items[i]));
    return t;
  }
  // A module-level C function (self the module) or one bound to `self`.
  Addr builtin(const std::string& name, Addr self, const std::string& module = "") {
    Addr def = img.alloc(32);
    img.put<Addr>(def, l.methoddef_name, img.cstring(name));
    Addr f = object(cfunction_type);
    img.put<Addr>(f, l.cfunction_ml, def);
    img.put<Addr>(f, l.cfunction_self, self);
    img.put<Addr>(f, l.cfunction_module, module.empty() ? 0 : img.str(module));
    return f;
  }
  Addr descriptor(Addr type, const std::string& owner, const std::string& name) {
    Addr d = object(type);
    img.put<Addr>(d, l.descr_type, img.type(owner, 0));
    img.put<Addr>(d, l.descr_name, img.str(name));
    return d;
  }

  // A frame of a code object using `code_names`, whose instruction is
  // (opcode, oparg) after `before`, and whose value stack holds `stack`
  // (bottom first) with the stack pointer just above it.
  PyFrame frame(const std::vector<std::string>& code_names, int opcode, int oparg, const std::vector<Addr>& stack,
                int before = 0) {
    Addr code = img.alloc(static_cast<std::size_t>(l.code_size));
    img.put<std::int32_t>(code, l.code_nlocalsplus, 1);
    img.put<std::int32_t>(code, l.code_stacksize, 6);
    img.put<Addr>(code, l.code_names, names(code_names));
    Addr instructions = img.alloc(16);
    std::uint8_t units[4] = {static_cast<std::uint8_t>(before), 0, static_cast<std::uint8_t>(opcode),
                             static_cast<std::uint8_t>(oparg)};
    img.put_bytes(instructions, units, sizeof units);
    Addr f = img.alloc(static_cast<std::size_t>(l.iframe_localsplus) + 8 * 8);
    img.put<Addr>(f, l.iframe_instr, instructions + 2);
    Addr base = f + static_cast<Addr>(l.iframe_localsplus) + 8;  // after the one local
    for (std::size_t i = 0; i < stack.size(); ++i) img.put<Addr>(base, static_cast<std::int64_t>(8 * i), stack[i]);
    img.put<Addr>(f, l.iframe_stackpointer, base + 8 * stack.size());
    PyFrame out;
    out.function = "worker";
    out.frame = f;
    out.code = code;
    return out;
  }

  std::optional<CCall> call_of(const PyFrame& f) {
    auto mem = img.reader();
    Options opts;
    detail::ObjectReader objects(mem, l, opts);
    detail::CodeCache codes(objects);
    return detail::frame_c_call(objects, codes, f);
  }
};

}  // namespace

TEST_CASE("the callable of a call instruction is the deepest slot it pops", "[ccalls]") {
  for (int minor : {14, 15}) {
    const Layout& l = testing::layout(minor);
    INFO("3." << minor);
    CHECK(detail::callable_depth(l, static_cast<int>(l.op_call), 2) == 4);     // callable, self, 2 args
    CHECK(detail::callable_depth(l, static_cast<int>(l.op_call_kw), 1) == 4);  // + the names of the keywords
    CHECK(detail::callable_depth(l, static_cast<int>(l.op_call_function_ex), 0) == 4);
    CHECK(!detail::callable_depth(l, static_cast<int>(l.op_extended_arg), 0));
  }
  // A specialized form counts as its family: some opcode other than CALL deoptimizes to it on 3.14.
  const Layout& l = testing::layout(14);
  int specialized = -1;
  for (int op = 0; op < 256 && specialized < 0; ++op)
    if (op != l.op_call && detail::callable_depth(l, op, 0) == 2) specialized = op;
  CHECK(specialized > 0);
  // Versions whose headers give no stack effects say nothing.
  CHECK(!detail::callable_depth(testing::layout(11), static_cast<int>(testing::layout(11).op_call), 0));
}

TEST_CASE("each kind of C callable is named as CPython's repr names it", "[ccalls]") {
  for (int minor : {14, 15}) {
    INFO("3." << minor);
    CallWorld w(minor);
    const int call = static_cast<int>(w.l.op_call);
    Addr module = w.object(w.module_type);
    Addr arg = w.object(w.type_type);

    Addr sleep = w.builtin("sleep", module, "time");
    auto c = w.call_of(w.frame({"time", "sleep"}, call, 1, {sleep, 0, arg}));
    REQUIRE(c);
    CHECK(c->qualname == "time.sleep");
    CHECK(c->repr == "<built-in function sleep>");
    CHECK(c->type == "builtin_function_or_method");
    CHECK(c->callable == sleep);
    CHECK(c->name_in_code);

    Addr lock = w.object(w.img.type("_thread.lock", 0));
    c = w.call_of(w.frame({"acquire"}, call, 0, {w.builtin("acquire", lock), 0}));
    REQUIRE(c);
    CHECK(c->qualname == "_thread.lock.acquire");
    CHECK(c->repr == "<built-in method acquire of _thread.lock object at " + hex(lock) + ">");

    c = w.call_of(w.frame({"sort"}, call, 0, {w.descriptor(w.method_descr_type, "list", "sort"), arg}));
    REQUIRE(c);
    CHECK(c->qualname == "list.sort");
    CHECK(c->repr == "<method 'sort' of 'list' objects>");

    Addr slot = w.descriptor(w.wrapper_descr_type, "list", "__init__");
    c = w.call_of(w.frame({"__init__"}, call, 1, {slot, arg, arg}));
    REQUIRE(c);
    CHECK(c->repr == "<slot wrapper '__init__' of 'list' objects>");

    Addr mine = w.object(w.img.type("MyList", static_cast<std::uint64_t>(w.l.tpflags_heaptype)));
    Addr bound = w.object(w.method_wrapper_type);
    w.img.put<Addr>(bound, w.l.object_size, slot);
    w.img.put<Addr>(bound, w.l.object_size + 8, mine);
    c = w.call_of(w.frame({"__init__"}, call, 1, {bound, 0, arg}));
    REQUIRE(c);
    CHECK(c->qualname == "list.__init__");
    CHECK(c->repr == "<method-wrapper '__init__' of MyList object at " + hex(mine) + ">");

    Addr list_type = w.img.type("list", 0);
    w.img.put<Addr>(list_type, w.l.object_ob_type, w.type_type);
    c = w.call_of(w.frame({"list"}, call, 1, {list_type, 0, arg}));
    REQUIRE(c);
    CHECK(c->repr == "<class 'list'>");
  }
}

TEST_CASE("a callable whose name the code does not use is likely only", "[ccalls]") {
  CallWorld w(14);
  Addr f = w.builtin("sleep", w.object(w.module_type), "time");
  auto c = w.call_of(w.frame({"time", "wait"}, static_cast<int>(w.l.op_call), 0, {f, 0}));
  REQUIRE(c);
  CHECK(!c->name_in_code);
}

TEST_CASE("no callable where the slot, the instruction or the object says otherwise", "[ccalls]") {
  CallWorld w(14);
  const int call = static_cast<int>(w.l.op_call);
  Addr module = w.object(w.module_type);
  Addr sleep = w.builtin("sleep", module, "time");
  // One more argument on the stack than the oparg says: the slot named holds NULL.
  CHECK(!w.call_of(w.frame({"sleep"}, call, 0, {sleep, 0, module})));
  // More popped than the stack holds: the slot would be a local.
  CHECK(!w.call_of(w.frame({"sleep"}, call, 3, {sleep, 0})));
  // Not a call.
  CHECK(!w.call_of(w.frame({"sleep"}, static_cast<int>(w.l.op_extended_arg), 0, {sleep, 0})));
  // A prefix widens the oparg: left alone.
  CHECK(!w.call_of(w.frame({"sleep"}, call, 0, {sleep, 0}, static_cast<int>(w.l.op_extended_arg))));
  // A heap type named like one of CPython's callables is someone else's.
  Addr fake = w.object(w.img.type("builtin_function_or_method", static_cast<std::uint64_t>(w.l.tpflags_heaptype)));
  CHECK(!w.call_of(w.frame({"sleep"}, call, 0, {fake, 0})));
  // A Python class called.
  Addr cls = w.img.type("MyList", static_cast<std::uint64_t>(w.l.tpflags_heaptype));
  w.img.put<Addr>(cls, w.l.object_ob_type, w.type_type);
  CHECK(!w.call_of(w.frame({"MyList"}, call, 0, {cls, 0})));
  // A stack pointer outside the frame's value stack.
  PyFrame f = w.frame({"sleep"}, call, 0, {sleep, 0});
  w.img.put<Addr>(f.frame, w.l.iframe_stackpointer, f.frame + 0x100000);
  CHECK(!w.call_of(f));
  // A tagged reference is the object it tags.
  CHECK(w.call_of(w.frame({"sleep"}, call, 0, {sleep | 1, 0})));
}

TEST_CASE("garbage in the callable's slot or the frame gives nothing and never throws", "[ccalls]") {
  CallWorld w(14);
  std::mt19937_64 rng(29);
  const int call = static_cast<int>(w.l.op_call);
  for (int i = 0; i < 300; ++i) {
    Addr junk = i % 3 == 0 ? rng() : i % 3 == 1 ? Image::kBase + (rng() % (1 << 20)) : Image::kUnmapped + 8 * i;
    PyFrame f = w.frame({"sleep"}, call, static_cast<int>(rng() % 4), {junk, junk, junk, junk});
    if (i % 5 == 0) w.img.put<Addr>(f.frame, w.l.iframe_stackpointer, rng());
    if (i % 7 == 0) w.img.put<Addr>(f.frame, w.l.iframe_instr, rng());
    if (i % 11 == 0) f.code = Image::kUnmapped;
    CHECK_NOTHROW(w.call_of(f));
  }
}

TEST_CASE("only the innermost frame and frames C called back from are looked at", "[ccalls]") {
  CallWorld w(14);
  const int call = static_cast<int>(w.l.op_call);
  Addr sorted = w.builtin("sorted", w.object(w.module_type), "builtins");
  std::vector<PyFrame> frames{w.frame({"sorted"}, call, 0, {sorted, 0}), w.frame({"sorted"}, call, 0, {sorted, 0}),
                              w.frame({"sorted"}, call, 0, {sorted, 0})};
  frames[1].entry_frame = true;  // C called into the loop for frame 1: frame 2 called C
  auto mem = w.img.reader();
  Options opts;
  detail::ObjectReader objects(mem, w.l, opts);
  detail::CodeCache codes(objects);
  detail::add_c_calls(objects, codes, frames);
  CHECK(frames[0].c_call);
  CHECK(!frames[1].c_call);  // frame 0 is no entry frame: frame 1 called it directly
  CHECK(frames[2].c_call);
}

TEST_CASE("3.6 - 3.13 frames whose code cannot be read show no callable", "[ccalls]") {
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    const Layout& l = testing::layout(minor);
    Image img(l);
    std::vector<PyFrame> frames(2);
    frames[0].frame = img.alloc(256);
    frames[0].code = img.alloc(256);
    frames[1] = frames[0];
    auto mem = img.reader();
    Options opts;
    detail::ObjectReader objects(mem, l, opts);
    detail::CodeCache codes(objects);
    detail::add_c_calls(objects, codes, frames);
    CHECK(!frames[0].c_call);
    CHECK(!detail::frame_c_call(objects, codes, frames[0]));
  }
}
