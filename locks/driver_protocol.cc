#include "locks/driver_protocol.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace locklab::locks {

std::string LineExcerpt(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > n) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

int64_t MillisUntil(Nanos t) {
  Nanos left = t - MonotonicNow();
  if (left <= Nanos(0)) return 0;
  return std::chrono::ceil<Millis>(left).count();
}

bool IsBlankLine(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

std::string CheckHello(const std::string& line, bool* renew) {
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
  *renew = j.value("renew", false);
  return "";
}

std::string CheckAnswer(const std::string& line, int64_t pending_id, nlohmann::json* answer,
                        std::string* outcome) {
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
