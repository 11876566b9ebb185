// Thread states, frame chains, strings and the GIL on synthetic memory
// images laid out with the generated tables; and garbage that must end in
// a problem or a warning, never a crash or a hang.
#include <catch2/catch.hpp>

#include "pyhang/base/format.hpp"
#include "support/cpython_world.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::layout;
using pyhang::cpython::testing::make_frame;
using pyhang::cpython::testing::InterpreterWorld;
using pyhang::cpython::testing::whole_code_at;


using namespace pyhang::cpython::testing;

TEST_CASE("a thread's frame chain gives function, file and line innermost first, in every version", "[cpython]") {
  for (int minor = 6; minor <= 13; ++minor) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    InterpreterWorld w(l);
    Addr outer_code = w.img.code("main", "/app/main.py", 10, whole_code_at(l, 5));
    Addr inner_code = w.img.code("Worker.wait", "/app/wörker.py", 40, whole_code_at(l, 2));
    Addr outer = make_frame(w.img, outer_code, 0);
    Addr inner = make_frame(w.img, inner_code, outer);
    Addr t = w.img.thread_state(w.interp, inner, 0x7f0000001000, 4242);
    w.img.link_threads(w.interp, {t});
    auto st = w.inspect();
    CHECK(st.status == Status::Ok);
    CHECK(st.warnings.empty());
    REQUIRE(st.threads.size() == 1);
    const auto& th = st.threads[0];
    CHECK(th.tstate == t);
    CHECK(th.thread_id == 0x7f0000001000);
    CHECK(th.problem.empty());
    if (l.has(l.tstate_native_thread_id)) CHECK(th.native_tid == 4242);
    REQUIRE(th.frames.size() == 2);
    // co_qualname on 3.11+, co_name before: the image gives both and the
    // name field holds "<name>_short" when a qualname exists.
    CHECK(th.frames[0].function == "Worker.wait");
    CHECK(th.frames[0].file == "/app/wörker.py");
    CHECK(th.frames[0].line == 42);
    CHECK(th.frames[1].function == "main");
    CHECK(th.frames[1].line == 15);
  }
}

TEST_CASE("PyFrameObject f_lasti is in bytes up to 3.9 and in code units in 3.10", "[cpython]") {
  for (int minor : {9, 10}) {
    const Layout& l = layout(minor);
    InterpreterWorld w(l);
    // [0,4) bytes -> line 2, then line 7 from byte 4 on
    std::vector<std::uint8_t> table = l.linetable == LineTableFormat::Lnotab
                                          ? std::vector<std::uint8_t>{0, 1, 4, 5}
                                          : std::vector<std::uint8_t>{4, 1, 200, 5};
    Addr code = w.img.code("f", "f.py", 1, table);
    Addr frame = w.img.frame_object(code, 2, 0);  // 2 bytes (3.9) or 2 units = 4 bytes (3.10)
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, frame, 1, 1)});
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 1);
    REQUIRE(st.threads[0].frames.size() == 1);
    CHECK(st.threads[0].frames[0].line == (minor == 9 ? 2 : 7));
  }
}

TEST_CASE("3.11 entry frames come from is_entry; incomplete frames are skipped", "[cpython]") {
  const Layout& l = layout(11);
  InterpreterWorld w(l);
  Addr code = w.img.code("g", "g.py", 1, whole_code_at(l, 0));
  w.img.put<std::int32_t>(code, l.code_firsttraceable, 2);
  Addr outer = w.img.interpreter_frame(code, 8, 0, 0, /*is_entry=*/true);
  Addr incomplete = w.img.interpreter_frame(code, 2, outer);  // before instruction 2: not started
  Addr inner = w.img.interpreter_frame(code, 8, incomplete);
  w.img.link_threads(w.interp, {w.img.thread_state(w.interp, inner, 1, 1)});
  auto st = w.inspect();
  REQUIRE(st.threads.size() == 1);
  const auto& frames = st.threads[0].frames;
  REQUIRE(frames.size() == 2);
  CHECK_FALSE(frames[0].entry_frame);
  CHECK(frames[1].entry_frame);
}

