// A value, or the data that says why there is none: how a decoder returns
// when not finding something is an ordinary outcome whose reason callers
// read as a kind and facts (a glibc version, a layout of glibc's lists of
// threads), where Outcome (pyhang/base/outcome.hpp) carries an Error.
#pragma once

#include <optional>
#include <utility>

namespace pyhang {

template <class T, class Why>
class OrWhy {
 public:
  OrWhy(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as a return value
  OrWhy(Why why) : why_(std::move(why)) {}      // NOLINT

  explicit operator bool() const { return value_.has_value(); }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }
  const std::optional<T>& value() const { return value_; }
  // Why there is no value (its default, "nothing", when there is one).
  const Why& problem() const { return why_; }

 private:
  std::optional<T> value_;
  Why why_{};
};

}  // namespace pyhang
