// The C callable a Python frame calls (PyFrame::c_call).
//
// A frame that is inside a call stands at its CALL instruction (CALL,
// CALL_KW, CALL_FUNCTION_EX or a specialized form of one), whose inputs are
// the top of the frame's value stack, the callable deepest of them.  Where
// the frame records its stack pointer during the call (3.14+: every call
// that may run other code saves it first), the callable's slot is exact:
// the number of slots the instruction pops below it.  Before 3.14 the stack
// pointer lives in a register of the evaluation loop only; the depth of the
// stack at the instruction comes from the code instead, as the compiler
// counts it (bytecode.hpp), and the callable is that many slots above the
// stack's base less the call's inputs.  The object found counts only if its
// type is one of CPython's own C callables; its name being one the code uses
// (co_names) makes it certain, otherwise it is likely (a callable the code
// did not load by name: a local, an attribute of an attribute's result...).

#include <array>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython::detail {

namespace {

constexpr std::size_t kMaxNames = 4096;  // co_names entries compared
constexpr std::size_t kMaxName = 256;    // bytes of a C name (ml_name, tp_name)

struct CallRow {
  std::int64_t base;                   // the unspecialized opcode; -1 when the version has none
  std::array<std::int64_t, 4> mask;    // it and its specialized forms
  std::int64_t popped0, popped1;       // slots it pops at oparg 0 and 1
};

bool in_mask(const CallRow& row, int op) {
  if (row.base < 0 || op < 0 || op > 255) return false;
  return (static_cast<std::uint64_t>(row.mask[static_cast<std::size_t>(op / 64)]) >> (op % 64)) & 1;
}

}  // namespace

std::optional<std::int64_t> callable_depth(const Layout& l, int op, int oparg) {
  const CallRow rows[] = {
      {l.op_call, {l.op_call_mask0, l.op_call_mask1, l.op_call_mask2, l.op_call_mask3}, l.op_call_popped0,
       l.op_call_popped1},
      {l.op_call_kw, {l.op_call_kw_mask0, l.op_call_kw_mask1, l.op_call_kw_mask2, l.op_call_kw_mask3},
       l.op_call_kw_popped0, l.op_call_kw_popped1},
      {l.op_call_function_ex,
       {l.op_call_function_ex_mask0, l.op_call_function_ex_mask1, l.op_call_function_ex_mask2,
        l.op_call_function_ex_mask3},
       l.op_call_function_ex_popped0, l.op_call_function_ex_popped1},
  };
  for (const auto& row : rows) {
    if (!in_mask(row, op)) continue;
    if (row.popped0 <= 0 || row.popped1 < row.popped0) return std::nullopt;
    return row.popped0 + static_cast<std::int64_t>(oparg) * (row.popped1 - row.popped0);
  }
  return std::nullopt;
}

namespace {

class CallableReader {
 public:
  explicit CallableReader(ObjectReader& objects) : objects_(objects), mem_(objects.memory()), l_(objects.layout()) {}

  std::optional<CCall> describe(Addr obj) {
    if (!plausible_pointer(obj)) return std::nullopt;
    auto type = objects_.type_name(obj);
    auto flags = objects_.type_flags(obj);
    // CPython's own callable types are static types; a heap type of that name is someone else's.
    if (!type || !flags || !l_.has(l_.tpflags_heaptype) || (*flags & static_cast<std::uint64_t>(l_.tpflags_heaptype))) {
      return std::nullopt;
    }
    CCall out;
    out.callable = obj;
    out.type = *type;
    bool ok = false;
    if (*type == "builtin_function_or_method") ok = builtin(obj, out);
    else if (*type == "method_descriptor" || *type == "classmethod_descriptor") ok = descriptor(obj, "method", out);
    else if (*type == "wrapper_descriptor") ok = descriptor(obj, "slot wrapper", out);
    else if (*type == "method-wrapper") ok = method_wrapper(obj, out);
    else if (*type == "type") ok = static_type(obj, out);
    if (!ok || out.name.empty()) return std::nullopt;
    return out;
  }

