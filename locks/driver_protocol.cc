#include "locks/driver_protocol.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/json_limits.h"
#include "locks/backend.h"
#include "locks/lease_ttl.h"

namespace locklab::locks {

std::string LineExcerpt(const std::string& s, size_t n) {
  // At most n input bytes, never cut inside a UTF-8 sequence; bytes that are not UTF-8 are
  // escaped like control characters, so the excerpt can go into JSON (a history event).
  size_t cut = std::min(n, s.size());
  for (int k = 0; k < 3 && cut > 0 && cut < s.size() &&
                  (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80;
       ++k) {
    --cut;  // back to the start of the sequence the cut fell into
  }
  std::string safe = EscapeInvalidUtf8(std::string_view(s).substr(0, cut));
  std::string out;
  for (char ch : safe) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  if (s.size() > n) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string CheckLineBytes(const std::string& line) {
  size_t bad = FirstInvalidUtf8(line);
  if (bad != std::string::npos) {
    char byte[8];
    snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(line[bad]));
    std::string field = TopLevelFieldAt(line, bad);
    return "line is not UTF-8 (byte " + std::string(byte) + " at offset " + std::to_string(bad) +
           (field.empty() ? "" : ", in field '" + LineExcerpt(field, 40) + "'") + "): '" +
           LineExcerpt(line) + "'";
  }
  std::string field;
  size_t deep = FirstTooDeep(line, kMaxJsonDepth, &field);
  if (deep != std::string::npos) {
    return "line nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (at offset " +
           std::to_string(deep) + (field.empty() ? "" : ", in field '" + LineExcerpt(field, 40) + "'") +
           ")";
  }
  return "";
}

int64_t MillisUntil(Nanos t) {
  Nanos left = t - MonotonicNow();
  if (left <= Nanos(0)) return 0;
  return std::chrono::ceil<Millis>(left).count();
}

bool IsBlankLine(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

bool IsWellFormedPointName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

const std::vector<std::string>& DriverBackends() {
  static const std::vector<std::string> kBackends = [] {
    std::vector<std::string> out;
    for (Backend b : AllBackends()) out.push_back(BackendName(b));
    return out;
  }();
  return kBackends;
}

std::string CheckHello(const std::string& line, DriverHello* out) {
  if (std::string bad = CheckLineBytes(line); !bad.empty()) return "hello: " + bad;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || j.value("hello", nlohmann::json()) != "locklab-driver") {
    return "first line is not a hello {\"hello\":\"locklab-driver\",...}: '" + LineExcerpt(line) +
           "'";
  }
  if (!j.contains("protocol") || !j["protocol"].is_number_integer() ||
      j["protocol"].get<int64_t>() != kDriverProtocolVersion) {
    return "hello: field 'protocol' must be " + std::to_string(kDriverProtocolVersion);
  }
  if (j.contains("renew") && !j["renew"].is_boolean()) {
    return "hello: field 'renew' must be true or false";
  }
  DriverHello h;
  h.renew = j.value("renew", false);
  if (j.contains("ttl_ms")) {
    const nlohmann::json& t = j["ttl_ms"];
    if (!t.is_number_integer() || !LeaseTtlInRange(Millis(t.get<int64_t>()))) {
      return "hello: field 'ttl_ms' must be an integer " + std::to_string(kMinLeaseTtl.count()) + ".." +
             std::to_string(kMaxLeaseTtl.count()) + " (milliseconds), got " +
             LineExcerpt(t.dump(), 40);
    }
    h.ttl = Millis(t.get<int64_t>());
  }
  if (j.contains("points")) {
    const nlohmann::json& p = j["points"];
    if (!p.is_array()) return "hello: field 'points' must be an array of point names";
    for (const auto& e : p) {
      if (!e.is_string() || !IsWellFormedPointName(e.get<std::string>())) {
        return "hello: field 'points': " + LineExcerpt(e.dump(), 70) +
               " is not a point name ([a-z0-9-]+, at most 64 characters)";
      }
      h.points.push_back(e.get<std::string>());
    }
  }
  if (j.contains("backend")) {
    // The hello's word becomes a Backend here, once.
    const nlohmann::json& b = j["backend"];
    const std::optional<Backend> backend =
        b.is_string() ? ParseBackend(b.get<std::string>()) : std::nullopt;
    if (!backend) {
      std::string list;
      for (const auto& k : DriverBackends()) list += (list.empty() ? "" : ", ") + k;
      return "hello: field 'backend' must be one of " + list + ", got " + LineExcerpt(b.dump(), 40);
    }
    h.backend = *backend;
  }
  if (j.contains("nodes")) {
    const nlohmann::json& n = j["nodes"];
    if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > kMaxDriverNodes) {
      return "hello: field 'nodes' must be an integer 1.." + std::to_string(kMaxDriverNodes) +
             ", got " + LineExcerpt(n.dump(), 40);
    }
    h.nodes = static_cast<int>(n.get<int64_t>());
  }
  if (j.contains("resource") && !j["resource"].is_boolean()) {
    return "hello: field 'resource' must be true or false";
  }
  h.resource = j.value("resource", false);
  if (j.contains("sentinel") && !j["sentinel"].is_boolean()) {
    return "hello: field 'sentinel' must be true or false";
  }
  h.sentinel = j.value("sentinel", false);
  if (j.contains("name")) {
    if (!j["name"].is_string()) return "hello: field 'name' must be a string";
    h.name = j["name"].get<std::string>();
  }
  h.line = line;
  *out = std::move(h);
  return "";
}

bool IsPointLine(const std::string& line) {
  if (!CheckLineBytes(line).empty()) return false;  // CheckAnswer says what is wrong
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  return j.is_object() && j.contains("point");
}

std::string CheckPointLine(const std::string& line, const std::vector<std::string>& declared,
                           std::string* name) {
  if (std::string bad = CheckLineBytes(line); !bad.empty()) return "point " + bad;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("point") || !j["point"].is_string() ||
      !IsWellFormedPointName(j["point"].get<std::string>())) {
    return "malformed point line (expected {\"point\":\"NAME\"}, NAME [a-z0-9-]+): '" +
           LineExcerpt(line) + "'";
  }
  std::string n = j["point"].get<std::string>();
  if (std::find(declared.begin(), declared.end(), n) == declared.end()) {
    std::string list;
    for (const auto& d : declared) list += (list.empty() ? "" : ", ") + d;
    return "point '" + n + "' was not announced in the hello (it announced: " +
           (list.empty() ? "none" : list) + ")";
  }
  *name = std::move(n);
  return "";
}

