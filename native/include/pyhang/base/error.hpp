// The one error type of pyhang: a reason code for callers to branch on and
// the path and number it is about (the renderer words it for people).  Thrown only where a source cannot be opened at all
// (no such process, not an ELF file, not a core); where not finding
// something is an ordinary outcome it comes back as the error of an
// Outcome (pyhang/base/outcome.hpp).  Reading target memory never throws,
// and decoders report what they could not read in their results instead.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pyhang/base/names.hpp"

namespace pyhang {

enum class ErrorReason : std::uint8_t {
  Other,
  CannotOpen,      // a file cannot be opened (number: errno)
  CannotMap,       // a file opened but cannot be mapped (number: errno)
  MapsUnreadable,  // /proc/PID/maps cannot be read (number: the PID; the process is gone?)
  NotRegularFile,  // a path that is no regular file
  NotElf,          // a file that is no ELF file at all
  UnsupportedElf,  // an ELF file, but not a 64-bit little-endian x86_64 one
  NotCore,         // an ELF file that is no core file
  NoSuchProcess,   // no process with that PID (number: the PID)
  NotCodeObject,   // a Python object where a code object was expected
  NotFound,        // what was looked for is not in the target or the file
  Unsupported,     // a version pyhang has no layout table for
};

inline constexpr std::array<Named<ErrorReason>, 12> kErrorReasonNames{{
    {ErrorReason::Other, "other"},
    {ErrorReason::CannotOpen, "cannot-open"},
    {ErrorReason::CannotMap, "cannot-map"},
    {ErrorReason::MapsUnreadable, "maps-unreadable"},
    {ErrorReason::NotRegularFile, "not-regular-file"},
    {ErrorReason::NotElf, "not-elf"},
    {ErrorReason::UnsupportedElf, "unsupported-elf"},
    {ErrorReason::NotCore, "not-core"},
    {ErrorReason::NoSuchProcess, "no-such-process"},
    {ErrorReason::NotCodeObject, "not-code-object"},
    {ErrorReason::NotFound, "not-found"},
    {ErrorReason::Unsupported, "unsupported"},
}};
constexpr std::string_view to_string(ErrorReason r) { return name_in(kErrorReasonNames, r); }
constexpr std::optional<ErrorReason> parse_error_reason(std::string_view s) { return parse_in(kErrorReasonNames, s); }

// what() is the reason's name and the path (for logs and tests); people are
// told in words render/target.py makes from reason(), path() and number().
class Error : public std::runtime_error {
 public:
  Error(ErrorReason reason, const std::string& path, std::int64_t number = 0)
      : std::runtime_error(std::string(to_string(reason)) + " " + path), reason_(reason), path_(path),
        number_(number) {}
  ErrorReason reason() const { return reason_; }
  const std::string& path() const { return path_; }
  std::int64_t number() const { return number_; }

 private:
  ErrorReason reason_;
  std::string path_;
  std::int64_t number_;
};

}  // namespace pyhang