 private:
  std::optional<std::string> c_name(Addr at) {
    auto p = mem_.read_pointer(at);
    if (!p || !plausible_pointer(*p & ~Addr{7})) return std::nullopt;
    auto s = mem_.read_cstring(*p, kMaxName);
    if (!s || s->empty() || s->size() >= kMaxName) return std::nullopt;
    return s;
  }
  std::optional<std::string> tp_name_of_type(Addr type) {
    if (!plausible_pointer(type) || !l_.has(l_.type_tp_name)) return std::nullopt;
    return c_name(type + static_cast<Addr>(l_.type_tp_name));
  }
  std::optional<std::string> str_at(Addr at) {
    auto p = mem_.read_pointer(at);
    if (!p || !plausible_pointer(*p)) return std::nullopt;
    ReadProblem problem;
    return objects_.read_str(*p, &problem);
  }
  std::optional<Addr> field(Addr obj, std::int64_t offset) {
    if (offset < 0) return std::nullopt;
    return mem_.read_pointer(obj + static_cast<Addr>(offset));
  }

  // A C function: module-level (self is the module or NULL) or bound to an object.
  bool builtin(Addr obj, CCall& out) {
    auto ml = field(obj, l_.cfunction_ml);
    auto self = field(obj, l_.cfunction_self);
    if (!ml || !plausible_pointer(*ml) || !self || !l_.has(l_.methoddef_name)) return false;
    auto name = c_name(*ml + static_cast<Addr>(l_.methoddef_name));
    if (!name) return false;
    out.name = *name;
    auto self_type = *self ? objects_.type_name(*self) : std::optional<std::string>{"module"};
    if (!self_type) return false;
    if (*self_type == "module") {
      auto module = l_.has(l_.cfunction_module) ? str_at(obj + static_cast<Addr>(l_.cfunction_module)) : std::nullopt;
      out.qualname = module ? *module + "." + *name : *name;
      out.repr = "<built-in function " + *name + ">";
    } else {
      out.qualname = *self_type + "." + *name;
      out.repr = "<built-in method " + *name + " of " + *self_type + " object at " + hex(*self) + ">";
    }
    return true;
  }

  // A method or slot of a C type, unbound (list.sort, object.__init__).
  bool descriptor(Addr obj, const char* kind, CCall& out) {
    auto d_type = field(obj, l_.descr_type);
    if (!d_type || !l_.has(l_.descr_name)) return false;
    auto owner = tp_name_of_type(*d_type);
    auto name = str_at(obj + static_cast<Addr>(l_.descr_name));
    if (!owner || !name) return false;
    out.name = *name;
    out.qualname = *owner + "." + *name;
    out.repr = std::string("<") + kind + " '" + *name + "' of '" + *owner + "' objects>";
    return true;
  }

  // A slot wrapper bound to an object (obj.__init__ of a C base's slot).
  bool method_wrapper(Addr obj, CCall& out) {
    if (!l_.has(l_.object_size)) return false;
    auto descr = field(obj, l_.object_size);
    auto self = field(obj, l_.object_size + 8);
    if (!descr || !self || !plausible_pointer(*self)) return false;
    auto descr_type = objects_.type_name(*descr);
    auto self_type = objects_.type_name(*self);
    if (!descr_type || *descr_type != "wrapper_descriptor" || !self_type) return false;
    if (!l_.has(l_.descr_name) || !l_.has(l_.descr_type)) return false;
    auto name = str_at(*descr + static_cast<Addr>(l_.descr_name));
    auto owner = field(*descr, l_.descr_type);
    auto owner_name = owner ? tp_name_of_type(*owner) : std::nullopt;
    if (!name || !owner_name) return false;
    out.name = *name;
    out.qualname = *owner_name + "." + *name;  // the C type whose slot it is
    out.repr = "<method-wrapper '" + *name + "' of " + *self_type + " object at " + hex(*self) + ">";
    return true;
  }

  // A C type called to make an instance (list(...), dict(...)).
  bool static_type(Addr obj, CCall& out) {
    auto flags = mem_.read_value<std::uint64_t>(obj + static_cast<Addr>(l_.type_tp_flags));
    auto name = tp_name_of_type(obj);
    if (!flags || !name || (*flags & static_cast<std::uint64_t>(l_.tpflags_heaptype))) return false;
    auto dot = name->rfind('.');
    out.name = dot == std::string::npos ? *name : name->substr(dot + 1);
    out.qualname = *name;
    out.repr = "<class '" + *name + "'>";
    return true;
  }

