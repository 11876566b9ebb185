// The reprs of Python's scalar values (see cpython/reprs.hpp).
#include "cpython/reprs.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace pyhang::cpython::detail {

namespace {

// The quote Python's repr picks: ' unless the text has ' and no ".
char quote_for(std::string_view s) {
  return s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
}

void escape_ascii(std::string& out, unsigned char c, char quote) {
  static const char* hexdigits = "0123456789abcdef";
  if (c == '\\' || c == static_cast<unsigned char>(quote)) {
    out += '\\';
    out += static_cast<char>(c);
  } else if (c == '\n') {
    out += "\\n";
  } else if (c == '\r') {
    out += "\\r";
  } else if (c == '\t') {
    out += "\\t";
  } else if (c < 0x20 || c >= 0x7f) {
    out += "\\x";
    out += hexdigits[c >> 4];
    out += hexdigits[c & 15];
  } else {
    out += static_cast<char>(c);
  }
}

}  // namespace

// Python's repr of a float: the shortest digits that read back the same,
// positional for exponents -4 .. 15, else d.ddde±XX.
std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  std::string sign;
  if (!s.empty() && s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  auto e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e))
    if (c != '.') digits += c;
  int exp = std::atoi(s.c_str() + e + 1);
  if (exp < -4 || exp >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    int a = std::abs(exp);
    return out + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + std::to_string(a);
  }
  if (exp < 0) return sign + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  auto whole = static_cast<std::size_t>(exp + 1);
  if (digits.size() <= whole) return sign + digits + std::string(whole - digits.size(), '0') + ".0";
  return sign + digits.substr(0, whole) + "." + digits.substr(whole);
}

// A str's repr from its UTF-8: ASCII escaped as Python does, C1 controls
// (U+0080..U+009F) as \x80.., other characters as they are.
std::string str_repr(std::string_view s) {
  char q = quote_for(s);
  std::string out(1, q);
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      escape_ascii(out, c, q);
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      escape_ascii(out, static_cast<unsigned char>(s[++i]), q);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

std::string bytes_repr(const std::vector<std::uint8_t>& b) {
  std::string_view view(reinterpret_cast<const char*>(b.data()), b.size());
  char q = quote_for(view);
  std::string out = "b";
  out += q;
  for (auto c : b) escape_ascii(out, c, q);
  return out + q;
}

}  // namespace pyhang::cpython::detail
