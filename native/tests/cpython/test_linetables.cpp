// Line numbers from each line-table format, with tables encoded by hand.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "support/cpython_image.hpp"

using namespace pyhang::cpython;
using pyhang::cpython::testing::layout;

namespace {

// 3.11+ location table writer.
struct LocationTable {
  std::vector<std::uint8_t> bytes;
  void varint(std::uint64_t v) {
    while (v >= 64) {
      bytes.push_back(static_cast<std::uint8_t>(64 | (v & 63)));
      v >>= 6;
    }
    bytes.push_back(static_cast<std::uint8_t>(v));
  }
  void svarint(std::int64_t v) { varint(v < 0 ? (static_cast<std::uint64_t>(-v) << 1) | 1 : static_cast<std::uint64_t>(v) << 1); }
  void head(int code, int units) { bytes.push_back(static_cast<std::uint8_t>(0x80 | (code << 3) | (units - 1))); }
  void long_form(int units, std::int64_t line_delta) {
    head(14, units);
    svarint(line_delta);
    varint(0);  // end line delta
    varint(5);  // column + 1
    varint(9);  // end column + 1
  }
  void no_column(int units, std::int64_t line_delta) {
    head(13, units);
    svarint(line_delta);
  }
  void one_line(int units, int line_delta /* 0..2 */) {
    head(10 + line_delta, units);
    bytes.push_back(3);
    bytes.push_back(7);
  }
  void short_form(int units) {
    head(0, units);
    bytes.push_back(0x12);
  }
  void no_location(int units) { head(15, units); }
};

}  // namespace

TEST_CASE("lnotab (3.6-3.9) maps byte offsets to lines, with negative line deltas", "[cpython]") {
  const Layout& l = layout(9);
  // firstlineno 10; +4 bytes -> line 12; +6 bytes -> line 9 (delta -3); +250 bytes -> line 100
  std::vector<std::uint8_t> t = {4, 2, 6, static_cast<std::uint8_t>(-3), 250, 91};
  CHECK(line_for_offset(l, t, 10, 0) == 10);
  CHECK(line_for_offset(l, t, 10, 3) == 10);
  CHECK(line_for_offset(l, t, 10, 4) == 12);
  CHECK(line_for_offset(l, t, 10, 9) == 12);
  CHECK(line_for_offset(l, t, 10, 10) == 9);
  CHECK(line_for_offset(l, t, 10, 259) == 9);
  CHECK(line_for_offset(l, t, 10, 260) == 100);
  CHECK(line_for_offset(l, t, 10, 5000) == 100);
  CHECK(line_for_offset(l, t, 10, -1) == 10);  // frame not started: first line
}

TEST_CASE("3.10 co_linetable maps byte ranges to lines, -128 meaning no line", "[cpython]") {
  const Layout& l = layout(10);
  REQUIRE(l.linetable == LineTableFormat::LineTable310);
  // firstlineno 20: [0,6) line 21, [6,8) no line, [8,20) line 18 (delta -3), [20,22) line 19
  std::vector<std::uint8_t> t = {6, 1, 2, static_cast<std::uint8_t>(-128), 12, static_cast<std::uint8_t>(-3), 2, 1};
  CHECK(line_for_offset(l, t, 20, 0) == 21);
  CHECK(line_for_offset(l, t, 20, 5) == 21);
  CHECK(line_for_offset(l, t, 20, 6) == -1);
  CHECK(line_for_offset(l, t, 20, 8) == 18);
  CHECK(line_for_offset(l, t, 20, 19) == 18);
  CHECK(line_for_offset(l, t, 20, 20) == 19);
  CHECK(line_for_offset(l, t, 20, 22) == -1);  // past the table
}

TEST_CASE("3.11+ location table decodes every entry form, multi-byte varints and negative deltas", "[cpython]") {
  for (int minor : {11, 12, 13}) {
    const Layout& l = layout(minor);
    REQUIRE(l.linetable == LineTableFormat::LocationTable);
    LocationTable t;
    t.no_column(1, 1);        // units [0,1): line 101
    t.long_form(2, 300);      // units [1,3): line 401 (300 needs a 2-byte varint)
    t.short_form(3);          // units [3,6): same line 401
    t.one_line(1, 2);         // units [6,7): line 403
    t.no_location(2);         // units [7,9): no line
    t.long_form(8, -399);     // units [9,17): line 4 (negative, multi-byte)
    t.no_column(1, -2);       // units [17,18): line 2
    REQUIRE(t.bytes.size() > 7);
    CHECK(line_for_offset(l, t.bytes, 100, 0) == 101);
    CHECK(line_for_offset(l, t.bytes, 100, 2) == 401);
    CHECK(line_for_offset(l, t.bytes, 100, 5) == 401);
    CHECK(line_for_offset(l, t.bytes, 100, 8) == 401);
    CHECK(line_for_offset(l, t.bytes, 100, 12) == 403);
    CHECK(line_for_offset(l, t.bytes, 100, 14) == -1);
    CHECK(line_for_offset(l, t.bytes, 100, 18) == 4);
    CHECK(line_for_offset(l, t.bytes, 100, 33) == 4);
    CHECK(line_for_offset(l, t.bytes, 100, 34) == 2);
    CHECK(line_for_offset(l, t.bytes, 100, 36) == -1);  // past the table
  }
}

