// Python values of the target as text, the way a debugger shows them: the
// repr of None, bool, int (any size), float, str, bytes, tuple, list, dict,
// set and frozenset (first items and length), and a name for everything
// else — pyhang's own for the objects it knows (`<threading.Lock at 0x… locked>`,
// `<threading.RLock at 0x… owned by LWP 12 (count 2)>`,
// `<threading.Thread 'worker' (LWP 12) at 0x…>`, `<module 'os'>`,
// `<class 'Queue'>`), exceptions as BaseException's repr of their args
// (`RuntimeError('I am an error')`), instances of classes defined in Python
// in libpython.py's form (`<Point(x=1, name='a') at remote 0x…>`: their
// __dict__ and __slots__), otherwise `<TypeName object at 0x…>`.
//
// Reading target memory is never trusted: each value is bounded in nesting
// depth, items per container, characters of output and number of memory
// reads (ValueLimits); what cannot be read is a marked placeholder in the
// text (`<unreadable at 0x…>`, `<… truncated>`), with the reason in
// `problem`, never an exception.  A container that holds itself prints
// `[...]` as Python does; an instance, `<Foo(...) at remote 0x…>`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pyhang/cpython/inspect.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::cpython {

struct ValueLimits {
  std::size_t depth = 3;        // containers inside containers shown, then `[...]`
  std::size_t items = 10;       // items of one container shown, then `...`
  std::size_t str_chars = 200;  // characters of one str shown
  std::size_t bytes = 64;       // bytes of one bytes object shown
  std::size_t output = 1024;    // characters of one value's text, then `...`
  std::size_t reads = 512;      // memory reads for one value, then `<… read limit>`
  std::size_t int_digits = 70;  // internal digits of an int shown in decimal (~630 decimal digits)
};

struct RenderedValue {
  Addr address = 0;
  std::string type;     // tp_name of its type; empty when unreadable
  std::string repr;     // the text; never empty
  bool complete = true; // false: something was truncated or unreadable
  ReadProblem problem;  // the first thing that could not be read; empty when all is well
};

class ValueRenderer {
 public:
  // For the interpreter `state` describes (its version picks the layouts;
  // its threads map a pthread_t to an LWP).  `memory` and `state` must
  // outlive the renderer.  ok() is false when pyhang has no layout for the
  // version; render() then says so in every value.
  ValueRenderer(MemoryReader& memory, const PythonState& state, const ValueLimits& limits = {});
  ~ValueRenderer();
  ValueRenderer(const ValueRenderer&) = delete;
  ValueRenderer& operator=(const ValueRenderer&) = delete;

  bool ok() const;
  const ReadProblem& problem() const;

  RenderedValue render(Addr object);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pyhang::cpython