  ObjectReader& objects_;
  MemoryReader& mem_;
  const Layout& l_;
};

// Whether `name` is one of the code object's co_names.
bool code_uses_name(ObjectReader& objects, Addr code, const std::string& name) {
  const Layout& l = objects.layout();
  MemoryReader& mem = objects.memory();
  if (!l.has(l.code_names) || !l.has(l.tuple_ob_item) || !l.has(l.var_ob_size)) return false;
  auto names = mem.read_pointer(code + static_cast<Addr>(l.code_names));
  if (!names || !plausible_pointer(*names)) return false;
  auto size = mem.read_value<std::int64_t>(*names + static_cast<Addr>(l.var_ob_size));
  if (!size || *size < 0) return false;
  std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(*size), kMaxNames);
  std::vector<Addr> items(n);
  if (n && !mem.read(*names + static_cast<Addr>(l.tuple_ob_item), items.data(), n * 8)) return false;
  for (Addr item : items) {
    ReadProblem problem;
    auto s = plausible_pointer(item) ? objects.read_str(item, &problem) : std::nullopt;
    if (s && *s == name) return true;
  }
  return false;
}

// 3.14+: the value-stack slot of the callable a frame's current instruction
// calls, from the stack pointer the frame saved; 0 when none.
Addr slot_from_stack_pointer(ObjectReader& objects, const PyFrame& f) {
  const Layout& l = objects.layout();
  MemoryReader& mem = objects.memory();
  if (!l.has(l.iframe_instr) || !l.has(l.iframe_localsplus) || !l.has(l.code_nlocalsplus) ||
      !l.has(l.code_stacksize) || !plausible_pointer(f.frame) || !plausible_pointer(f.code)) {
    return 0;
  }
  auto instr = mem.read_pointer(f.frame + static_cast<Addr>(l.iframe_instr));
  auto sp = mem.read_pointer(f.frame + static_cast<Addr>(l.iframe_stackpointer));
  auto nlocalsplus = mem.read_value<std::int32_t>(f.code + static_cast<Addr>(l.code_nlocalsplus));
  auto stacksize = mem.read_value<std::int32_t>(f.code + static_cast<Addr>(l.code_stacksize));
  if (!instr || !sp || !nlocalsplus || !stacksize || *nlocalsplus < 0 || *stacksize <= 0 || *instr < 2) return 0;
  std::array<std::uint8_t, 4> units{};  // the unit before the instruction, then the instruction
  if (!mem.read(*instr - 2, units.data(), units.size())) return 0;
  // A prefix would make the oparg wider than one byte; such calls (256+ arguments) are left alone.
  if (l.has(l.op_extended_arg) && units[0] == l.op_extended_arg) return 0;
  auto depth = callable_depth(l, units[2], units[3]);
  if (!depth) return 0;
  const Addr base = f.frame + static_cast<Addr>(l.iframe_localsplus) + 8 * static_cast<Addr>(*nlocalsplus);
  const Addr top = base + 8 * static_cast<Addr>(*stacksize);
  if (*sp < base || *sp > top || (*sp - base) % 8 != 0) return 0;
  const Addr slot = *sp - 8 * static_cast<Addr>(*depth);
  if (slot < base || slot >= *sp) return 0;
  auto value = mem.read_pointer(slot);
  return value ? l.untag(*value) : 0;
}

// 3.6 - 3.13: a code object's instructions and their stack depths, read and
// analysed once for all frames of it; null when they cannot be.
std::shared_ptr<const CodeInfo::Flow> code_flow(ObjectReader& objects, const CodeInfo& info, Addr code) {
  if (info.flow) return info.flow;
  const Layout& l = objects.layout();
  MemoryReader& mem = objects.memory();
  const BytecodeTable* table = bytecode_table(l.minor);
  const std::size_t max = objects.options().max_table;
  if (!table) return nullptr;
  auto flow = std::make_shared<CodeInfo::Flow>();
  ReadProblem why;
  std::vector<std::uint8_t> exceptions;
  if (l.has(l.code_code_adaptive)) {  // 3.11+: the instructions live in the code object, Py_SIZE units
    auto units = mem.read_value<std::int64_t>(code + static_cast<Addr>(l.var_ob_size));
    if (!units || *units <= 0 || static_cast<std::uint64_t>(*units) * 2 > max) return nullptr;
    flow->code.resize(static_cast<std::size_t>(*units) * 2);
    if (!mem.read(code + static_cast<Addr>(l.code_code_adaptive), flow->code.data(), flow->code.size())) return nullptr;
    auto table_object = l.has(l.code_exceptiontable)
                            ? mem.read_pointer(code + static_cast<Addr>(l.code_exceptiontable))
                            : std::nullopt;
    if (!table_object) return nullptr;
    auto bytes = objects.read_bytes(*table_object, max, &why);
    if (!bytes) return nullptr;
    exceptions = std::move(*bytes);
  } else {
    auto object = l.has(l.code_code) ? mem.read_pointer(code + static_cast<Addr>(l.code_code)) : std::nullopt;
    auto bytes = object ? objects.read_bytes(*object, max, &why) : std::nullopt;
    if (!bytes) return nullptr;
    flow->code = std::move(*bytes);
  }
  flow->depths = analyse_stack_depths(*table, flow->code, exceptions);
  info.flow = flow;
  return flow;
}

