// Stack depths from code (cpython/bytecode.cpp) on synthetic instructions
// with the generated tables of real versions: straight runs, branches that
// agree and disagree, EXTENDED_ARG, 3.6's finally bodies, 3.11's exception
// table and PRECALL/CALL, calls' inputs; malformed code and garbage give a
// problem or unknown depths, never a crash or an endless walk.  What each
// interpreter itself says: python/tests/test_bytecode_depths.py.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cpython/bytecode.hpp"

using namespace pyhang::cpython::detail;

namespace {

// Opcode numbers of 3.6 - 3.10 (Lib/opcode.py; the same in each of them)
constexpr int POP_TOP = 1, WITH_CLEANUP_START = 81, WITH_CLEANUP_FINISH = 82, SETUP_WITH = 143, RETURN_VALUE = 83, POP_BLOCK = 87, END_FINALLY = 88, BUILD_TUPLE = 102,
              JUMP_FORWARD = 110, POP_JUMP_IF_FALSE = 114, LOAD_GLOBAL = 116, SETUP_FINALLY = 122,
              LOAD_FAST = 124, CALL_FUNCTION = 131, EXTENDED_ARG = 144, LOAD_CONST = 100;
// 3.11's
constexpr int PUSH_NULL_311 = 2, RESUME_311 = 151, PRECALL_311 = 166, CALL_311 = 171, NOP_311 = 9;

struct Code {
  std::vector<std::uint8_t> bytes;
  Code& op(int opcode, int arg = 0, int caches = 0) {
    bytes.push_back(static_cast<std::uint8_t>(opcode));
    bytes.push_back(static_cast<std::uint8_t>(arg));
    for (int i = 0; i < caches; ++i) bytes.insert(bytes.end(), {0, 0});
    return *this;
  }
  std::size_t units() const { return bytes.size() / 2; }
};

const BytecodeTable& table(int minor) {
  const BytecodeTable* t = bytecode_table(minor);
  REQUIRE(t);
  return *t;
}

StackDepths analyse(int minor, const Code& c, std::vector<std::uint8_t> exceptions = {}) {
  return analyse_stack_depths(table(minor), c.bytes, exceptions);
}

}  // namespace

TEST_CASE("every version from 3.6 to 3.13 has a table, and no other", "[bytecode]") {
  for (int minor = 6; minor <= 13; ++minor) CHECK(bytecode_table(minor));
  CHECK(!bytecode_table(5));
  CHECK(!bytecode_table(14));
}

TEST_CASE("a straight run has the depths its stack effects give", "[bytecode]") {
  // GIVEN f(x) as 3.10 compiles `return f(x)` (after a discarded call)
  Code c;
  c.op(LOAD_GLOBAL).op(LOAD_FAST).op(CALL_FUNCTION, 1).op(POP_TOP).op(LOAD_CONST).op(RETURN_VALUE);
  // WHEN analysed
  auto d = analyse(10, c);
  // THEN each instruction has the depth before it, the deepest is 2
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(d.depth == std::vector<std::int32_t>{0, 1, 2, 1, 0, 1});
  CHECK(d.max_depth == 2);
  // AND the call's instruction has its callable two slots down: 1 - (-1) inputs
  auto at = depth_at(table(10), c.bytes, d, 2);
  REQUIRE(at);
  CHECK(at->depth == 2);
  CHECK(at->row->call_base - *at->row->next.at(at->arg) == 2);
}

TEST_CASE("paths that agree give their depth; paths that disagree leave it unknown", "[bytecode]") {
  // x if c else y: both arms reach the join with one value
  Code agree;
  agree.op(LOAD_FAST).op(POP_JUMP_IF_FALSE, 4).op(LOAD_CONST).op(JUMP_FORWARD, 1).op(LOAD_CONST).op(RETURN_VALUE);
  auto d = analyse(10, agree);
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(d.depth[5] == 1);
  // one arm pushes two values: 3.9+ code never does, and the join and after are unknown
  Code disagree;
  disagree.op(LOAD_FAST).op(POP_JUMP_IF_FALSE, 5).op(LOAD_CONST).op(LOAD_CONST).op(JUMP_FORWARD, 1)
      .op(LOAD_CONST).op(RETURN_VALUE);
  d = analyse(10, disagree);
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(d.depth[4] == 2);   // before the join: known
  CHECK(d.depth[6] == -1);  // the join
  CHECK(!depth_at(table(10), disagree.bytes, d, 6));
}

