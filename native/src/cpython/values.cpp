// Python values as text (pyhang/cpython/values.hpp): reprs built from the
// object reader (pyobjects.cpp), lock states from the lock table
// (layouts/locks.hpp), every value bounded in depth, items, output and reads.
#include "pyhang/cpython/values.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "cpython/internal.hpp"
#include "cpython/layouts/locks.hpp"
#include "cpython/reprs.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::cpython {

namespace {

using detail::bytes_repr;
using detail::float_repr;
using detail::plausible_pointer;
using detail::str_repr;

constexpr std::size_t kTypeName = 256;

// A reader that gives out at most `budget` reads per value: past it every
// read is short, which the object reader takes as "unreadable".
class BudgetReader final : public MemoryReader {
 public:
  explicit BudgetReader(MemoryReader& inner) : inner_(inner) {}
  void reset(std::size_t budget) {
    left_ = budget;
    exhausted_ = false;
  }
  bool exhausted() const { return exhausted_; }
  std::size_t read_partial(Addr addr, void* buf, std::size_t n) override {
    if (left_ == 0) {
      exhausted_ = true;
      return 0;
    }
    --left_;
    return inner_.read_partial(addr, buf, n);
  }
  std::string describe() const override { return inner_.describe(); }

 private:
  MemoryReader& inner_;
  std::size_t left_ = std::numeric_limits<std::size_t>::max();
  bool exhausted_ = false;
};

}  // namespace

struct ValueRenderer::Impl {
  Impl(MemoryReader& m, const PythonState& st, const ValueLimits& lim)
      : budget(m), state(st), limits(lim), objects(budget, st, object_limits(lim)) {
    locks = lock_layout_for(st.major, st.minor);
    layout = detail::layout_of(m, st);
    for (const auto& t : st.threads)
      if (t.native_tid) tids[t.thread_id] = *t.native_tid;
  }

  static ObjectLimits object_limits(const ValueLimits& lim) {
    ObjectLimits o;
    o.max_string = std::max<std::size_t>(lim.str_chars, 64);
    o.max_entries = std::max<std::size_t>(lim.items * 4, 64);  // dict entries may be deleted slots
    return o;
  }

  BudgetReader budget;
  const PythonState& state;
  ValueLimits limits;
  PyObjects objects;
  const LockLayout* locks = nullptr;
  std::shared_ptr<const Layout> layout;
  std::unordered_map<std::uint64_t, int> tids;  // pthread_t → LWP

  // One value being written.
  struct Out {
    std::string text;
    std::size_t limit;
    bool complete = true;
    ReadProblem problem;
    std::vector<Addr> active;  // containers being written (cycles)
    bool full() const { return text.size() >= limit; }
    void add(std::string_view s) {
      std::size_t room = limit > text.size() ? limit - text.size() : 0;
      if (s.size() > room) complete = false;
      text.append(s.substr(0, room));
    }
    void lost(ReadProblem why) {
      complete = false;
      note(problem, std::move(why));
    }
  };

  std::string unreadable(Out& out, Addr obj, ReadProblem why) {
    if (budget.exhausted()) {
      why = {};
      why.why = ReadWhy::ReadLimit;
      why.at = obj;
    }
    out.lost(std::move(why));
    return budget.exhausted() ? "<read limit at " + hex(obj) + ">" : "<unreadable at " + hex(obj) + ">";
  }

  std::string object_name(Addr obj, const std::string& type) { return "<" + type + " object at " + hex(obj) + ">"; }

  std::optional<std::string> str_of(Addr obj, std::size_t max) {
    std::int64_t n = 0;
    auto s = objects.str_prefix(obj, max, &n);
    if (s && static_cast<std::uint64_t>(n) > max) *s += "...";
    return s;
  }

  // A type object's own tp_name (a class as a value).
  std::optional<std::string> class_name(Addr type_obj) {
    if (!layout) return std::nullopt;
    auto name = budget.read_pointer(type_obj + layout->type_tp_name);
    if (!name || !*name) return std::nullopt;
    return budget.read_cstring(*name, kTypeName);
  }

