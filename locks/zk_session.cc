#include "locks/zk_session.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace locklab::locks {

struct ZkSession::Shared {
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool connected = false;  // guarded by mu
  bool expired = false;
  int64_t session_id = 0;
  int negotiated_ms = 0;
  uint64_t generation = 0;
};

struct ZkSession::Call {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu, like the answer below
  int rc = ZOK;
  std::string path;
  Stat stat{};
  std::vector<std::string> children;
};

namespace {

using Shared = ZkSession::Shared;
using Call = ZkSession::Call;

// A MonotonicNow() deadline as a steady_clock time point (both CLOCK_MONOTONIC; the offset
// is taken now, so a raw-syscall deadline and libc's clock agree to a few microseconds).
std::chrono::steady_clock::time_point ToTimePoint(Nanos deadline) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline - MonotonicNow());
}

// Runs on the client's completion thread: the session's state and every watch's firing.
void OnEvent(zhandle_t* zh, int type, int state, const char* /*path*/, void* ctx) {
  auto* s = static_cast<Shared*>(ctx);
  std::lock_guard<std::mutex> l(s->mu);
  if (type == ZOO_SESSION_EVENT) {
    s->connected = state == ZOO_CONNECTED_STATE;
    if (state == ZOO_EXPIRED_SESSION_STATE) s->expired = true;
    if (state == ZOO_CONNECTED_STATE) {
      // Read here, on the client's own thread, right after it set them for this connection.
      s->session_id = zoo_client_id(zh)->client_id;
      s->negotiated_ms = zoo_recv_timeout(zh);
    }
  }
  ++s->generation;
  s->cv.notify_all();
}

// Completions get a heap copy of the call's shared_ptr and delete it: the call outlives a
// caller that stopped waiting.
template <typename F>
void Complete(const void* data, int rc, F fill) {
  auto* holder = static_cast<std::shared_ptr<Call>*>(const_cast<void*>(data));
  {
    std::shared_ptr<Call>& c = *holder;
    std::lock_guard<std::mutex> l(c->mu);
    c->rc = rc;
    fill(*c);
    c->done = true;
    c->cv.notify_all();
  }
  delete holder;
}

void OnString(int rc, const char* value, const Stat* stat, const void* data) {
  Complete(data, rc, [&](Call& c) {
    if (value) c.path = value;
    if (stat) c.stat = *stat;
  });
}

void OnStat(int rc, const Stat* stat, const void* data) {
  Complete(data, rc, [&](Call& c) {
    if (stat) c.stat = *stat;
  });
}

void OnStrings(int rc, const String_vector* strings, const void* data) {
  Complete(data, rc, [&](Call& c) {
    if (strings) {
      for (int i = 0; i < strings->count; ++i) c.children.push_back(strings->data[i]);
    }
  });
}

void OnVoid(int rc, const void* data) {
  Complete(data, rc, [](Call&) {});
}

}  // namespace

Outcome ZkOutcome(int rc) {
  if (rc == ZOK) return Outcome::kOk;
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZCLOSING || rc == ZSYSTEMERROR ||
      rc == ZMARSHALLINGERROR || rc == ZRUNTIMEINCONSISTENCY || rc == ZDATAINCONSISTENCY) {
    return Outcome::kUnknown;
  }
  return Outcome::kFail;  // the ensemble's answer, or a session that is certainly gone
}

ZkSession::ZkSession(const std::vector<Endpoint>& nodes, Millis session_timeout)
    : timeout_(session_timeout), shared_(std::make_unique<Shared>()) {
  for (const auto& n : nodes) hosts_ += (hosts_.empty() ? "" : ",") + n.ToString();
}

ZkSession::~ZkSession() {
  // Ends the session in the ensemble (its ephemeral nodes go at once when the close request
  // arrives, else when the session times out) and joins the client's threads.
  if (zh_ != nullptr) zookeeper_close(zh_);
}

bool ZkSession::WaitConnected(Nanos deadline, std::string* error) {
  if (zh_ == nullptr) {
    static std::once_flag quiet;
    std::call_once(quiet, [] {
      zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
      // Members in the order given (n1 first), not shuffled by the C client's own random():
      // a trial replays with its seed, and a fault aimed at n1 hits the member clients use.
      zoo_deterministic_conn_order(1);
    });
    zh_ = zookeeper_init(hosts_.c_str(), OnEvent, static_cast<int>(timeout_.count()), nullptr,
                         shared_.get(), 0);
    if (zh_ == nullptr) {
      *error = "zookeeper_init(" + hosts_ + "): " + strerror(errno);
      return false;
    }
  }
  std::unique_lock<std::mutex> l(shared_->mu);
  shared_->cv.wait_until(l, ToTimePoint(deadline),
                         [&] { return shared_->connected || shared_->expired; });
  if (shared_->connected) return true;
  *error = shared_->expired ? "session expired" : "no session with " + hosts_ + " in time";
  return false;
}

bool ZkSession::Connected() const {
  std::lock_guard<std::mutex> l(shared_->mu);
  return shared_->connected;
}

bool ZkSession::Expired() const {
  std::lock_guard<std::mutex> l(shared_->mu);
  return shared_->expired;
}