TEST_CASE("an instruction after EXTENDED_ARG has the prefix's depth and the whole argument", "[bytecode]") {
  // GIVEN a tuple of 300 constants: BUILD_TUPLE 300 is EXTENDED_ARG 1, BUILD_TUPLE 44
  Code c;
  for (int i = 0; i < 300; ++i) c.op(LOAD_CONST);
  c.op(EXTENDED_ARG, 1).op(BUILD_TUPLE, 44).op(RETURN_VALUE);
  auto d = analyse(10, c);
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(d.depth[300] == 300);  // the prefix
  CHECK(d.depth[301] == 300);  // the instruction
  CHECK(d.arg[301] == 300);
  CHECK(d.depth[302] == 1);
  CHECK(d.max_depth == 300);
  CHECK(!depth_at(table(10), c.bytes, d, 300));  // a prefix is no instruction of its own
}

TEST_CASE("3.6: a finally body is unknown, the code after its END_FINALLY known again", "[bytecode]") {
  // try: f() finally: g()  then  return h()
  Code c;
  c.op(SETUP_FINALLY, 10)                                        // 0: handler at byte 12 (unit 6)
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(POP_TOP)          // 1-3
      .op(POP_BLOCK).op(LOAD_CONST)                              // 4-5: the normal way pushes None
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(POP_TOP)          // 6-8: the finally body
      .op(END_FINALLY)                                           // 9
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(RETURN_VALUE);    // 10-12
  auto d = analyse(6, c);
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(depth_at(table(6), c.bytes, d, 2)->depth == 1);  // the try body
  CHECK(!depth_at(table(6), c.bytes, d, 7));             // inside the finally body: 1 or 6 values below
  auto after = depth_at(table(6), c.bytes, d, 11);
  REQUIRE(after);
  CHECK(after->depth == 1);
}

TEST_CASE("3.7: code after a with block, then a try/finally, is known again", "[bytecode]") {
  // with m: f()   then   try: g() finally: h()   then   return k()
  Code c;
  c.op(LOAD_GLOBAL).op(SETUP_WITH, 12).op(POP_TOP)                 // 0-2: cleanup at byte 16 (unit 8)
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(POP_TOP)            // 3-5
      .op(POP_BLOCK).op(LOAD_CONST)                                // 6-7
      .op(WITH_CLEANUP_START).op(WITH_CLEANUP_FINISH).op(END_FINALLY)  // 8-10
      .op(SETUP_FINALLY, 10)                                       // 11: handler at byte 34 (unit 17)
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(POP_TOP)            // 12-14
      .op(POP_BLOCK).op(LOAD_CONST)                                // 15-16
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(POP_TOP).op(END_FINALLY)  // 17-20
      .op(LOAD_GLOBAL).op(CALL_FUNCTION, 0).op(RETURN_VALUE);      // 21-23
  auto d = analyse(7, c);
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(depth_at(table(7), c.bytes, d, 4)->depth == 2);   // inside the with: its __exit__ below
  CHECK(!depth_at(table(7), c.bytes, d, 9));              // the cleanup: counted as an exception's
  CHECK(depth_at(table(7), c.bytes, d, 13)->depth == 1);
  CHECK(!depth_at(table(7), c.bytes, d, 18));
  auto after = depth_at(table(7), c.bytes, d, 22);
  REQUIRE(after);
  CHECK(after->depth == 1);
}

