#include "locks/http_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace locklab::locks {
namespace {

// Waits for `events` on `fd` until `end`; false on timeout.
bool WaitFd(int fd, short events, Nanos end) {
  for (;;) {
    Nanos now = MonotonicNow();
    if (now >= end) return false;
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, static_cast<int>((end - now).count() / 1000000 + 1));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let the read/write report the error
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool DecodeChunked(const std::string& in, std::string* out) {
  out->clear();
  size_t pos = 0;
  for (;;) {
    size_t eol = in.find("\r\n", pos);
    if (eol == std::string::npos) return false;
    std::string size_line = in.substr(pos, eol - pos);
    size_t semi = size_line.find(';');
    if (semi != std::string::npos) size_line.resize(semi);
    if (size_line.empty() || size_line.size() > 8) return false;
    size_t size = 0;
    for (char c : size_line) {
      int d = isdigit(static_cast<unsigned char>(c)) ? c - '0'
              : (c >= 'a' && c <= 'f')               ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')               ? c - 'A' + 10
                                                     : -1;
      if (d < 0) return false;
      size = size * 16 + static_cast<size_t>(d);
    }
    pos = eol + 2;
    if (size == 0) return true;
    if (in.size() < pos + size + 2) return false;
    out->append(in, pos, size);
    pos += size + 2;
  }
}

HttpResult HttpCall(const Endpoint& endpoint, const std::string& method, const std::string& path,
                    const std::string& body, Millis connect_timeout, Millis timeout) {
  HttpResult r;
  Nanos start = MonotonicNow();
  Nanos connect_end = start + std::min(connect_timeout, timeout);
  Nanos end = start + timeout;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    r.error = std::string("socket: ") + strerror(errno);
    return r;
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(endpoint.port));
  if (inet_pton(AF_INET, endpoint.host.c_str(), &addr.sin_addr) != 1) {
    r.error = "bad address " + endpoint.host;
    return r;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) {
      r.error = "connect " + endpoint.ToString() + ": " + strerror(errno);
      return r;  // kFail: nothing was sent
    }
    if (!WaitFd(fd, POLLOUT, connect_end)) {
      r.error = "connect timeout to " + endpoint.ToString();
      return r;  // kFail: nothing was sent
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      r.error = "connect " + endpoint.ToString() + ": " + strerror(err);
      return r;
    }
  }
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + endpoint.ToString() +
                    "\r\nConnection: close\r\n";
  if (!body.empty() || method == "POST") {
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  // From here on the server may have received (part of) the request: failures are unknown.
  r.outcome = Outcome::kUnknown;
  size_t sent = 0;
  while (sent < req.size()) {
    ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFd(fd, POLLOUT, end)) {
        r.error = "timeout sending to " + endpoint.ToString();
        return r;
      }
      continue;
    }
    r.error = std::string("send: ") + strerror(errno);
    if (sent == 0 && errno == ECONNRESET) r.outcome = Outcome::kFail;
    return r;
  }
  std::string in;
  size_t header_end = std::string::npos;
  int64_t content_length = -1;
  bool chunked = false;
  for (;;) {
    if (header_end != std::string::npos && content_length >= 0 &&
        in.size() >= header_end + 4 + static_cast<size_t>(content_length)) {
      break;  // a whole Content-Length body
    }
    if (header_end != std::string::npos && chunked && in.size() >= 5 &&
        in.compare(in.size() - 5, 5, "0\r\n\r\n") == 0) {
      std::string decoded;
      if (DecodeChunked(in.substr(header_end + 4), &decoded)) break;
    }
    char buf[16384];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
      if (header_end == std::string::npos) {
        header_end = in.find("\r\n\r\n");
        if (header_end != std::string::npos) {
          std::string headers = Lower(in.substr(0, header_end));
          size_t cl = headers.find("\r\ncontent-length:");
          if (cl != std::string::npos) content_length = atoll(headers.c_str() + cl + 17);
          chunked = headers.find("\r\ntransfer-encoding: chunked") != std::string::npos;
        }
      }
      if (in.size() > (64u << 20)) {
        r.error = "response larger than 64 MiB";
        return r;
      }
      continue;
    }
    if (n == 0) break;  // the server closed: the response is what we have
    if (errno == EAGAIN || errno == EINTR) {
      if (!WaitFd(fd, POLLIN, end)) {
        r.error = "timeout after " + std::to_string(timeout.count()) + " ms waiting for " +
                  endpoint.ToString();
        return r;
      }
      continue;
    }
    r.error = std::string("recv: ") + strerror(errno);
    return r;
  }
  if (header_end == std::string::npos || in.compare(0, 9, "HTTP/1.1 ") != 0) {
    r.error = "no whole HTTP response from " + endpoint.ToString();
    return r;
  }
  r.status = atoi(in.c_str() + 9);
  std::string raw = in.substr(header_end + 4);
  if (chunked) {
    if (!DecodeChunked(raw, &r.body)) {
      r.error = "chunked body cut short";
      return r;
    }
  } else if (content_length >= 0) {
    if (raw.size() < static_cast<size_t>(content_length)) {
      r.error = "body cut short";
      return r;
    }
    r.body = raw.substr(0, static_cast<size_t>(content_length));
  } else {
    r.body = raw;
  }
  r.outcome = Outcome::kOk;
  return r;
}

}  // namespace locklab::locks
