#include "base/json_limits.h"

#include <algorithm>
#include <cstdio>

namespace locklab {
namespace {

// The length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is not one.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (RFC 3629 table)
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;  // no surrogates
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c == 0xF4) n = 4, hi = 0x8F;  // nothing past U+10FFFF
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

size_t FirstInvalidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string EscapeInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceAt(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    char buf[8];
    snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i]));
    out += buf;
    ++i;
  }
  return out;
}

namespace {

// Walks `json` up to `stop` (or its end), tracking strings, depth and the top-level member;
// returns the offset of the first bracket that opens level limit + 1, or npos.
size_t Scan(std::string_view json, size_t stop, int limit, std::string* top_field) {
  int depth = 0;
  bool in_string = false;
  size_t string_from = 0;
  std::string_view last_string;  // the last string closed at depth 1: a member's key
  std::string_view field;        // the key of the top-level member being read
  const size_t n = std::min(stop, json.size());
  for (size_t i = 0; i < n; ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (depth == 1) last_string = json.substr(string_from, i - string_from);
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      string_from = i + 1;
    } else if (c == ':' && depth == 1) {
      field = last_string;
    } else if (c == ',' && depth == 1) {
      field = {};
    } else if (c == '[' || c == '{') {
      if (++depth > limit) {
        if (top_field != nullptr) *top_field = EscapeInvalidUtf8(field);
        return i;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      if (--depth == 0) field = {};
    }
  }
  if (top_field != nullptr) *top_field = depth >= 1 ? EscapeInvalidUtf8(field) : "";
  return std::string_view::npos;
}

}  // namespace

size_t FirstTooDeep(std::string_view json, int limit, std::string* top_field) {
  std::string ignored;
  size_t at = Scan(json, json.size(), limit, &ignored);
  if (at != std::string_view::npos && top_field != nullptr) *top_field = ignored;
  return at;
}

std::string TopLevelFieldAt(std::string_view json, size_t offset) {
  std::string field;
  Scan(json, offset, 1 << 30, &field);
  return field;
}

}  // namespace locklab