int64_t ZkSession::session_id() const {
  std::lock_guard<std::mutex> l(shared_->mu);
  return shared_->session_id;
}

Millis ZkSession::negotiated_timeout() const {
  std::lock_guard<std::mutex> l(shared_->mu);
  return shared_->negotiated_ms > 0 ? Millis(shared_->negotiated_ms) : timeout_;
}

uint64_t ZkSession::generation() const {
  std::lock_guard<std::mutex> l(shared_->mu);
  return shared_->generation;
}

void ZkSession::WaitForEvent(uint64_t seen, Nanos deadline) const {
  std::unique_lock<std::mutex> l(shared_->mu);
  shared_->cv.wait_until(l, ToTimePoint(deadline), [&] { return shared_->generation != seen; });
}

ZkResult ZkSession::Await(const std::shared_ptr<Call>& call, int submit_rc, Nanos deadline) {
  ZkResult r;
  if (submit_rc != ZOK) {
    // Refused before anything was sent (ZINVALIDSTATE: the session expired): the completion
    // will not run.
    r.rc = submit_rc;
    r.outcome = submit_rc == ZINVALIDSTATE ? Outcome::kFail : ZkOutcome(submit_rc);
    r.error = zerror(submit_rc);
    return r;
  }
  std::unique_lock<std::mutex> l(call->mu);
  if (!call->cv.wait_until(l, ToTimePoint(deadline), [&] { return call->done; })) {
    r.timed_out = true;
    r.outcome = Outcome::kUnknown;
    r.error = "no answer in time";
    return r;
  }
  r.rc = call->rc;
  r.outcome = ZkOutcome(call->rc);
  r.path = call->path;
  r.stat = call->stat;
  r.children = call->children;
  if (call->rc != ZOK) r.error = zerror(call->rc);
  return r;
}

ZkResult ZkSession::Create(const std::string& path, const std::string& data, int mode,
                           Nanos deadline) {
  if (zh_ == nullptr) return {Outcome::kFail, ZINVALIDSTATE, false, "", {}, {}, "no session"};
  auto call = std::make_shared<Call>();
  auto* holder = new std::shared_ptr<Call>(call);
  int rc = zoo_acreate2(zh_, path.c_str(), data.data(), static_cast<int>(data.size()),
                        &ZOO_OPEN_ACL_UNSAFE, mode, OnString, holder);
  if (rc != ZOK) delete holder;
  return Await(call, rc, deadline);
}

ZkResult ZkSession::Children(const std::string& path, Nanos deadline) {
  if (zh_ == nullptr) return {Outcome::kFail, ZINVALIDSTATE, false, "", {}, {}, "no session"};
  auto call = std::make_shared<Call>();
  auto* holder = new std::shared_ptr<Call>(call);
  int rc = zoo_aget_children(zh_, path.c_str(), 0, OnStrings, holder);
  if (rc != ZOK) delete holder;
  return Await(call, rc, deadline);
}

ZkResult ZkSession::Exists(const std::string& path, bool watch, Nanos deadline) {
  if (zh_ == nullptr) return {Outcome::kFail, ZINVALIDSTATE, false, "", {}, {}, "no session"};
  auto call = std::make_shared<Call>();
  auto* holder = new std::shared_ptr<Call>(call);
  int rc = watch ? zoo_awexists(zh_, path.c_str(), OnEvent, shared_.get(), OnStat, holder)
                 : zoo_aexists(zh_, path.c_str(), 0, OnStat, holder);
  if (rc != ZOK) delete holder;
  return Await(call, rc, deadline);
}

ZkResult ZkSession::Delete(const std::string& path, Nanos deadline) {
  if (zh_ == nullptr) return {Outcome::kFail, ZINVALIDSTATE, false, "", {}, {}, "no session"};
  auto call = std::make_shared<Call>();
  auto* holder = new std::shared_ptr<Call>(call);
  int rc = zoo_adelete(zh_, path.c_str(), -1, OnVoid, holder);
  if (rc != ZOK) delete holder;
  return Await(call, rc, deadline);
}

Outcome ZkFourLetterWord(const Endpoint& endpoint, const std::string& word, Millis timeout,
                         std::string* reply) {
  reply->clear();
  Nanos end = MonotonicNow() + timeout;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Outcome::kFail;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(endpoint.port));
  inet_pton(AF_INET, endpoint.host.c_str(), &addr.sin_addr);
  auto wait = [&](short events) {
    Nanos now = MonotonicNow();
    if (now >= end) return false;
    pollfd p{fd, events, 0};
    return poll(&p, 1, static_cast<int>((end - now).count() / 1000000 + 1)) > 0;
  };
  Outcome o = Outcome::kUnknown;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) {
      close(fd);
      return Outcome::kFail;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (!wait(POLLOUT)) {
      close(fd);
      return Outcome::kUnknown;
    }
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      close(fd);
      return Outcome::kFail;
    }
  }
  if (send(fd, word.data(), word.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(word.size())) {
    char buf[4096];
    while (wait(POLLIN)) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n == 0) {
        o = Outcome::kOk;  // the member closes after its answer
        break;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) break;
      if (n > 0) reply->append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return o;
}

}  // namespace locklab::locks
