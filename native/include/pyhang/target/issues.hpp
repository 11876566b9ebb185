// What about a target could not be read or trusted: a kind and the path and
// numbers it is about (sentences are written by the Python renderer).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "pyhang/base/names.hpp"

namespace pyhang {

enum class TargetProblem : std::uint8_t {
  SymbolsUnreadable,   // `path`, a file the target mapped: its symbols unread (`text`: the ErrorReason name,
                       // `number` its errno, `other_text` the file opened for it)
  BuildIdMismatch,     // `path`, a file a core's process mapped: the one here is another build (`text` its
                       // build-id, `other_text` the core's); its symbols are not used
  CoreTruncated,       // `path`, a core: `number` of the `other` bytes of memory it should hold are missing
  CoreFilesMalformed,  // `path`, a core: its NT_FILE note is malformed, the mapped files unknown
  CoreNoThread,        // `path`, a core: no NT_PRSTATUS note, no thread
  CoreNoFiles,         // `path`, a core: no NT_FILE note, no symbols
};

inline constexpr std::array<Named<TargetProblem>, 6> kTargetProblemNames{{
    {TargetProblem::SymbolsUnreadable, "symbols-unreadable"},
    {TargetProblem::BuildIdMismatch, "build-id-mismatch"},
    {TargetProblem::CoreTruncated, "core-truncated"},
    {TargetProblem::CoreFilesMalformed, "core-files-malformed"},
    {TargetProblem::CoreNoThread, "core-no-thread"},
    {TargetProblem::CoreNoFiles, "core-no-files"},
}};
constexpr std::string_view to_string(TargetProblem p) { return name_in(kTargetProblemNames, p); }

struct TargetIssue {
  TargetProblem kind = TargetProblem::SymbolsUnreadable;
  std::string path;
  std::uint64_t number = 0, other = 0;
  std::string text, other_text;
  bool operator==(const TargetIssue&) const = default;
};

}  // namespace pyhang
