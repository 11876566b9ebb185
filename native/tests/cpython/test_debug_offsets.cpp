// The target's own _Py_DebugOffsets (3.13+): the first source of every
// layout they cover, a struct size taken silently, a release newer than every
// table read through them alone, free-threaded builds refused, and garbage
// in them ending in a precise warning, never a crash.
#include <catch2/catch.hpp>

#include "pyhang/base/format.hpp"
#include "support/cpython_world.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::layout;
using pyhang::cpython::testing::make_frame;
using pyhang::cpython::testing::whole_code_at;
using pyhang::cpython::testing::InterpreterWorld;

TEST_CASE("3.13 reads the target's _Py_DebugOffsets and warns where they disagree with the table", "[cpython]") {
  const Layout& l = layout(13);
  SECTION("identical offsets: used silently") {
    InterpreterWorld w(l);
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, 0, 1, 1)});
    auto st = w.inspect();
    CHECK(st.warnings.empty());
    CHECK(st.layout_debug_offsets);
    CHECK(st.threads.size() == 1);
  }
  SECTION("a moved field: the target's offset wins, with a warning") {
    InterpreterWorld w(l);
    // The target says thread_id sits 8 bytes later than the table thinks.
    w.img.put<std::uint64_t>(w.runtime, l.dbg_tstate_thread_id, static_cast<std::uint64_t>(l.tstate_thread_id + 8));
    Addr t = w.img.thread_state(w.interp, 0, 1, 1);
    w.img.put<std::uint64_t>(t, l.tstate_thread_id + 8, 0xabcdef);
    w.img.link_threads(w.interp, {t});
    auto st = w.inspect();
    REQUIRE(st.threads.size() == 1);
    CHECK(st.threads[0].thread_id == 0xabcdef);
    REQUIRE(st.warnings.size() == 1);
    CHECK(st.warnings[0].kind == StateProblem::DebugOffsetsDiffer);
    CHECK(st.warnings[0].number == 1);
    CHECK(st.warnings[0].text3 == l.generated_from);
  }
  SECTION("a struct's size alone differs (a build's configuration): taken without a warning") {
    InterpreterWorld w(l);
    w.img.put<std::uint64_t>(w.runtime, l.dbg_interp_size, static_cast<std::uint64_t>(l.interp_size + 8));
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, 0, 1, 1)});
    auto st = w.inspect();
    CHECK(st.warnings.empty());
    REQUIRE(st.effective_layout);
    CHECK(st.effective_layout->interp_size == l.interp_size + 8);
  }
  SECTION("implausible offsets: the table is used, with a warning") {
    InterpreterWorld w(l);
    w.img.put<std::uint64_t>(w.runtime, l.dbg_tstate_next, 1u << 30);
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, 0, 1, 1)});
    auto st = w.inspect();
    CHECK(st.threads.size() == 1);
    REQUIRE_FALSE(st.warnings.empty());
    CHECK(st.warnings[0].kind == StateProblem::DebugOffsetsImplausible);
    CHECK(st.warnings[0].number == 1 << 30);
    CHECK(st.warnings[0].count == 0);  // the generated table is used
  }
  SECTION("no cookie: the table is used, with a warning") {
    InterpreterWorld w(l);
    w.img.put_bytes(w.runtime, "garbage!", 8);
    auto st = w.inspect();
    REQUIRE_FALSE(st.warnings.empty());
    CHECK(st.warnings[0].kind == StateProblem::DebugOffsetsNoCookie);
  }
}

namespace {

// A InterpreterWorld whose inspect() reads with an explicit layout (a stand-in table).
PythonState inspect_with(InterpreterWorld& w, const Layout& l) {
  auto mem = w.img.reader();
  return inspect_memory(mem, l, w.roots(), {});
}

// Stamps the runtime's _Py_DebugOffsets with another CPython version.
void say_version(InterpreterWorld& w, int minor, int patch) {
  const Layout& l = w.img.layout();
  w.img.put<std::uint64_t>(w.runtime, l.dbg_version, (3u << 24) | (static_cast<unsigned>(minor) << 16) | (patch << 8) | 0xf0);
}

}  // namespace

TEST_CASE("3.13 - 3.15 read threads and frames through the target's _Py_DebugOffsets", "[cpython]") {
  for (int minor : {13, 14, 15}) {
    CAPTURE(minor);
    const Layout& l = layout(minor);
    REQUIRE(l.has_debug_offsets);
    InterpreterWorld w(l);
    Addr code = w.img.code("work", "/srv/job.py", 10, whole_code_at(l, 2));
    Addr top = make_frame(w.img, code, 0);
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, top, 0x7f00aa, 4242)});
    auto st = w.inspect();
    CHECK(st.status == Status::Ok);
    CHECK(st.warnings.empty());
    CHECK(st.layout_debug_offsets);
    REQUIRE(st.threads.size() == 1);
    CHECK(st.threads[0].native_tid == 4242);
    REQUIRE(st.threads[0].frames.size() == 1);
    CHECK(st.threads[0].frames[0].function == "work");
    CHECK(st.threads[0].frames[0].line == 12);
  }
}