  // A Python function by its __qualname__, a built-in by its PyMethodDef's
  // name (and the object a built-in method is bound to).
  std::optional<std::string> function_text(Addr obj, const std::string& type) {
    if (!layout) return std::nullopt;
    if (type == "function" && layout->has(layout->func_qualname)) {
      auto q = budget.read_pointer(obj + static_cast<Addr>(layout->func_qualname));
      auto name = q ? str_of(*q, limits.str_chars) : std::nullopt;
      if (name) return "<function " + *name + " at " + hex(obj) + ">";
    } else if (type == "builtin_function_or_method" && layout->has(layout->cfunction_ml) &&
               layout->has(layout->methoddef_name)) {
      auto ml = budget.read_pointer(obj + static_cast<Addr>(layout->cfunction_ml));
      auto name_ptr = ml && plausible_pointer(*ml)
                          ? budget.read_pointer(*ml + static_cast<Addr>(layout->methoddef_name))
                          : std::nullopt;
      auto name = name_ptr && *name_ptr ? budget.read_cstring(*name_ptr, kTypeName) : std::nullopt;
      if (!name) return std::nullopt;
      // Bound to an object (not a module): a method, as Python's repr says it.
      Addr self = layout->has(layout->cfunction_self)
                      ? budget.read_pointer(obj + static_cast<Addr>(layout->cfunction_self)).value_or(0)
                      : 0;
      auto self_type = self ? objects.type_name(self) : std::nullopt;
      if (self_type && *self_type != "module")
        return "<built-in method " + *name + " of " + *self_type + " object at " + hex(self) + ">";
      return "<built-in function " + *name + ">";
    }
    return std::nullopt;
  }

  std::string lwp_of(std::uint64_t pthread) {
    auto it = tids.find(pthread);
    return it != tids.end() ? "LWP " + std::to_string(it->second) : "pthread " + hex(pthread);
  }

  std::string lock_text(Addr obj, bool rlock, Out& out) {
    std::string head = std::string("<threading.") + (rlock ? "RLock" : "Lock") + " at " + hex(obj);
    auto s = detail::read_lock_object(budget, *layout, *locks, obj, rlock);
    if (!rlock) {
      if (!s.locked) return unreadable(out, obj, unread(ReadPart::Lock, obj));
      return head + (*s.locked ? " locked>" : " unlocked>");
    }
    if (!s.owner || !s.count) return unreadable(out, obj, unread(ReadPart::RLock, obj));
    if (!*s.owner) return head + " unlocked>";
    return head + " owned by " + lwp_of(*s.owner) + " (count " + std::to_string(*s.count) + ")>";
  }

  // A threading.Thread (or subclass): an instance with _name, _ident and _started.
  std::optional<std::string> thread_text(Addr obj, const std::string& type) {
    Addr name = objects.attribute(obj, "_name");
    if (!name || !objects.attribute(obj, "_started")) return std::nullopt;
    Addr ident = objects.attribute(obj, "_ident");
    if (!ident) return std::nullopt;
    auto n = str_of(name, limits.str_chars);
    if (!n) return std::nullopt;
    std::string text = "<" + (type == "Thread" ? std::string("threading.Thread") : type) + " " + str_repr(*n);
    Addr native = objects.attribute(obj, "_native_id");
    auto lwp = native ? objects.integer(native) : std::nullopt;
    auto pthread = objects.integer(ident);
    if (lwp) text += " (LWP " + std::to_string(*lwp) + ")";
    else if (pthread && tids.count(static_cast<std::uint64_t>(*pthread)))
      text += " (" + lwp_of(static_cast<std::uint64_t>(*pthread)) + ")";
    else if (!pthread) text += " (not started)";
    return text + " at " + hex(obj) + ">";
  }

