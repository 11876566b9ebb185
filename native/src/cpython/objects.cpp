// Reading str and bytes objects and the facts of their types.
#include <algorithm>
#include <bit>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"

namespace pyhang::cpython::detail {

namespace {

constexpr std::size_t kMaxTypeName = 256;
constexpr std::size_t kRememberedStr = 256;  // bytes of a str read_str remembers (names, dict keys)
constexpr std::int64_t kMaxLength = std::int64_t{1} << 40;  // a len() beyond this is garbage (ObjectLimits)

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x110000) {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out += "\xEF\xBF\xBD";  // U+FFFD for values no code point has
  }
}

std::uint32_t field_bits(std::uint32_t word, std::int64_t mask) {
  if (mask <= 0) return 0;
  auto m = static_cast<std::uint32_t>(mask);
  return (word & m) >> std::countr_zero(m);
}

}  // namespace

std::size_t span_of(std::initializer_list<std::int64_t> offsets) {
  std::int64_t end = 0;
  for (auto o : offsets) end = std::max(end, o + 8);
  return static_cast<std::size_t>(end);
}

const ObjectReader::TypeFacts* ObjectReader::type_of(Addr obj) {
  if (!plausible_pointer(obj)) return nullptr;
  auto type = mem_.read_pointer(obj + l_.object_ob_type);
  if (!type || !plausible_pointer(*type)) return nullptr;
  auto it = types_.find(*type);
  if (it != types_.end()) return &it->second;
  TypeFacts facts;
  RemoteStruct t;
  if (t.load(mem_, *type, span_of({l_.type_tp_name, l_.type_tp_flags}))) {
    facts.flags = t.get<std::uint64_t>(l_.type_tp_flags);
    Addr name = t.ptr(l_.type_tp_name);
    if (name) facts.name = mem_.read_cstring(name, kMaxTypeName);
  }
  if (!facts.name || !facts.flags) {  // maybe a passing failure (a read budget): asked again next time
    unread_ = std::move(facts);
    return &unread_;
  }
  return &types_.emplace(*type, std::move(facts)).first->second;
}

std::optional<std::string> ObjectReader::type_name(Addr obj) {
  auto* facts = type_of(obj);
  return facts ? facts->name : std::nullopt;
}

std::optional<std::uint64_t> ObjectReader::type_flags(Addr obj) {
  auto* facts = type_of(obj);
  return facts ? facts->flags : std::nullopt;
}

std::optional<std::string> ObjectReader::read_str(Addr obj, ReadProblem* problem) {
  if (mem_.generation() != strs_generation_) {
    strs_.clear();
    strs_generation_ = mem_.generation();
  }
  if (auto it = strs_.find(obj); it != strs_.end()) return it->second;
  std::int64_t length = 0;
  auto s = read_str_prefix(obj, opts_.max_string, &length, problem);
  if (s && static_cast<std::uint64_t>(length) > opts_.max_string) {
    if (problem) *problem = unread_named(ReadPart::Str, obj, ReadWhy::Implausible, "length", length);
    return std::nullopt;
  }
  if (s && s->size() <= kRememberedStr) strs_.emplace(obj, *s);
  return s;
}