TEST_CASE("3.12+ C-stack shim frames are skipped and mark the frame above them as an entry frame", "[cpython]") {
  for (int minor : {12, 13}) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    InterpreterWorld w(l);
    Addr code = w.img.code("h", "h.py", 1, whole_code_at(l, 0));
    Addr shim_code = w.img.code("<shim>", "<shim>", 0, whole_code_at(l, 0));
    Addr outer = w.img.interpreter_frame(code, 4, 0);
    Addr shim = w.img.interpreter_frame(shim_code, 0, outer, static_cast<int>(l.owner_cstack));
    Addr gen = w.img.interpreter_frame(code, 6, shim, static_cast<int>(l.owner_generator));
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, gen, 1, 1)});
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 1);
    const auto& frames = st.threads[0].frames;
    REQUIRE(frames.size() == 2);
    CHECK(frames[0].frame == gen);
    CHECK(frames[0].entry_frame);
    CHECK(frames[1].frame == outer);
    CHECK_FALSE(frames[1].entry_frame);
  }
}

TEST_CASE("str of every kind decodes to UTF-8: ASCII, latin-1, UCS-2, UCS-4", "[cpython]") {
  for (int minor : {6, 11, 12, 13}) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    InterpreterWorld w(l);
    const std::vector<std::pair<std::u32string, std::string>> cases = {
        {U"plain", "plain"},
        {U"caf\u00e9", "caf\xc3\xa9"},
        {U"\u51fd\u6570", "\xe5\x87\xbd\xe6\x95\xb0"},
        {U"x\U0001D518", "x\xf0\x9d\x94\x98"},
    };
    for (const auto& [text, utf8] : cases) {
      Addr code = w.img.code("", "", 1, whole_code_at(l, 0));
      Addr s = w.img.str(text);
      w.img.put<Addr>(code, l.has(l.code_qualname) ? l.code_qualname : l.code_name, s);
      w.img.put<Addr>(code, l.code_filename, s);
      Addr f = make_frame(w.img, code, 0);
      Addr t = w.img.thread_state(w.interp, f, 1, 1);
      w.img.link_threads(w.interp, {t});
      auto st = w.inspect();
      REQUIRE(st.threads.size() == 1);
      REQUIRE(st.threads[0].frames.size() == 1);
      CHECK(st.threads[0].frames[0].function == utf8);
      CHECK(st.threads[0].frames[0].file == utf8);
    }
  }
}

