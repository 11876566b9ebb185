// Which layout an interpreter is read with: the one rule every CPython
// decoder (threads and frames, lock objects, Python values) follows.
#include "cpython/internal.hpp"

namespace pyhang::cpython {

const Layout* layout_for(int major, int minor) {
  const Layout* best = nullptr;
  for (const auto& l : generated_layouts())
    if (l.major == major && l.minor == minor && (!best || l.patch < best->patch)) best = &l;
  return best;
}

const Layout* layout_for(int major, int minor, int patch) {
  const Layout* best = layout_for(major, minor);
  if (patch < 0) return best;
  for (const auto& l : generated_layouts())
    if (l.major == major && l.minor == minor && l.patch <= patch && (!best || l.patch > best->patch)) best = &l;
  return best;
}

std::optional<Layout> layout_for_release(int major, int minor, int patch) {
  if (const Layout* l = layout_for(major, minor, patch)) return *l;
  const Layout* newest = nullptr;
  for (const auto& l : generated_layouts())
    if (l.major == major && l.has_debug_offsets && (!newest || std::pair(l.minor, l.patch) > std::pair(newest->minor, newest->patch)))
      newest = &l;
  if (!newest || minor <= newest->minor) return std::nullopt;
  Layout stand_in = *newest;
  stand_in.minor = minor;
  stand_in.stand_in = true;
  return stand_in;
}

namespace detail {

EffectiveLayout effective_layout(MemoryReader& mem, const Layout& generated, Addr runtime,
                                 std::vector<StateWarning>& warnings) {
  auto layout = std::make_shared<Layout>(generated);
  EffectiveLayout out;
  if (layout->has_debug_offsets && runtime) {
    auto reading = apply_debug_offsets(mem, runtime, *layout, warnings);
    out.debug_offsets = reading.applied;
    out.free_threaded = reading.free_threaded;
    out.refused = reading.refused;
  } else if (layout->stand_in) {
    out.refused = StateWarning{StateProblem::NoRuntime, 0, 0, 0, layout->minor, 1, {}, {}, {}};
  }
  if (!out.refused) out.layout = std::move(layout);
  return out;
}

EffectiveLayout effective_layout(MemoryReader& mem, int major, int minor, int patch, Addr runtime,
                                 std::vector<StateWarning>& warnings) {
  auto generated = layout_for_release(major, minor, patch);
  if (!generated) return {};
  return effective_layout(mem, *generated, runtime, warnings);
}

std::shared_ptr<const Layout> layout_of(MemoryReader& mem, const PythonState& state) {
  if (state.effective_layout) return state.effective_layout;
  std::vector<StateWarning> ignored;  // the state's own reading already said them
  return effective_layout(mem, state.major, state.minor, state.patch, state.runtime, ignored).layout;
}

}  // namespace detail

}  // namespace pyhang::cpython
