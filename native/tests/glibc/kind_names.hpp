// The kinds a decoder reported, as their names, for a failing test's INFO.
#pragma once

#include <string>
#include <vector>

#include "pyhang/glibc/identify.hpp"

namespace pyhang::glibc {

inline std::string names(const std::vector<LockIssue>& issues) {
  std::string out;
  for (const auto& i : issues)
    out += (out.empty() ? "" : " ") + std::string(to_string(i.kind)) + "(" + std::to_string(i.value) + ")";
  return out;
}

inline std::string names(const std::vector<Reason>& reasons) {
  std::string out;
  for (const auto& r : reasons)
    out += (out.empty() ? "" : " ") + std::to_string(r.points) + ":" + std::string(to_string(r.kind));
  return out;
}

// How a thread's wait was decided: the evidence kind, the frame hint and the best candidate's reasons.
inline std::string names(const BlockedOn& b) {
  return std::string(to_string(b.evidence)) + " hint=" + std::string(to_string(b.hint)) + " problem=" +
         std::string(to_string(b.problem)) + " best: " + (b.candidates.empty() ? "" : names(b.candidates[0].reasons));
}

}  // namespace pyhang::glibc