TEST_CASE("garbage frame chains end with a problem: a cycle, an unmapped pointer, a bogus length", "[cpython]") {
  for (int minor : {8, 11, 13}) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    SECTION("cycle") {
      InterpreterWorld w(l);
      Addr code = w.img.code("loop", "l.py", 1, whole_code_at(l, 0));
      Addr a = make_frame(w.img, code, 0);
      Addr b = make_frame(w.img, code, a);
      w.img.put<Addr>(a, l.frame_model == FrameModel::FrameObject ? l.frame_back : l.iframe_previous, b);
      w.img.link_threads(w.interp, {w.img.thread_state(w.interp, b, 1, 1)});
      auto st = w.inspect();
      REQUIRE(st.threads.size() == 1);
      CHECK(st.threads[0].frames.size() == 2);
      CHECK(st.threads[0].problem == ReadProblem{{{ReadPart::Frame, 0, {}, 0}}, ReadWhy::Loops, {}, 0, b});
    }
    SECTION("unmapped frame") {
      InterpreterWorld w(l);
      Addr code = w.img.code("ok", "ok.py", 1, whole_code_at(l, 0));
      Addr f = make_frame(w.img, code, Image::kUnmapped);
      w.img.link_threads(w.interp, {w.img.thread_state(w.interp, f, 1, 1)});
      auto st = w.inspect();
      REQUIRE(st.threads.size() == 1);
      CHECK(st.threads[0].frames.size() == 1);
      CHECK(says(st.threads[0].problem, ReadWhy::Unreadable, {{ReadPart::Frame, Image::kUnmapped}}));
    }
    SECTION("code pointer to something that is not a code object") {
      InterpreterWorld w(l);
      Addr not_code = w.img.str("not code");
      Addr f = make_frame(w.img, not_code, 0);
      w.img.link_threads(w.interp, {w.img.thread_state(w.interp, f, 1, 1)});
      auto st = w.inspect();
      REQUIRE(st.threads.size() == 1);
      if (minor < 13) {  // one frame nobody can name
        CHECK(says(st.threads[0].problem, ReadWhy::NotA, {{ReadPart::Frame, f}, {ReadPart::Code, not_code}}));
        CHECK(st.threads[0].problem.name == "str");
        REQUIRE(st.threads[0].frames.size() == 1);
        CHECK(st.threads[0].frames[0].function == "<unknown>");
      } else {  // 3.13's f_executable may hold another object: not a Python function's frame
        CHECK(st.threads[0].frames.empty());
      }
    }
    SECTION("huge str and bytes lengths") {
      InterpreterWorld w(l);
      Addr code = w.img.code("fine", "fine.py", 1, whole_code_at(l, 0));
      Addr name = w.img.str("name");
      w.img.put<std::int64_t>(name, l.unicode_length, std::int64_t{1} << 60);
      w.img.put<Addr>(code, l.has(l.code_qualname) ? l.code_qualname : l.code_name, name);
      Addr table = w.img.bytes({1, 2});
      w.img.put<std::int64_t>(table, l.var_ob_size, std::int64_t{1} << 62);
      w.img.put<Addr>(code, l.has(l.code_linetable) ? l.code_linetable : l.code_lnotab, table);
      Addr f = make_frame(w.img, code, 0);
      w.img.link_threads(w.interp, {w.img.thread_state(w.interp, f, 1, 1)});
      auto st = w.inspect();
      REQUIRE(st.threads.size() == 1);
      REQUIRE(st.threads[0].frames.size() == 1);
      CHECK(st.threads[0].frames[0].function == "<unknown>");
      CHECK(st.threads[0].frames[0].file == "fine.py");
      CHECK(st.threads[0].frames[0].line == -1);
      CHECK(says(st.threads[0].problem, ReadWhy::Implausible,
                 {{ReadPart::Code, code}, {ReadPart::Field, 0}, {ReadPart::Str, name}}));
      CHECK(st.threads[0].problem.number == std::int64_t{1} << 60);
    }
  }
}

TEST_CASE("a frame whose code pointer is bad is one unknown frame, and the older frames are still walked",
          "[cpython]") {
  for (int minor = 6; minor <= 13; ++minor) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    InterpreterWorld w(l);
    Addr outer_code = w.img.code("main", "/app/main.py", 10, whole_code_at(l, 5));
    Addr inner_code = w.img.code("work", "/app/work.py", 40, whole_code_at(l, 2));
    Addr outer = make_frame(w.img, outer_code, 0);
    Addr older_bad = make_frame(w.img, Image::kUnmapped, outer);   // a code pointer into nothing
    Addr bad = make_frame(w.img, Image::kUnmapped + 0x100, older_bad);
    Addr inner = make_frame(w.img, inner_code, bad);
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, inner, 1, 1)});
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 1);
    const auto& th = st.threads[0];
    REQUIRE(th.frames.size() == 4);
    CHECK(th.frames[0].function == "work");
    CHECK(th.frames[1].function == "<unknown>");
    CHECK(th.frames[1].frame == bad);
    CHECK(th.frames[2].function == "<unknown>");
    CHECK(th.frames[3].function == "main");
    CHECK(th.frames[3].line == 15);
    // the problem names the first bad frame, and how many there were
    CHECK(says(th.problem, ReadWhy::Unreadable, {{ReadPart::Frame, bad}, {ReadPart::Code, Image::kUnmapped + 0x100}}));
    CHECK(th.problem.count == 2);
  }
}