  // `lost_why`: why fewer items than the container holds (up to the limit)
  // could be read, or empty.  Items that could not be read are said to be
  // unreadable, never shown as "...(N items)", the notation for items left
  // out at the limit.
  void items(Out& out, const std::vector<Addr>& addrs, std::int64_t length, std::size_t depth, Addr container,
             const ReadProblem& lost_why = {}) {
    for (std::size_t i = 0; i < addrs.size() && i < limits.items; ++i) {
      if (i) out.add(", ");
      value(out, addrs[i], depth + 1);
      if (out.full()) return;
    }
    const auto wanted = std::min<std::int64_t>(length, static_cast<std::int64_t>(limits.items));
    if (!lost_why.empty() && static_cast<std::int64_t>(addrs.size()) < wanted) {
      out.add(addrs.empty() ? "" : ", ");
      out.add("<" + std::to_string(length - static_cast<std::int64_t>(addrs.size())) + " items unreadable at " +
              hex(container) + ">");
      out.lost(lost_why);
      return;
    }
    if (length > static_cast<std::int64_t>(std::min(addrs.size(), limits.items))) {
      out.add(addrs.empty() ? "" : ", ");
      out.add("...(" + std::to_string(length) + " items)");
      out.complete = false;
    }
  }

  bool active(const Out& out, Addr obj) const {
    return std::find(out.active.begin(), out.active.end(), obj) != out.active.end();
  }
  // Whether obj's type has the tp_flags bit Layout::*bit.
  bool has_flag(Addr obj, std::int64_t Layout::*bit) {
    if (!layout) return false;
    auto flags = objects.type_flags(obj);
    return flags && (*layout).*bit > 0 && (*flags & static_cast<std::uint64_t>((*layout).*bit));
  }

  // BaseException.__repr__: the type's name after its last dot and the
  // repr of its args: T('one'), T(a, b), T().  An exception met again
  // inside its own args is T(...).
  void exception(Out& out, Addr obj, const std::string& type, std::size_t depth) {
    const std::string name = type.substr(type.rfind('.') + 1);  // npos + 1: all of it
    bool cycle = active(out, obj);
    if (cycle || depth >= limits.depth) {
      if (!cycle) out.complete = false;
      out.add(name + "(...)");
      return;
    }
    auto args = layout && layout->has(layout->exception_args) ? budget.read_pointer(obj + layout->exception_args) : std::nullopt;
    PyValue tuple = args ? objects.value(*args) : PyValue{};
    if (!args || tuple.kind != ValueKind::Tuple || !tuple.length) {
      auto why = args ? unread(ReadPart::Tuple, *args, ReadWhy::NotA).within(ReadPart::ExceptionArgs, obj)
                      : unread(ReadPart::ExceptionArgs, obj);
      out.add(name + "(" + unreadable(out, obj, std::move(why)) + ")");
      return;
    }
    ReadProblem why;
    auto addrs = objects.sequence_items(*args, limits.items, &why);
    out.active.push_back(obj);
    out.add(name + "(");
    items(out, addrs, *tuple.length, depth, *args, why);
    out.add(")");
    if (!why.empty()) out.lost(why);
    out.active.pop_back();
  }

  // One `name=value` of an instance; a key that is not a str (set through
  // __dict__) shows as its repr.
  void attribute(Out& out, Addr key, Addr val, std::size_t depth) {
    auto name = str_of(key, limits.str_chars);
    if (name) out.add(*name);
    else value(out, key, depth + 1);
    out.add("=");
    value(out, val, depth + 1);
  }

  // libpython's form of an instance of a class defined in Python: its
  // attributes (__dict__, then __slots__) as <Foo(a=1, b='x') at remote 0x…>,
  // <Foo at remote 0x…> when it has none; <Foo(...) at remote 0x…> when met
  // again inside itself or past the depth limit.
  void instance(Out& out, Addr obj, const std::string& type, std::size_t depth) {
    const std::string tail = " at remote " + hex(obj) + ">";
    bool cycle = active(out, obj);
    if (cycle || depth >= limits.depth) {
      if (!cycle) out.complete = false;
      out.add("<" + type + "(...)" + tail);
      return;
    }
    ReadProblem why, slot_why;
    auto dict = objects.instance_attributes(obj, limits.items * 4, &why).value_or(std::vector<std::pair<Addr, Addr>>{});
    auto slots = objects.slots(obj, limits.items + 1, &slot_why);
    if (!why.empty()) out.lost(why);
    if (!slot_why.empty()) out.lost(slot_why);
    if (dict.empty() && slots.empty()) {
      out.add("<" + type + tail);
      return;
    }
    out.active.push_back(obj);
    out.add("<" + type + "(");
    std::size_t shown = 0;
    bool more = false;
    auto next = [&]() {
      if (shown == limits.items || out.full()) {
        more = shown == limits.items;
        return false;
      }
      if (shown++) out.add(", ");
      return true;
    };
    for (const auto& [key, val] : dict) {
      if (!next()) break;
      attribute(out, key, val, depth);
    }
    for (std::size_t i = 0; i < slots.size() && !more && !out.full(); ++i) {
      if (!next()) break;
      out.add(slots[i].first + "=");
      value(out, slots[i].second, depth + 1);
    }
    if (more) {
      out.add(", ...");
      out.complete = false;
    }
    out.add(")" + tail);
    out.active.pop_back();
  }

