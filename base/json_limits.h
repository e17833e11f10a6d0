// Bytes from outside the lab (a lock driver's line, a history file) checked before they
// reach the JSON library, whose parser accepts any depth and whose dump() and copies then
// recurse once per level (a value nested 100,000 arrays deep overflowed the stack), and
// whose dump() throws on bytes that are not UTF-8 (type_error 316).
//
// Contract: pure functions over the bytes given, no allocation beyond their results; they
// never throw. kMaxJsonDepth is the lab's one nesting limit: every reader of outside JSON
// (history lines, EDN forms, driver lines) refuses anything deeper, as bad input.
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace locklab {

// Levels of [ ] and { } a line of outside JSON may nest (a history event's own object is
// one level, so its `value` may nest 63 more).
constexpr int kMaxJsonDepth = 64;

// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or npos when all of `s` is.
size_t FirstInvalidUtf8(std::string_view s);

// `s` with every byte that is not part of well-formed UTF-8 written as \xNN (text for a
// message or a history event: always valid UTF-8).
std::string EscapeInvalidUtf8(std::string_view s);

// The offset of the first '[' or '{' (outside JSON strings) that opens level `limit` + 1,
// or npos when `json` nests no deeper than `limit`. *top_field, when given, is the key of
// the top-level object's member that holds it ("" when there is none). Only brackets and
// strings are looked at, so this works on text that is not (yet) known to be JSON.
size_t FirstTooDeep(std::string_view json, int limit, std::string* top_field = nullptr);

// The key of the top-level object's member whose text holds byte `offset` of `json` ("" when
// none: the offset is outside any member, or `json` is no object). Same scan as above.
std::string TopLevelFieldAt(std::string_view json, size_t offset);

}  // namespace locklab