TEST_CASE("a code object whose name or file is unreadable: the problem names the string's address, not the code's",
          "[cpython]") {
  for (int minor = 6; minor <= 13; ++minor) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    InterpreterWorld w(l);
    Addr code = w.img.code("work", "/app/work.py", 40, whole_code_at(l, 2));
    const Addr bad_name = Image::kUnmapped + 0x40;
    w.img.put<Addr>(code, l.has(l.code_qualname) ? l.code_qualname : l.code_name, bad_name);
    Addr frame = make_frame(w.img, code, 0);
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, frame, 1, 1)});
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 1);
    const auto& th = st.threads[0];
    REQUIRE(th.frames.size() == 1);
    CHECK(th.frames[0].function == "<unknown>");
    CHECK(th.frames[0].file == "/app/work.py");  // what could be read still holds
    CHECK(says(th.problem, ReadWhy::Unreadable, {{ReadPart::Code, code}, {ReadPart::Field, 0}, {ReadPart::Str, bad_name}}));
    CHECK(th.problem.path[1].name == "name");
  }
}

// 50 frames f0 (outermost) .. f49 (innermost), on one thread, walked keeping the innermost 20 and
// `outermost` outermost frames, `max_walk` links at most.
static PyThreadInfo deep_thread(const Layout& l, std::size_t outermost, std::size_t max_walk = 1000000) {
  InterpreterWorld w(l);
  Addr f = 0;
  for (int i = 0; i < 50; ++i)
    f = make_frame(w.img, w.img.code("f" + std::to_string(i), "d.py", 1, whole_code_at(l, 0)), f);
  w.img.link_threads(w.interp, {w.img.thread_state(w.interp, f, 1, 1)});
  Options opts;
  opts.max_frames = 20;
  opts.outermost_frames = outermost;
  opts.max_walk = max_walk;
  auto st = w.inspect(opts);
  REQUIRE(st.threads.size() == 1);
  return st.threads[0];
}

TEST_CASE("a stack deeper than the frame limit keeps its innermost and outermost frames, the middle counted",
          "[cpython]") {
  for (int minor : {10, 12}) {
    INFO("3." << minor);
    auto th = deep_thread(layout(minor), 5);
    REQUIRE(th.frames.size() == 25);
    CHECK(th.frames[0].function == "f49");
    CHECK(th.frames[19].function == "f30");
    CHECK(th.frames[20].function == "f4");     // where the program entered the stack
    CHECK(th.frames[24].function == "f0");
    CHECK(th.frames_omitted == 25);
    CHECK(th.frames_omitted_at == 20);
    CHECK(th.problem.empty());                 // nothing unread: every link was followed
  }
}

TEST_CASE("a very long frame chain stops at the walk limit, and without outermost frames at the frame limit",
          "[cpython]") {
  SECTION("past max_walk links the walk stops and says so; the frames kept last are the last walked") {
    auto th = deep_thread(layout(12), 5, 30);
    REQUIRE(th.frames.size() == 25);
    CHECK(th.frames.back().function == "f20");
    CHECK(th.frames_omitted == 5);
    CHECK(th.problem == ReadProblem{{{ReadPart::Frame, 0, {}, 0}}, ReadWhy::StoppedAfter, {}, 30});
  }
  SECTION("no outermost frames kept: the innermost max_frames, then the stop") {
    auto th = deep_thread(layout(12), 0);
    CHECK(th.frames.size() == 20);
    CHECK(th.frames_omitted == 0);
    CHECK(th.problem == ReadProblem{{{ReadPart::Frame, 0, {}, 0}}, ReadWhy::StoppedAfter, {}, 20});
  }
}