std::string PointGoLine(const std::string& name) {
  return nlohmann::ordered_json{{"point", name}, {"go", true}}.dump() + "\n";
}

std::string CheckAnswer(const std::string& line, int64_t pending_id, nlohmann::json* answer,
                        std::string* outcome) {
  if (std::string bad = CheckLineBytes(line); !bad.empty()) return "answer " + bad;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return "answer is not a JSON object: '" + LineExcerpt(line) + "'";
  }
  if (!j.contains("id") || !j["id"].is_number_integer()) {
    return "answer without an integer 'id': '" + LineExcerpt(line) + "'";
  }
  if (j["id"].get<int64_t>() != pending_id) {
    return "answer for id " + std::to_string(j["id"].get<int64_t>()) + " while id " +
           std::to_string(pending_id) + " is pending";
  }
  std::string o =
      j.contains("outcome") && j["outcome"].is_string() ? j["outcome"].get<std::string>() : "";
  if (o != "ok" && o != "fail" && o != "unknown") {
    return "answer field 'outcome' must be \"ok\", \"fail\" or \"unknown\": '" + LineExcerpt(line) +
           "'";
  }
  if (j.contains("detail") && !j["detail"].is_string()) {
    return "answer field 'detail' must be a string";
  }
  *answer = std::move(j);
  *outcome = o;
  return "";
}

bool IsValidCount(const nlohmann::json& answer, const char* field) {
  if (!answer.contains(field)) return true;
  const nlohmann::json& v = answer.at(field);
  return v.is_number_integer() && v.get<int64_t>() >= 0;
}

std::string WriteLine(int fd, const std::string& line, Nanos until) {
  size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n = write(fd, line.data() + sent, line.size() - sent);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      // The pipe is full: the driver reads no more. Short polls, so `until` is kept.
      if (MonotonicNow() >= until) return "the driver does not read its stdin";
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 20);
      continue;
    }
    return std::string("cannot send the request: ") + strerror(errno);
  }
  return "";
}

DriverLineReader::Result DriverLineReader::Read(int fd, Nanos until, std::string* line,
                                                std::string* why) {
  size_t scanned = 0;
  for (;;) {
    size_t nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos && nl <= max_line_bytes_) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Result::kLine;
    }
    scanned = buffer_.size();
    // Memory stays bounded: reading stops once a line is longer than the cap.
    if (buffer_.size() > max_line_bytes_) {
      *why = "answer line longer than max_line_bytes " + std::to_string(max_line_bytes_) +
             " (starts '" + LineExcerpt(buffer_, 60) + "')";
      return Result::kError;
    }
    // At most 1 s per poll (poll's int of milliseconds cannot hold a far-off deadline).
    pollfd p{fd, POLLIN, 0};
    int pr = poll(&p, 1, static_cast<int>(std::min<int64_t>(MillisUntil(until), 1000)));
    if (pr < 0 && errno != EINTR) {
      *why = std::string("poll: ") + strerror(errno);
      return Result::kError;
    }
    if (pr <= 0) {
      if (MonotonicNow() >= until) return Result::kTimeout;
      continue;
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      buffer_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    return Result::kEof;
  }
}

}  // namespace locklab::locks
