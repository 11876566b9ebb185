// A value, or the Error that says why there is none: how a reader returns
// when not finding something is an ordinary outcome (no libc mapped, a
// glibc version without a layout row), not an exception.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "pyhang/base/error.hpp"

namespace pyhang {

template <class T>
class Outcome {
 public:
  Outcome(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as a return value
  Outcome(Error error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }
  const std::optional<T>& value() const { return value_; }

  // Why there is no value; nullopt when there is one.
  const std::optional<Error>& error() const { return error_; }
  // The error's message, or "" when there is a value.
  std::string problem() const { return error_ ? std::string(error_->what()) : std::string(); }

 private:
  std::optional<T> value_;
  std::optional<Error> error_;
};

}  // namespace pyhang