TEST_CASE("thread lists are validated: wrong back-pointers and cycles give warnings, not garbage", "[cpython]") {
  for (int minor : {7, 12}) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    SECTION("tstate->interp does not point back (layout mismatch)") {
      InterpreterWorld w(l);
      Addr good = w.img.thread_state(w.interp, 0, 1, 1);
      Addr bad = w.img.thread_state(w.interp + 64, 0, 2, 2);
      w.img.link_threads(w.interp, {good, bad});
      auto st = w.inspect();
      CHECK(st.threads.size() == 1);
      REQUIRE_FALSE(st.warnings.empty());
      CHECK(st.warnings[0].kind == StateProblem::ThreadOfOtherInterp);
      CHECK(st.warnings[0].address == bad);
      CHECK(st.warnings[0].other == w.interp + 64);
      CHECK(st.warnings[0].expected == w.interp);
    }
    SECTION("thread list cycle") {
      InterpreterWorld w(l);
      Addr a = w.img.thread_state(w.interp, 0, 1, 1);
      Addr b = w.img.thread_state(w.interp, 0, 2, 2);
      w.img.link_threads(w.interp, {a, b});
      w.img.put<Addr>(b, l.tstate_next, a);
      auto st = w.inspect();
      CHECK(st.threads.size() == 2);
      bool loop = false;
      for (auto& m : st.warnings) loop |= m.kind == StateProblem::ThreadsLoop && m.address == a;
      CHECK(loop);
    }
    SECTION("interpreter list pointing into unmapped memory") {
      InterpreterWorld w(l);
      w.img.put<Addr>(w.interp, l.interp_next, Image::kUnmapped);
      auto st = w.inspect();
      bool unreadable = false;
      for (auto& m : st.warnings) unreadable |= m.kind == StateProblem::InterpreterUnreadable && m.address == Image::kUnmapped;
      CHECK(unreadable);
    }
  }
}

TEST_CASE("unreadable roots give status 'unreadable', not an exception", "[cpython]") {
  const Layout& l = layout(11);
  ImageReader empty;
  Roots r;
  r.runtime = 0x5000;
  auto st = inspect_memory(empty, l, r);
  CHECK(st.status == Status::Unreadable);
  CHECK_FALSE(st.warnings.empty());
}

TEST_CASE("the GIL holder comes from the GIL state, and wait addresses inside it are recognised", "[cpython]") {
  for (int minor : {7, 11, 12, 13}) {
    const Layout& l = layout(minor);
    INFO("3." << minor);
    InterpreterWorld w(l);
    Addr t1 = w.img.thread_state(w.interp, 0, 1, 101);
    Addr t2 = w.img.thread_state(w.interp, 0, 2, 102);
    w.img.link_threads(w.interp, {t1, t2});
    Addr gil = 0;
    if (l.gil_model == GilModel::RuntimeEmbedded) {
      gil = w.runtime + l.runtime_ceval_gil;
    } else {
      gil = w.interp + l.interp_own_gil;
      w.img.put<Addr>(w.interp, l.interp_ceval_gil, gil);
    }
    w.img.put<std::int32_t>(gil, l.gil_locked, 1);
    w.img.put<Addr>(gil, l.gil_last_holder, t2);
    w.img.put<std::uint64_t>(gil, l.gil_switch_number, 77);
    if (l.has(l.runtime_tstate_current)) w.img.put<Addr>(w.runtime, l.runtime_tstate_current, t2);
    auto st = w.inspect();
    CHECK(st.warnings.empty());
    REQUIRE(st.gils.size() == 1);
    CHECK(st.gils[0].address == gil);
    CHECK(st.gils[0].locked == true);
    CHECK(st.gils[0].holder_tstate == t2);
    CHECK(st.gils[0].switch_number == 77u);
    CHECK(st.gils[0].interp_id == (l.gil_model == GilModel::InterpreterPointer ? 0 : -1));
    REQUIRE(st.threads.size() == 2);
    CHECK_FALSE(st.threads[0].holds_gil);
    CHECK(st.threads[1].holds_gil);
    CHECK(gil_holder(st) == &st.threads[1]);
    CHECK(gil_for_wait_address(st, gil + l.gil_mutex) == &st.gils[0]);
    CHECK(gil_for_wait_address(st, gil + l.gil_cond) == &st.gils[0]);
    CHECK(gil_for_wait_address(st, gil + l.gil_size) == nullptr);
    CHECK(gil_for_wait_address(st, gil - 1) == nullptr);
  }
}

