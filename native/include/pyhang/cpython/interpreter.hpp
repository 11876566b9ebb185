// One decoded interpreter per target: located once, read once with its
// effective layout (the generated table for its release, corrected by the
// target's _Py_DebugOffsets), and handed to every decoder that needs it
// (Python locks, Python values, fork facts) so that none decodes it again.
#pragma once

#include <memory>
#include <optional>

#include "pyhang/cpython/inspect.hpp"

namespace pyhang {
class Target;
}

namespace pyhang::cpython {

class Interpreter {
 public:
  // Locates and reads the interpreter of `target` (never throws on bad
  // target memory: see state().status and state().warnings).
  explicit Interpreter(std::shared_ptr<Target> target, const Options& opts = {});

  Target& target() const { return *target_; }
  const std::shared_ptr<Target>& shared_target() const { return target_; }
  const Options& options() const { return opts_; }
  const std::optional<Located>& located() const { return located_; }
  const PythonState& state() const { return state_; }
  // The layout the state was read with; null when there is none.
  const Layout* layout() const { return state_.effective_layout.get(); }

 private:
  std::shared_ptr<Target> target_;
  Options opts_;
  std::optional<Located> located_;
  PythonState state_;
};

}  // namespace pyhang::cpython