// 3.6 - 3.13: the value-stack slot of the callable a frame's current
// instruction calls, from the stack depth the code gives it; 0 when none.
Addr slot_from_code(ObjectReader& objects, CodeCache& codes, const PyFrame& f) {
  const Layout& l = objects.layout();
  MemoryReader& mem = objects.memory();
  const BytecodeTable* table = bytecode_table(l.minor);
  if (!table || !plausible_pointer(f.frame) || !plausible_pointer(f.code) || !l.has(l.code_stacksize)) return 0;
  const CodeInfo& info = codes.get(f.code);
  if (!info.ok) return 0;
  std::optional<Addr> base;
  std::int64_t offset = -1;  // bytes from the first instruction to the current one
  if (l.frame_model == FrameModel::FrameObject) {
    auto lasti = mem.read_value<std::int32_t>(f.frame + static_cast<Addr>(l.frame_lasti));
    base = mem.read_pointer(f.frame + static_cast<Addr>(l.frame_valuestack));
    if (lasti) offset = std::int64_t{*lasti} * l.lasti_unit;
  } else {
    auto instr = mem.read_pointer(f.frame + static_cast<Addr>(l.iframe_instr));
    auto nlocalsplus = mem.read_value<std::int32_t>(f.code + static_cast<Addr>(l.code_nlocalsplus));
    if (instr && info.code_start && *instr >= info.code_start) offset = static_cast<std::int64_t>(*instr - info.code_start);
    if (nlocalsplus && *nlocalsplus >= 0) {
      base = f.frame + static_cast<Addr>(l.iframe_localsplus) + 8 * static_cast<Addr>(*nlocalsplus);
    }
  }
  auto stacksize = mem.read_value<std::int32_t>(f.code + static_cast<Addr>(l.code_stacksize));
  if (!base || !plausible_pointer(*base) || offset < 0 || offset % 2 || !stacksize || *stacksize <= 0) return 0;
  auto flow = code_flow(objects, info, f.code);
  if (!flow) return 0;
  auto at = depth_at(*table, flow->code, flow->depths, static_cast<std::size_t>(offset / 2));
  if (!at || at->row->call_base < 0) return 0;
  auto effect = at->row->next.at(at->arg);
  if (!effect) return 0;
  const std::int64_t inputs = at->row->call_base - *effect;
  const std::int64_t deepest = std::int64_t{at->depth} - inputs;
  if (inputs <= 0 || deepest < 0 || at->depth > *stacksize) return 0;
  auto value = mem.read_pointer(*base + 8 * static_cast<Addr>(deepest));
  if (value && *value == 0 && at->row->null_first && inputs >= 2) value = mem.read_pointer(*base + 8 * static_cast<Addr>(deepest + 1));
  return value ? *value : 0;
}

}  // namespace

std::optional<CCall> frame_c_call(ObjectReader& objects, CodeCache& codes, const PyFrame& frame) {
  const Layout& l = objects.layout();
  Addr callable = l.has(l.iframe_stackpointer) ? slot_from_stack_pointer(objects, frame)
                                               : slot_from_code(objects, codes, frame);
  if (!callable) return std::nullopt;
  auto call = CallableReader(objects).describe(callable);
  if (call) call->name_in_code = code_uses_name(objects, frame.code, call->name);
  return call;
}

void add_c_calls(ObjectReader& objects, CodeCache& codes, std::vector<PyFrame>& frames) {
  const Layout& l = objects.layout();
  if (!l.has(l.iframe_stackpointer) && !bytecode_table(l.minor)) return;
  const bool own_loop = l.frame_model == FrameModel::FrameObject;  // <= 3.10: every frame is its own loop's
  for (std::size_t i = 0; i < frames.size(); ++i) {
    // 3.11+: an older frame calls C only where C called into the evaluation
    // loop for its newer neighbour; a Python function it called directly runs
    // in the same loop, and its slot is no callable's any more.
    if (i > 0 && !own_loop && !frames[i - 1].entry_frame) continue;
    if (frames[i].function == "<unknown>") continue;
    if (auto call = frame_c_call(objects, codes, frames[i])) frames[i].c_call = std::make_shared<const CCall>(std::move(*call));
  }
}

}  // namespace pyhang::cpython::detail
