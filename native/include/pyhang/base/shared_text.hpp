// A string many values share: copied as a reference count, not as its
// characters.  A process's Python frames name a few dozen functions and
// files between them, thousands of times (a pool of a thousand threads 50
// frames deep is 51,200 frames): each frame holding its own copies of those
// names costs two allocations and copies per frame and megabytes per read.
// A code object's names are made once (cpython's CodeCache) and every frame
// of that code shares them.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace pyhang {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string s) : text_(std::make_shared<const std::string>(std::move(s))) {}  // NOLINT: implicit
  SharedText(const char* s) : SharedText(std::string(s)) {}                                // NOLINT: implicit
  SharedText(std::string_view s) : SharedText(std::string(s)) {}                           // NOLINT: implicit

  const std::string& str() const { return text_ ? *text_ : empty_string(); }
  operator const std::string&() const { return str(); }  // NOLINT: implicit, as the string it stands for
  operator std::string_view() const { return str(); }    // NOLINT: implicit
  bool empty() const { return str().empty(); }
  std::size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }

  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }

  friend std::ostream& operator<<(std::ostream& out, const SharedText& t) { return out << t.str(); }

 private:
  static const std::string& empty_string() {
    static const std::string none;
    return none;
  }
  std::shared_ptr<const std::string> text_;
};

}  // namespace pyhang