  void value(Out& out, Addr obj, std::size_t depth) {
    if (out.full()) {
      out.complete = false;
      return;
    }
    if (!plausible_pointer(obj)) {
      out.add(unreadable(out, obj, unread(ReadPart::Object, obj, ReadWhy::Implausible)));
      return;
    }
    PyValue v = objects.value(obj);
    if (v.kind == ValueKind::Unreadable) {
      out.add(unreadable(out, obj, v.problem.empty() ? unread(ReadPart::Object, obj) : v.problem));
      return;
    }
    bool container = v.kind == ValueKind::List || v.kind == ValueKind::Tuple || v.kind == ValueKind::Dict ||
                     v.kind == ValueKind::Set || v.kind == ValueKind::Frozenset;
    if (container) {
      const char* open = v.kind == ValueKind::List ? "[" : v.kind == ValueKind::Tuple ? "(" : "{";
      const char* close = v.kind == ValueKind::List ? "]" : v.kind == ValueKind::Tuple ? ")" : "}";
      if (!v.length) {
        out.add(unreadable(out, obj, v.problem));
        return;
      }
      bool cycle = active(out, obj);
      if (cycle || depth >= limits.depth) {
        if (!cycle) out.complete = false;
        out.add(std::string(open) + "..." + (cycle ? "" : "(" + std::to_string(*v.length) + " items)") + close);
        return;
      }
      out.active.push_back(obj);
      ReadProblem why;
      bool named = v.type != "list" && v.type != "tuple" && v.type != "dict" && v.type != "set" &&
                   v.type != "frozenset";
      if (named || v.kind == ValueKind::Frozenset) out.add(v.type + "(");
      if (v.kind == ValueKind::Set || v.kind == ValueKind::Frozenset) {
        if (*v.length == 0) {  // set() and frozenset(): {} is a dict
          out.add(named || v.kind == ValueKind::Frozenset ? "" : "set()");
        } else {
          out.add(open);
          auto found = objects.set_items(obj, limits.items, &why);
          items(out, found, *v.length, depth, obj, why);
          out.add(close);
        }
      } else if (v.kind == ValueKind::Dict) {
        out.add(open);
        auto pairs = objects.dict_items(obj, limits.items * 4, &why);
        std::size_t shown = 0;
        for (const auto& [k, val] : pairs) {
          if (shown == limits.items || out.full()) break;
          if (shown++) out.add(", ");
          value(out, k, depth + 1);
          out.add(": ");
          value(out, val, depth + 1);
        }
        if (*v.length > static_cast<std::int64_t>(shown)) {
          out.add(shown ? ", " : "");
          out.add("...(" + std::to_string(*v.length) + " items)");
          out.complete = false;
        }
        out.add(close);
      } else {
        out.add(open);
        auto addrs = objects.sequence_items(obj, limits.items, &why);
        items(out, addrs, *v.length, depth, obj, why);
        if (v.kind == ValueKind::Tuple && *v.length == 1 && addrs.size() == 1) out.add(",");
        out.add(close);
      }
      if (named || v.kind == ValueKind::Frozenset) out.add(")");
      if (!why.empty()) out.lost(why);
      out.active.pop_back();
      return;
    }
    switch (v.kind) {
      case ValueKind::None: out.add("None"); return;
      case ValueKind::Bool:
        if (!v.boolean) break;
        out.add(*v.boolean ? "True" : "False");
        return;
      case ValueKind::Int: {
        ReadProblem why;
        auto d = objects.int_decimal(obj, limits.int_digits, &why);
        if (!d) {
          out.lost(why);
          out.add("<" + v.type + " too large or unreadable at " + hex(obj) + ">");
          return;
        }
        out.add(v.type == "int" ? *d : v.type + "(" + *d + ")");
        return;
      }
      case ValueKind::Float:
        if (!v.real) break;
        out.add(float_repr(*v.real));
        return;
      case ValueKind::Str: {
        std::int64_t n = 0;
        ReadProblem why;
        auto s = objects.str_prefix(obj, limits.str_chars, &n, &why);
        if (!s) break;
        out.add(str_repr(*s));
        if (static_cast<std::uint64_t>(n) > limits.str_chars) {
          out.add("...(" + std::to_string(n) + " characters)");
          out.complete = false;
        }
        return;
      }
      case ValueKind::Bytes: {
        std::int64_t n = 0;
        ReadProblem why;
        auto b = objects.bytes_prefix(obj, limits.bytes, &n, &why);
        if (!b) break;
        out.add(bytes_repr(*b));
        if (static_cast<std::uint64_t>(n) > limits.bytes) {
          out.add("...(" + std::to_string(n) + " bytes)");
          out.complete = false;
        }
        return;
      }
      case ValueKind::Module: {
        Addr name = objects.attribute(obj, "__name__");
        auto s = name ? str_of(name, limits.str_chars) : std::nullopt;
        out.add(s ? "<module " + str_repr(*s) + ">" : object_name(obj, v.type));
        return;
      }
      default: {
        if (locks && layout && (v.type == locks->lock_type || v.type == locks->rlock_type)) {
          out.add(lock_text(obj, v.type == locks->rlock_type, out));
          return;
        }
        if (v.type == "type" || has_flag(obj, &Layout::tpflags_type_subclass)) {
          auto n = class_name(obj);
          out.add(n ? "<class '" + *n + "'>" : object_name(obj, v.type));
          return;
        }
        if (auto f = function_text(obj, v.type)) {
          out.add(*f);
          return;
        }
        if (auto t = thread_text(obj, v.type)) {
          out.add(*t);
          return;
        }
        if (has_flag(obj, &Layout::tpflags_base_exc_subclass)) {
          exception(out, obj, v.type, depth);
          return;
        }
        if (has_flag(obj, &Layout::tpflags_heaptype)) {
          instance(out, obj, v.type, depth);
          return;
        }
        out.add(object_name(obj, v.type));
        return;
      }
    }
    // A number, str or bytes whose contents could not be read.
    out.add(unreadable(out, obj, v.problem.empty() ? ReadProblem{{{ReadPart::Object, obj, v.type, 0}}, ReadWhy::Unreadable}
                                                   : v.problem));
  }
};

