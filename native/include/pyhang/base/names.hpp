// Name tables of pyhang's enums: each enum has one constexpr array of
// {value, name} pairs, next to its declaration, and to_string / parse go
// through it.  The names are the strings the Python side reads in dicts
// ("mutex", "certain", "lock-word", ...).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace pyhang {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
constexpr std::string_view name_in(const std::array<Named<E>, N>& table, E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return {};
}

template <class E, std::size_t N>
constexpr std::optional<E> parse_in(const std::array<Named<E>, N>& table, std::string_view name) {
  for (const auto& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

}  // namespace pyhang
