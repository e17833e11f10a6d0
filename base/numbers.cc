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

namespace {

struct DurationUnit {
  std::string_view suffix;
  int64_t ms;
};
// Longest suffix first: "ms" before "m" and "s" (parsing); then largest first (FormatDuration).
constexpr DurationUnit kDurationUnits[] = {{"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};

constexpr std::string_view kDurationSyntax =
    "expected a duration like 500ms, 6s, 2m or 1h (a bare number is milliseconds), got '";

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string RangeWords(std::chrono::milliseconds lo, std::chrono::milliseconds hi) {
  if (hi.count() == kInt64Max) return ">= " + FormatDuration(lo);
  return "in " + FormatDuration(lo) + ".." + FormatDuration(hi);
}

}  // namespace

std::string FormatDuration(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  // The unit table's h, m, s (largest first after "ms"): the first that divides evenly.
  for (const DurationUnit& u : kDurationUnits) {
    if (u.ms > 1 && ms != 0 && ms % u.ms == 0) return std::to_string(ms / u.ms) + std::string(u.suffix);
  }
  return std::to_string(ms) + "ms";
}

Status ParseDuration(std::string_view text, std::chrono::milliseconds lo,
                     std::chrono::milliseconds hi, std::chrono::milliseconds* out) {
  std::string_view number = text;
  int64_t unit = 1;
  bool bare = true;
  for (const DurationUnit& u : kDurationUnits) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      number = text.substr(0, text.size() - u.suffix.size());
      unit = u.ms;
      bare = false;
      break;
    }
  }
  const std::string got(text);
  if (!AllDigits(number)) {
    // "1.5s": a decimal, refused (a duration is whole units) with its exact spelling in ms.
    size_t dot = number.find('.');
    if (dot != std::string_view::npos && dot > 0 && AllDigits(number.substr(0, dot)) &&
        AllDigits(number.substr(dot + 1)) && number.size() - dot - 1 <= 3) {
      std::string_view frac = number.substr(dot + 1);
      std::optional<int64_t> whole = ParseInt(number.substr(0, dot), 0, kInt64Max / unit - 1);
      int64_t scale = 1;
      for (size_t i = 0; i < frac.size(); ++i) scale *= 10;
      std::optional<int64_t> part = ParseInt(frac, 0, kInt64Max);
      std::string hint;
      if (whole && part && (*part * unit) % scale == 0) {
        hint = "; write " +
               FormatDuration(std::chrono::milliseconds(*whole * unit + *part * unit / scale)) + "?";
      }
      return Status::Usage("expected whole units, got '" + got + "'" + hint);
    }
    return Status::Usage(std::string(kDurationSyntax) + got + "'");
  }
  // All digits: too many for int64, or more milliseconds than int64 holds, is out of range.
  std::optional<int64_t> n = ParseInt(number, 0, kInt64Max);
  if (!n || *n > kInt64Max / unit) {
    return Status::Usage("expected a duration " + RangeWords(lo, hi) + ", got '" + got + "'");
  }
  const std::chrono::milliseconds d(*n * unit);
  if (bare && d < lo) {
    // "--duration 6" meant seconds under the old rule; say what it means now.
    std::string hint;
    if (*n <= kInt64Max / 1000 && std::chrono::milliseconds(*n * 1000) >= lo &&
        std::chrono::milliseconds(*n * 1000) <= hi) {
      hint = "; write " + got + "s?";
    }
    return Status::Usage(got + " means " + got +
                         " ms (a bare number is milliseconds), below the minimum " +
                         FormatDuration(lo) + hint);
  }
  if (d < lo || d > hi) {
    return Status::Usage("expected a duration " + RangeWords(lo, hi) + ", got '" + got + "'");
  }
  *out = d;
  return Status::Ok();
}

bool ParseShard(std::string_view text, int* index, int* count) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  std::optional<int64_t> n = ParseInt(text.substr(slash + 1), 1, 10000);
  std::optional<int64_t> i = n ? ParseInt(text.substr(0, slash), 1, *n) : n;
  if (!i) return false;
  *index = static_cast<int>(*i);
  *count = static_cast<int>(*n);
  return true;
}

}  // namespace locklab