ValueRenderer::ValueRenderer(MemoryReader& memory, const PythonState& state, const ValueLimits& limits)
    : impl_(std::make_unique<Impl>(memory, state, limits)) {}
ValueRenderer::~ValueRenderer() = default;

bool ValueRenderer::ok() const { return impl_->objects.ok(); }
const ReadProblem& ValueRenderer::problem() const { return impl_->objects.problem(); }

RenderedValue ValueRenderer::render(Addr object) {
  RenderedValue r;
  r.address = object;
  if (!ok()) {
    r.repr = "<unreadable at " + hex(object) + ">";
    r.complete = false;
    r.problem = problem();
    return r;
  }
  impl_->budget.reset(impl_->limits.reads);
  r.type = impl_->objects.type_name(object).value_or("");
  Impl::Out out{.text = {}, .limit = std::max<std::size_t>(impl_->limits.output, 16)};
  impl_->value(out, object, 0);
  if (out.full() && !out.complete) {
    out.text += "...";
    out.complete = false;
  }
  if (impl_->budget.exhausted()) {  // the cause of whatever else failed
    out.complete = false;
    out.problem = {};
    out.problem.why = ReadWhy::ReadLimit;
    out.problem.limit = static_cast<std::int64_t>(impl_->limits.reads);
  }
  r.repr = std::move(out.text);
  r.complete = out.complete;
  r.problem = std::move(out.problem);
  impl_->budget.reset(std::numeric_limits<std::size_t>::max());
  return r;
}

}  // namespace pyhang::cpython
