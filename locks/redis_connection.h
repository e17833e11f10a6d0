// RedisConnection: one hiredis context with timeouts and reconnect-after-any-error.
//
// hiredis 0.14 (Debian 12) has no redisOptions: connect with redisConnectWithTimeout, then
// redisSetTimeout for commands. A timeout surfaces as REDIS_ERR_IO with EAGAIN. After any
// error a context is unusable, so it is dropped and the next command reconnects.
//
// Every command ends in one of three outcomes (locks/outcome.h):
//   kOk      a reply arrived (it may be a Redis error reply: see Reply::is_error)
//   kFail    the command certainly did not reach the server (connect refused / timed out)
//   kUnknown the command may have run: timeout or connection lost after sending
// Not thread-safe: one connection per thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "locks/outcome.h"

struct redisContext;

namespace locklab::locks {

struct Reply {
  Outcome outcome = Outcome::kFail;
  bool is_nil = false;
  bool is_error = false;  // a Redis error reply ("-ERR ..."), outcome kOk
  bool is_integer = false;
  long long integer = 0;
  std::string str;          // bulk/status string, or the error text
  std::vector<Reply> elements;
  std::string transport_error;  // why outcome is not kOk
};

// Where a connection really goes: called at every (re)connect with the configured endpoint.
// The client process installs one under Sentinel (failover): it asks the sentinels for the
// current master and maps it to that node's fault-proxy link, the way a Sentinel-aware
// client library finds a new master after a failover. Process-wide; set it before any
// connection is made (not synchronised).
using EndpointResolver = std::function<Endpoint(const Endpoint& configured)>;
void SetEndpointResolver(EndpointResolver resolver);

class RedisConnection {
 public:
  RedisConnection(Endpoint endpoint, Millis connect_timeout, Millis command_timeout);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  Reply Command(const std::vector<std::string>& argv);
  // Sends without reading the reply (for pipelined / parallel use); Read() collects it.
  // Send returns kFail when it could not connect, kUnknown on a write error, kOk when sent.
  Outcome Send(const std::vector<std::string>& argv, std::string* error);
  Reply Read();
  // The first byte of the next reply, looked at without reading it ('+' status, '$' bulk or
  // nil, '-' error, ...): waits up to `timeout` for it to arrive and leaves it in place for
  // Read(). 0 when nothing arrived in time or the connection is down. Lets the harness aim a
  // stop at "replies arrived, not yet read" (Redlock's pause point) without consuming them.
  char PeekReplyStart(Millis timeout);

  const Endpoint& endpoint() const { return endpoint_; }
  void Drop();  // close now; the next command reconnects

 private:
  bool EnsureConnected(std::string* error);
  Endpoint endpoint_;
  Millis connect_timeout_;
  Millis command_timeout_;
  redisContext* ctx_ = nullptr;
};

}  // namespace locklab::locks