TEST_CASE("3.14+ frame slots are tagged stack references: the code object is found under the tag bits", "[cpython]") {
  const Layout& l = layout(14);
  REQUIRE(l.stackref_tag_bits == 3);
  InterpreterWorld w(l);
  Addr code = w.img.code("tagged", "/srv/t.py", 5, whole_code_at(l, 0));
  Addr top = make_frame(w.img, code, 0);
  w.img.put<std::uint64_t>(top, l.iframe_code, code | 1);  // Py_TAG_REFCNT: a deferred reference
  w.img.link_threads(w.interp, {w.img.thread_state(w.interp, top, 1, 1)});
  auto st = w.inspect();
  REQUIRE(st.threads.size() == 1);
  REQUIRE(st.threads[0].frames.size() == 1);
  CHECK(st.threads[0].frames[0].function == "tagged");
}

TEST_CASE("a minor newer than every table is read through its own _Py_DebugOffsets, standing in the newest table",
          "[cpython]") {
  auto stand_in = layout_for_release(3, 16, 0);
  REQUIRE(stand_in);
  CHECK(stand_in->stand_in);
  CHECK(stand_in->minor == 16);
  CHECK_FALSE(layout_for_release(3, 5, 0));  // older than every table: nothing stands in
  CHECK_FALSE(layout_for_release(2, 7, 18));
  const Layout& newest = layout(15);

  SECTION("offsets that moved in the new release are taken from the target") {
    InterpreterWorld w(newest);
    say_version(w, 16, 0);
    // The new release moved native_thread_id 16 bytes on.
    w.img.put<std::uint64_t>(w.runtime, newest.dbg_tstate_native_thread_id,
                             static_cast<std::uint64_t>(newest.tstate_native_thread_id + 16));
    Addr t = w.img.thread_state(w.interp, 0, 1, 0);
    w.img.put<std::uint64_t>(t, newest.tstate_native_thread_id + 16, 777);
    w.img.link_threads(w.interp, {t});
    auto st = inspect_with(w, *stand_in);
    CHECK(st.status == Status::Ok);
    REQUIRE(st.threads.size() == 1);
    CHECK(st.threads[0].native_tid == 777);
  }
  SECTION("without a readable _Py_DebugOffsets nothing is decoded: a precise refusal, not the old table") {
    InterpreterWorld w(newest);
    say_version(w, 16, 0);
    w.img.put_bytes(w.runtime, "garbage!", 8);
    auto st = inspect_with(w, *stand_in);
    CHECK(st.status == Status::Unsupported);
    CHECK(st.threads.empty());
    REQUIRE_FALSE(st.warnings.empty());
    CHECK(st.warnings.back().kind == StateProblem::DebugOffsetsNoCookie);
    CHECK(st.warnings.back().count == 1);  // refused: nothing to fall back on
    CHECK(st.warnings.back().text2 == "3.16");
  }
  SECTION("a version field that is not the release's own is refused too") {
    InterpreterWorld w(newest);  // says 3.15
    auto st = inspect_with(w, *stand_in);
    CHECK(st.status == Status::Unsupported);
    CHECK(st.warnings.back().kind == StateProblem::DebugOffsetsVersion);
    CHECK(st.warnings.back().text2 == "3.16");
  }
}

TEST_CASE("a free-threaded build is refused, never decoded with the default build's layout", "[cpython]") {
  for (int minor : {13, 14, 15}) {
    CAPTURE(minor);
    const Layout& l = layout(minor);
    REQUIRE(l.has(l.dbg_free_threaded));
    InterpreterWorld w(l);
    w.img.put<std::uint64_t>(w.runtime, l.dbg_free_threaded, 1);
    w.img.link_threads(w.interp, {w.img.thread_state(w.interp, 0, 1, 1)});
    auto st = w.inspect();
    CHECK(st.status == Status::Unsupported);
    CHECK(st.threads.empty());
    REQUIRE_FALSE(st.warnings.empty());
    CHECK(st.warnings.back().kind == StateProblem::FreeThreaded);
  }
}

TEST_CASE("garbage in _Py_DebugOffsets gives correct layouts or a precise problem, never a crash", "[cpython]") {
  // Every word of the struct in turn is overwritten with values a broken or
  // hostile target could hold; the reader must end in a state it can say.
  for (int minor : {13, 14, 15}) {
    const Layout& l = layout(minor);
    for (std::int64_t at = 16; at + 8 <= l.dbg_size; at += 8) {
      for (std::uint64_t junk : {~std::uint64_t{0}, std::uint64_t{1} << 40, std::uint64_t{0x41414141}, std::uint64_t{24}}) {
        CAPTURE(minor, at, junk);
        InterpreterWorld w(l);
        w.img.put<std::uint64_t>(w.runtime, at, junk);
        w.img.link_threads(w.interp, {w.img.thread_state(w.interp, 0, 1, 1)});
        auto st = w.inspect();
        // Either the table or the target's values were used (a warning says
        // which and why), or the build was refused as free-threaded.
        if (at == l.dbg_free_threaded) {
          CHECK(st.status == Status::Unsupported);
        } else if (st.status == Status::Ok) {
          CHECK(st.effective_layout != nullptr);
        } else {
          CHECK_FALSE(st.warnings.empty());
        }
      }
    }
  }
}
