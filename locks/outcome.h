// Outcome and Endpoint: how a call to a lock server ended, and where that server is.
//
// Every operation a lock sends across the network ends in one of three outcomes
// (docs/design.md 3.1):
//   kOk      the server answered (the answer itself may be a refusal or an error)
//   kFail    the operation certainly did not take effect (e.g. no connection could be made)
//   kUnknown it may have taken effect: a timeout, or a connection lost with it in flight
// Timeouts are unknown, never fail. These two types are all that lock.h needs from the
// client libraries, so they live here rather than with any one client (RedisConnection,
// the SQL sessions, HttpClient all use them).
//
// Plain values: safe to copy and to use from any thread.
#pragma once

#include <string>

#include "base/status.h"

namespace locklab::locks {

enum class Outcome { kOk, kFail, kUnknown };
// The history's name of an outcome: "ok", "fail", or "info" for kUnknown (docs/design.md 3.2).
const char* OutcomeName(Outcome o);

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string ToString() const { return host + ":" + std::to_string(port); }
};
// "host:port" -> Endpoint. Error names the text.
Status ParseEndpoint(const std::string& text, Endpoint* out);

}  // namespace locklab::locks