std::optional<std::string> ObjectReader::read_str_prefix(Addr obj, std::size_t max_chars, std::int64_t* length_out,
                                                         ReadProblem* problem) {
  // Every problem names the string's address.
  auto fail = [&](ReadProblem why) -> std::optional<std::string> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  auto str = [&](ReadWhy why, const char* name = "", std::optional<std::int64_t> number = std::nullopt) {
    return unread_named(ReadPart::Str, obj, why, name, number);
  };
  auto flags = type_flags(obj);
  if (!flags) return fail(str(ReadWhy::Unreadable));
  if (!(*flags & static_cast<std::uint64_t>(l_.tpflags_unicode_subclass))) return fail(str(ReadWhy::NotA));

  RemoteStruct s;
  if (!s.load(mem_, obj, span_of({l_.unicode_length, l_.unicode_state, l_.unicode_legacy_data})) &&
      !s.load(mem_, obj, static_cast<std::size_t>(l_.unicode_ascii_data)))
    return fail(str(ReadWhy::Unreadable));
  auto length = s.get<std::int64_t>(l_.unicode_length);
  auto state = s.get<std::uint32_t>(l_.unicode_state);
  if (!length || !state) return fail(str(ReadWhy::Unreadable));
  if (*length < 0 || *length > kMaxLength) return fail(str(ReadWhy::Implausible, "length", *length));
  if (length_out) *length_out = *length;

  unsigned kind = field_bits(*state, l_.unicode_kind_mask);
  bool compact = field_bits(*state, l_.unicode_compact_mask);
  bool ascii = field_bits(*state, l_.unicode_ascii_mask);
  if (kind != 1 && kind != 2 && kind != 4) return fail(str(ReadWhy::Invalid, "kind", kind));
  if (ascii && kind != 1) return fail(str(ReadWhy::Inconsistent, "", kind));

  Addr data = 0;
  if (compact && ascii) {
    data = obj + l_.unicode_ascii_data;
  } else if (compact) {
    data = obj + l_.unicode_compact_data;
  } else {
    // Legacy (non-compact) string: data.any points at the characters, and
    // only once it is "ready" (before 3.12; wstr-only strings are not).
    if (l_.has(l_.unicode_ready_mask) && !field_bits(*state, l_.unicode_ready_mask))
      return fail(str(ReadWhy::NotReady));
    data = s.ptr(l_.unicode_legacy_data);
    if (!plausible_pointer(data)) return fail(unread_field(ReadPart::Str, obj, "data.any", ReadWhy::Implausible));
  }
  std::size_t chars = std::min<std::size_t>({static_cast<std::size_t>(*length), max_chars, opts_.max_string});
  std::vector<std::uint8_t> raw(chars * kind);
  if (!raw.empty() && !mem_.read(data, raw.data(), raw.size())) return fail(unread_field(ReadPart::Str, obj, "characters"));

  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); i += kind) {
    std::uint32_t cp = 0;
    if (kind == 1) cp = raw[i];
    else if (kind == 2) cp = raw[i] | (raw[i + 1] << 8);
    else cp = raw[i] | (raw[i + 1] << 8) | (raw[i + 2] << 16) | (static_cast<std::uint32_t>(raw[i + 3]) << 24);
    append_utf8(out, cp);
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> ObjectReader::read_bytes(Addr obj, std::size_t max, ReadProblem* problem) {
  std::int64_t length = 0;
  auto b = read_bytes_prefix(obj, max, &length, problem);
  if (b && static_cast<std::uint64_t>(length) > max) {
    if (problem) *problem = unread_named(ReadPart::Bytes, obj, ReadWhy::Implausible, "length", length);
    return std::nullopt;
  }
  return b;
}

std::optional<std::vector<std::uint8_t>> ObjectReader::read_bytes_prefix(Addr obj, std::size_t max,
                                                                         std::int64_t* length, ReadProblem* problem) {
  auto fail = [&](ReadProblem why) -> std::optional<std::vector<std::uint8_t>> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  auto flags = type_flags(obj);
  if (!flags) return fail(unread(ReadPart::Bytes, obj));
  if (!(*flags & static_cast<std::uint64_t>(l_.tpflags_bytes_subclass)))
    return fail(unread(ReadPart::Bytes, obj, ReadWhy::NotA));
  auto size = mem_.read_value<std::int64_t>(obj + l_.var_ob_size);
  if (!size) return fail(unread(ReadPart::Bytes, obj));
  if (*size < 0 || *size > kMaxLength)
    return fail(unread_named(ReadPart::Bytes, obj, ReadWhy::Implausible, "length", *size));
  if (length) *length = *size;
  std::vector<std::uint8_t> out(std::min(static_cast<std::size_t>(*size), max));
  if (!out.empty() && !mem_.read(obj + l_.bytes_ob_sval, out.data(), out.size()))
    return fail(unread_field(ReadPart::Bytes, obj, "contents"));
  return out;
}

}  // namespace pyhang::cpython::detail
