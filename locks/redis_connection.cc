#include "locks/redis_connection.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>

namespace locklab::locks {
namespace {

struct timeval ToTimeval(Millis ms) {
  struct timeval tv;
  tv.tv_sec = ms.count() / 1000;
  tv.tv_usec = (ms.count() % 1000) * 1000;
  return tv;
}

Reply Convert(const redisReply* r) {
  Reply out;
  out.outcome = Outcome::kOk;
  switch (r->type) {
    case REDIS_REPLY_NIL: out.is_nil = true; break;
    case REDIS_REPLY_ERROR:
      out.is_error = true;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.is_integer = true;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS: out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_ARRAY:
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default: break;
  }
  return out;
}

EndpointResolver& Resolver() {
  static EndpointResolver* r = new EndpointResolver();
  return *r;
}

}  // namespace

void SetEndpointResolver(EndpointResolver resolver) { Resolver() = std::move(resolver); }

RedisConnection::RedisConnection(Endpoint endpoint, Millis connect_timeout, Millis command_timeout)
    : endpoint_(std::move(endpoint)),
      connect_timeout_(connect_timeout),
      command_timeout_(command_timeout) {}

RedisConnection::~RedisConnection() { Drop(); }

void RedisConnection::Drop() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

bool RedisConnection::EnsureConnected(std::string* error) {
  if (ctx_ != nullptr) return true;
  Endpoint target = Resolver() ? Resolver()(endpoint_) : endpoint_;
  ctx_ = redisConnectWithTimeout(target.host.c_str(), target.port, ToTimeval(connect_timeout_));
  if (ctx_ == nullptr || ctx_->err) {
    *error = "connect " + target.ToString() + ": " + (ctx_ ? ctx_->errstr : "out of memory");
    Drop();
    return false;
  }
  if (redisSetTimeout(ctx_, ToTimeval(command_timeout_)) != REDIS_OK) {
    *error = "set timeout on " + endpoint_.ToString();
    Drop();
    return false;
  }
  return true;
}

Outcome RedisConnection::Send(const std::vector<std::string>& argv, std::string* error) {
  if (!EnsureConnected(error)) return Outcome::kFail;
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  redisAppendCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data());
  int done = 0;
  while (!done) {
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
      *error = std::string("write to ") + endpoint_.ToString() + ": " + ctx_->errstr;
      Drop();
      return Outcome::kUnknown;
    }
  }
  return Outcome::kOk;
}

Reply RedisConnection::Read() {
  Reply out;
  if (ctx_ == nullptr) {
    out.outcome = Outcome::kUnknown;
    out.transport_error = "not connected";
    return out;
  }
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
    bool timeout = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    out.outcome = Outcome::kUnknown;
    out.transport_error = std::string(timeout ? "timeout" : "io error") + " on " +
                          endpoint_.ToString() + ": " + ctx_->errstr;
    Drop();
    return out;
  }
  out = Convert(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return out;
}

char RedisConnection::PeekReplyStart(Millis timeout) {
  if (ctx_ == nullptr) return 0;
  // hiredis may already hold unparsed bytes of this reply in its reader buffer.
  const redisReader* r = ctx_->reader;
  if (r != nullptr && r->len > r->pos) return r->buf[r->pos];
  struct pollfd p = {ctx_->fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return 0;
  char c = 0;
  if (recv(ctx_->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) != 1) return 0;
  return c;
}

Reply RedisConnection::Command(const std::vector<std::string>& argv) {
  Reply out;
  std::string error;
  Outcome sent = Send(argv, &error);
  if (sent != Outcome::kOk) {
    out.outcome = sent;
    out.transport_error = error;
    return out;
  }
  return Read();
}

}  // namespace locklab::locks