TEST_CASE("3.11: a handler starts at the exception table's depth; PRECALL and CALL find one callable",
          "[bytecode]") {
  // RESUME; PUSH_NULL; LOAD_GLOBAL f (5 caches); LOAD_FAST x; PRECALL 1 (1 cache); CALL 1 (4 caches);
  // POP_TOP; then a handler: NOP ... RETURN_VALUE
  Code c;
  c.op(RESUME_311).op(PUSH_NULL_311).op(LOAD_GLOBAL, 0, 5).op(LOAD_FAST).op(PRECALL_311, 1, 1).op(CALL_311, 1, 4);
  const std::size_t precall = 9, call = 11, handler = c.units() + 3;
  c.op(POP_TOP).op(LOAD_CONST).op(RETURN_VALUE).op(NOP_311).op(POP_TOP).op(LOAD_CONST).op(RETURN_VALUE);
  // one entry: units 1..17 go to the handler with depth 0, lasti pushed (varints, start bit on the first)
  std::vector<std::uint8_t> exceptions{0x80 | 1, 17, static_cast<std::uint8_t>(handler), (0 << 1) | 1};
  auto d = analyse(11, c, exceptions);
  REQUIRE(d.problem == pyhang::cpython::DepthProblem::None);
  CHECK(d.depth[handler] == 2);   // lasti and the exception
  auto p = depth_at(table(11), c.bytes, d, precall);
  auto k = depth_at(table(11), c.bytes, d, call);
  REQUIRE(p);
  REQUIRE(k);
  // both leave the callable at slot 0 (NULL there: the callable is above it)
  CHECK(p->depth - (p->row->call_base - *p->row->next.at(p->arg)) == 0);
  CHECK(k->depth - (k->row->call_base - *k->row->next.at(k->arg)) == 0);
  CHECK(p->row->null_first);
  // a table whose varint never ends is malformed
  d = analyse(11, c, {0x80 | 1, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40});
  CHECK(d.problem != pyhang::cpython::DepthProblem::None);
  CHECK(!depth_at(table(11), c.bytes, d, call));
}

TEST_CASE("malformed code gives a problem and no depth", "[bytecode]") {
  Code back;  // a jump back into LOAD_GLOBAL's inline caches
  back.op(RESUME_311).op(LOAD_GLOBAL, 0, 5).op(140 /* JUMP_BACKWARD */, 3);
  auto d = analyse(11, back);
  CHECK(d.problem == pyhang::cpython::DepthProblem::JumpIntoInstruction);
  CHECK(d.problem_unit == 5);
  Code negative;  // POP_TOP on an empty stack
  negative.op(POP_TOP).op(RETURN_VALUE);
  d = analyse(10, negative);
  CHECK(d.problem == pyhang::cpython::DepthProblem::BadDepth);
  Code unknown;  // an opcode 3.10 does not have
  unknown.op(0).op(RETURN_VALUE);
  d = analyse(10, unknown);
  CHECK(d.problem == pyhang::cpython::DepthProblem::UnknownOpcode);
  for (int v : d.depth) CHECK(v == -1);
  CHECK(analyse(10, Code{}).problem == pyhang::cpython::DepthProblem::NoInstructions);
}

TEST_CASE("garbage code of every version ends with a bounded answer", "[bytecode]") {
  std::mt19937 rng(20261126);
  for (int minor = 6; minor <= 13; ++minor) {
    INFO("3." << minor);
    for (int round = 0; round < 300; ++round) {
      Code c;
      c.bytes.resize(2 * (1 + rng() % 400));
      for (auto& b : c.bytes) b = static_cast<std::uint8_t>(rng());
      std::vector<std::uint8_t> exceptions(rng() % 16);
      for (auto& b : exceptions) b = static_cast<std::uint8_t>(rng());
      auto d = analyse(minor, c, minor >= 11 ? exceptions : std::vector<std::uint8_t>{});
      REQUIRE(d.depth.size() == c.units());
      std::size_t out_of_range = 0;
      for (std::size_t u = 0; u < c.units(); ++u) {
        if (d.depth[u] < -1 || d.depth[u] > d.max_depth) ++out_of_range;
        auto at = depth_at(table(minor), c.bytes, d, u);
        if (at && at->depth != d.depth[u]) ++out_of_range;
      }
      CHECK(out_of_range == 0);
    }
  }
}
