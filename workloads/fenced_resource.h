// The fenced resource: the guarded counter, written only through an atomic check of the
// writer's fencing token (Kleppmann 2016, "Making the lock safe with fencing").
//
// FencedWrite runs one Lua script on the resource node: it reads the newest accepted token,
// stored beside the counter ("<counter>:fence"), rejects the write when the writer's token
// is older, and otherwise stores the token and the value together. The check and the write
// are one step on the server, so no interleaving of clients can get an older token accepted
// after a newer one. An equal token is accepted: a holder may write more than once.
//
// Not thread-safe (the connection is not): one caller per connection.
#pragma once

#include <string>

#include "locks/redis_connection.h"

namespace locklab::workloads {

struct FencedWriteResult {
  locks::Outcome outcome = locks::Outcome::kFail;  // kOk: the server answered (see accepted)
  bool accepted = false;
  long long newest = -1;  // the newest token the resource had accepted before this write
  std::string error;      // transport error or Redis error text
};

// The key holding the newest accepted token of `counter`.
std::string FenceOf(const std::string& counter);

FencedWriteResult FencedWrite(locks::RedisConnection& resource, const std::string& counter,
                              long long value, long long fence);

}  // namespace locklab::workloads
