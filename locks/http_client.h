// HttpCall: one blocking HTTP/1.1 request over a fresh TCP connection, with a deadline.
//
// Enough HTTP for etcd's JSON gateway: a request with `Connection: close`, a response read
// until the server closes (Content-Length and chunked bodies are decoded). One connection
// per call keeps the fault proxy's view simple: a partition hits each request on its own.
//
// Outcomes (docs/design.md 3.1): kOk = a whole response arrived (any status code); kFail = the
// connection was refused or could not be made before the request was sent (the server
// certainly did nothing); kUnknown = the request was (or may have been) sent and no whole
// response came before the deadline, or the connection broke. Timeouts are never kFail.
//
// Thread-safe: no shared state (each call has its own socket).
#pragma once

#include <string>

#include "base/clock.h"
#include "locks/outcome.h"

namespace locklab::locks {

struct HttpResult {
  Outcome outcome = Outcome::kFail;
  int status = 0;     // HTTP status code when kOk
  std::string body;   // decoded body when kOk
  std::string error;  // why, when not kOk
};

// `method` GET or POST; `body` sent with Content-Type application/json when not empty.
HttpResult HttpCall(const Endpoint& endpoint, const std::string& method, const std::string& path,
                    const std::string& body, Millis connect_timeout, Millis timeout);

// Decodes a chunked transfer-encoded body; false when it is malformed or cut short.
bool DecodeChunked(const std::string& in, std::string* out);

}  // namespace locklab::locks