TEST_CASE("an unlocked GIL has no holder even though last_holder is set", "[cpython]") {
  const Layout& l = layout(10);
  InterpreterWorld w(l);
  Addr t1 = w.img.thread_state(w.interp, 0, 1, 1);
  w.img.link_threads(w.interp, {t1});
  Addr gil = w.runtime + l.runtime_ceval_gil;
  w.img.put<std::int32_t>(gil, l.gil_locked, 0);
  w.img.put<Addr>(gil, l.gil_last_holder, t1);
  auto st = w.inspect();
  REQUIRE(st.gils.size() == 1);
  CHECK(st.gils[0].locked == false);
  CHECK(st.gils[0].holder_tstate == 0);
  CHECK(gil_holder(st) == nullptr);
}

TEST_CASE("a GIL whose locked word is neither 0 nor 1 is reported as a layout mismatch", "[cpython]") {
  const Layout& l = layout(9);
  InterpreterWorld w(l);
  w.img.put<std::int32_t>(w.runtime + l.runtime_ceval_gil, l.gil_locked, 12345);
  auto st = w.inspect();
  REQUIRE(st.gils.size() == 1);
  CHECK_FALSE(st.gils[0].locked.has_value());
  REQUIRE_FALSE(st.warnings.empty());
  CHECK(st.warnings[0].kind == StateProblem::GilLockedOdd);
  CHECK(st.warnings[0].number == 12345);
}

TEST_CASE("3.6 without _PyRuntime: the holder is _PyThreadState_Current", "[cpython]") {
  const Layout& l = layout(6);
  InterpreterWorld w(l);
  Addr t1 = w.img.thread_state(w.interp, 0, 1, 1);
  Addr t2 = w.img.thread_state(w.interp, 0, 2, 2);
  w.img.link_threads(w.interp, {t1, t2});
  Addr current = w.img.alloc(8);
  w.img.put<Addr>(current, 0, t1);
  auto mem = w.img.reader();
  Roots r = w.roots();
  r.tstate_current_var = current;
  auto st = inspect_memory(mem, l, r);
  CHECK(st.status == Status::Ok);
  REQUIRE(st.threads.size() == 2);
  CHECK(st.threads[0].holds_gil);
  CHECK_FALSE(st.threads[1].holds_gil);
  REQUIRE(st.gils.size() == 1);
  CHECK(st.gils[0].locked == true);
}

TEST_CASE("3.13 thread states say whether they are attached", "[cpython]") {
  const Layout& l = layout(13);
  InterpreterWorld w(l);
  Addr a = w.img.thread_state(w.interp, 0, 1, 1);
  Addr d = w.img.thread_state(w.interp, 0, 2, 2);
  w.img.put<std::int32_t>(a, l.tstate_state, static_cast<std::int32_t>(l.thread_attached));
  w.img.link_threads(w.interp, {a, d});
  auto st = w.inspect();
  REQUIRE(st.threads.size() == 2);
  CHECK(st.threads[0].attached == true);
  CHECK(st.threads[1].attached == false);
  CHECK_FALSE(layout(12).has(layout(12).tstate_state));
}
