#include "base/numbers.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace locklab {
namespace {

template <typename T>
std::optional<T> FromChars(std::string_view text) {
  T v{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// A double as a person writes it: 0.5, 2, 1e-06 (no trailing zeros of std::to_string).
std::string Shortest(double d) {
  std::ostringstream out;
  out << d;
  return out.str();
}

}  // namespace

std::optional<int64_t> ParseInt(std::string_view text, int64_t lo, int64_t hi) {
  std::optional<int64_t> v = FromChars<int64_t>(text);
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseUint64(std::string_view text) { return FromChars<uint64_t>(text); }

std::optional<double> ParseDouble(std::string_view text, double lo, double hi) {
  // strtod, not from_chars: it also reads a leading '+' and needs a NUL-terminated copy, but
  // its grammar is the one people expect ("1.", ".5", "1e3").
  std::string s(text);
  if (s.empty() || isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d) || d < lo || d > hi) return std::nullopt;
  return d;
}

std::string ExpectedInteger(int64_t lo, int64_t hi, std::string_view got) {
  std::string range = hi == kInt64Max ? ">= " + std::to_string(lo)
                                      : "in " + std::to_string(lo) + ".." + std::to_string(hi);
  return "expected an integer " + range + ", got '" + std::string(got) + "'";
}

std::string ExpectedNumber(double lo, double hi, std::string_view got) {
  return "expected a number in " + Shortest(lo) + ".." + Shortest(hi) + ", got '" +
         std::string(got) + "'";
}

Status ParseInt(std::string_view text, int64_t lo, int64_t hi, int64_t* out) {
  std::optional<int64_t> v = ParseInt(text, lo, hi);
  if (!v) return Status::Usage(ExpectedInteger(lo, hi, text));
  *out = *v;
  return Status::Ok();
}

Status ParseDouble(std::string_view text, double lo, double hi, double* out) {
  std::optional<double> v = ParseDouble(text, lo, hi);
  if (!v) return Status::Usage(ExpectedNumber(lo, hi, text));
  *out = *v;
  return Status::Ok();
}

}  // namespace locklab