TEST_CASE("3.11+ location table gives each entry form's columns and end line, as co_positions() does",
          "[cpython]") {
  for (int minor : {11, 12, 13}) {
    const Layout& l = layout(minor);
    LocationTable t;
    t.no_column(1, 1);    // [0,2): line 101, no columns
    t.long_form(2, 300);  // [2,6): line 401, columns 4..8 (stored plus one)
    t.short_form(3);      // [6,12): line 401, column 0*8 + 1, length 2
    t.one_line(1, 2);     // [12,14): line 403, columns 3..7
    t.no_location(2);     // [14,18): nothing
    auto at = [&](std::int64_t offset) {
      Position p = position_for_offset(l, t.bytes, 100, offset);
      return std::vector<int>{p.line, p.end_line, p.col, p.end_col};
    };
    CHECK(at(0) == std::vector<int>{101, -1, -1, -1});
    CHECK(at(4) == std::vector<int>{401, 401, 4, 8});
    CHECK(at(8) == std::vector<int>{401, 401, 1, 3});
    CHECK(at(12) == std::vector<int>{403, 403, 3, 7});
    CHECK(at(16) == std::vector<int>{-1, -1, -1, -1});
    CHECK(at(40) == std::vector<int>{-1, -1, -1, -1});  // past the table
  }
  // Before 3.11 there are lines only.
  Position old = position_for_offset(layout(10), {4, 2}, 20, 0);
  CHECK((old.line == 22 && old.col == -1 && old.end_col == -1 && old.end_line == -1));
}

TEST_CASE("corrupt line tables give no line instead of reading past their end", "[cpython]") {
  const Layout& l = layout(11);
  std::vector<std::uint8_t> truncated = {0x80 | (14 << 3), 0x41};  // varint says "more" at the end
  CHECK(line_for_offset(l, truncated, 1, 0) >= -1);
  std::vector<std::uint8_t> not_an_entry = {0x12, 0x34};
  CHECK(line_for_offset(l, not_an_entry, 1, 0) == -1);
  CHECK(line_for_offset(layout(10), {7}, 1, 0) == -1);  // odd length: last half pair ignored
}

TEST_CASE("Py_Version hex becomes a dotted version", "[cpython]") {
  CHECK(version_from_hex(0x030B07F0) == "3.11.7");
  CHECK(version_from_hex(0x030D00F0) == "3.13.0");
}

TEST_CASE("every generated table has the fields its frame model and line-table format need", "[cpython]") {
  for (const auto& l : generated_layouts()) {
    INFO("3." << l.minor);
    CHECK(l.has(l.object_ob_type));
    CHECK(l.has(l.tstate_interp));
    CHECK(l.has(l.interp_threads_head));
    CHECK(l.has(l.code_filename));
    CHECK(l.has(l.unicode_kind_mask));
    if (l.frame_model == FrameModel::FrameObject) {
      CHECK(l.has(l.frame_back));
      CHECK(l.has(l.frame_lasti));
      CHECK(l.has(l.tstate_frame));
    } else {
      CHECK(l.has(l.iframe_previous));
      CHECK(l.has(l.iframe_instr));
      CHECK(l.has(l.code_code_adaptive));
    }
    if (l.linetable == LineTableFormat::Lnotab) CHECK(l.has(l.code_lnotab));
    else CHECK(l.has(l.code_linetable));
    if (l.gil_model == GilModel::RuntimeEmbedded) CHECK(l.has(l.runtime_ceval_gil));
    if (l.gil_model == GilModel::InterpreterPointer) CHECK(l.has(l.interp_ceval_gil));
  }
  for (int minor = 6; minor <= 13; ++minor) CHECK(layout_for(3, minor) != nullptr);
}

namespace {

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// Every offset of a table gives no line or a line in 0..INT_MAX.
void lines_in_range(const Layout& l, const std::vector<std::uint8_t>& t, int firstlineno) {
  for (std::int64_t offset = 0; offset < static_cast<std::int64_t>(t.size()) * 32; offset += 2) {
    int line = line_for_offset(l, t, firstlineno, offset);
    CHECK(line >= -1);
  }
}

}  // namespace

// Inputs that made the line sums overflow (UndefinedBehaviorSanitizer on
// fuzzed tables): each now gives no line where the sum leaves int.
TEST_CASE("line tables whose deltas overflow an int line give no line, never a wrapped one", "[cpython]") {
  SECTION("a location table of huge varint deltas") {
    lines_in_range(layout(11), from_hex("9e01ffffff0c00030380ffbcffefffffffffffffffffffffff45"), 1);
  }
  SECTION("a location table whose varint delta fills 64 bits (found by fuzz_linetable)") {
    const auto t = from_hex("9e01f7ffff0c00030380ffbcffefffffffffffffffffffffff45");
    CHECK(line_for_offset(layout(11), t, 1, 512) == -1);
    lines_in_range(layout(11), t, 1);
  }
  SECTION("an lnotab summed from a first line near INT_MAX") {
    lines_in_range(layout(9), from_hex("ffffffff7f60fc012ef8f041000102"), std::numeric_limits<int>::max() - 10);
  }
  SECTION("a 3.10 table one line past INT_MAX") {
    std::vector<std::uint8_t> t = {2, 0, 2, 1};
    const int max = std::numeric_limits<int>::max();
    CHECK(line_for_offset(layout(10), t, max, 0) == max);
    CHECK(line_for_offset(layout(10), t, max, 2) == -1);
  }
  SECTION("an lnotab one line past INT_MAX") {
    std::vector<std::uint8_t> t = {2, 1};
    CHECK(line_for_offset(layout(9), t, std::numeric_limits<int>::max(), 2) == -1);
  }
}
