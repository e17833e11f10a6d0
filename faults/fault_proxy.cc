#include "faults/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

namespace locklab::faults {
// Named, not anonymous: FaultProxy::Impl (a class with external linkage) holds these, and in a
// unity build gcc warns about such a member of an anonymous-namespace type (-Wsubobject-linkage).
namespace proxy_detail {

constexpr Nanos kNever = Nanos::max();

struct Chunk {
  Nanos deliver_at;
  bool held;
  std::string bytes;
};

// One direction of one connection: bytes read from `from`, queued, written to `to`.
struct Pipe {
  int from = -1;
  int to = -1;
  std::deque<Chunk> queue;
  size_t written = 0;      // of queue.front()
  bool eof = false;        // `from` closed: deliver what is queued, then half-close `to`
  bool done = false;       // nothing more will flow this way
  // Bytes of this direction were discarded: the stream has a gap, which TCP never makes, so
  // the connection is reset (not resumed) once the direction stops discarding. A pipelined
  // client must see its connection break, never the next command's reply as this one's.
  bool gap = false;
};

struct Conn {
  std::string link;
  int client = -1;
  int server = -1;
  bool connected = false;  // server connect() finished
  bool replication = false;  // the client sent PSYNC/SYNC: a replica's stream
  uint32_t client_mask = 0;  // epoll events currently watched
  uint32_t server_mask = 0;
  Pipe up, down;           // up: client -> server
};

struct Link {
  std::string name;
  int listener = -1;
  ProxyEndpoint upstream;
  LinkState state;
  LinkBytes counters;  // guarded by Impl::mu, like the state
};

int Listen(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 128) != 0) {
    close(fd);
    return -1;
  }
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

void CloseWithReset(int fd) {
  if (fd < 0) return;
  struct linger l = {1, 0};  // RST instead of FIN
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  close(fd);
}

}  // namespace proxy_detail

using namespace proxy_detail;

struct FaultProxy::Impl {
  std::mutex mu;  // guards links (state, upstream) and the maps
  std::map<std::string, Link> links;
  std::map<int, std::string> listener_link;  // listener fd -> link
  std::map<int, std::shared_ptr<Conn>> by_fd;  // client or server fd -> conn
  int epfd = -1;
  int wake = -1;
  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t>* bytes = nullptr;

  // Sets the events watched on `fd`; 0 removes it (epoll reports HUP/ERR even for an empty
  // mask, which would spin the loop on a half-closed connection still delivering).
  void Watch(int fd, uint32_t events) {
    if (events == 0) {
      epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nullptr);
      return;
    }
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) != 0) epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
  }

  void CloseConn(const std::shared_ptr<Conn>& c, bool reset) {
    for (int fd : {c->client, c->server}) {
      if (fd < 0) continue;
      epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nullptr);
      by_fd.erase(fd);
      if (reset) CloseWithReset(fd);
      else close(fd);
    }
    c->client = c->server = -1;
  }

  void Accept(int listener) {
    for (;;) {
      int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      Link& link = links[listener_link[listener]];
      if (link.state.reset) {
        ++link.counters.resets;
        CloseWithReset(fd);
        continue;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(link.upstream.port));
      inet_pton(AF_INET, link.upstream.host.c_str(), &a.sin_addr);
      int rc = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
      if (rc != 0 && errno != EINPROGRESS) {
        close(s);
        CloseWithReset(fd);  // the server refused: so does the proxy
        continue;
      }
      auto c = std::make_shared<Conn>();
      c->link = link.name;
      c->client = fd;
      c->server = s;
      c->connected = rc == 0;
      c->up.from = fd;
      c->up.to = s;
      c->down.from = s;
      c->down.to = fd;
      by_fd[fd] = c;
      by_fd[s] = c;
      Watch(fd, c->client_mask = EPOLLIN | EPOLLRDHUP);
      Watch(s, c->server_mask = EPOLLIN | EPOLLOUT | EPOLLRDHUP);
    }
  }

  // Reads what is available on `p.from` and queues it per the direction's state. Returns
  // false on a read error; sets p.eof when the sender closed.
  bool ReadInto(Conn& c, Pipe& p, Direction dir, Millis delay, LinkBytes* counters) {
    if (p.eof || p.done) return true;
    char buf[65536];
    for (;;) {
      ssize_t n = read(p.from, buf, sizeof(buf));
      if (n > 0) {
        Nanos now = MonotonicNow();
        const auto bytes = static_cast<uint64_t>(n);
        if (dir == Direction::kDiscard) counters->discarded += bytes;
        if (dir == Direction::kHold) counters->held += bytes;
        if (dir == Direction::kDelay) counters->delayed += bytes;
        if (dir == Direction::kDiscard) {
          p.gap = true;
          continue;
        }
        Chunk ch{now, dir == Direction::kHold, std::string(buf, static_cast<size_t>(n))};
        if (&p == &c.up && !c.replication &&
            (ch.bytes.find("PSYNC") != std::string::npos || ch.bytes.find("SYNC\r\n") != std::string::npos)) {
          c.replication = true;
        }
        if (dir == Direction::kDelay) ch.deliver_at = now + delay;
        if (ch.held) ch.deliver_at = kNever;
        p.queue.push_back(std::move(ch));
        continue;
      }
      if (n == 0) {
        p.eof = true;
        return true;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      if (errno == EINTR) continue;
      p.eof = true;  // reset by the sender: it is gone, like a close
      return true;
    }
    (void)c;
  }

  // Writes every due chunk, in order. A peer that is gone ends this direction only: bytes
  // held the other way (a request sent before the client gave up) are still delivered, as
  // TCP would deliver them after a healed partition.
  void Flush(Conn& c, Pipe& p) {
    if (!c.connected || p.done) return;
    Nanos now = MonotonicNow();
    while (!p.queue.empty() && p.queue.front().deliver_at <= now) {
      Chunk& ch = p.queue.front();
      ssize_t n = send(p.to, ch.bytes.data() + p.written, ch.bytes.size() - p.written, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR) continue;
        p.queue.clear();
        p.done = true;
        return;
      }
      bytes->fetch_add(static_cast<uint64_t>(n));
      p.written += static_cast<size_t>(n);
      if (p.written == ch.bytes.size()) {
        p.queue.pop_front();
        p.written = 0;
      }
    }
    if (p.eof && p.queue.empty()) {
      shutdown(p.to, SHUT_WR);
      p.done = true;
    }
  }

  // The next future delivery time. Chunks already due but blocked on a full socket wake
  // the loop through EPOLLOUT instead (see Loop).
  Nanos NextDue() {
    Nanos next = kNever;
    Nanos now = MonotonicNow();
    for (auto& [fd, c] : by_fd) {
      for (Pipe* p : {&c->up, &c->down}) {
        if (!p->done && !p->queue.empty() && p->queue.front().deliver_at > now) {
          next = std::min(next, p->queue.front().deliver_at);
        }
      }
    }
    return next;
  }

  static bool Blocked(const Pipe& p, Nanos now) {
    return !p.done && !p.queue.empty() && p.queue.front().deliver_at <= now;
  }

  void Loop() {
    std::vector<epoll_event> events(64);
    while (!stop.load()) {
      int timeout = 100;
      {
        std::lock_guard<std::mutex> l(mu);
        Nanos due = NextDue();
        if (due != kNever) {
          int64_t ms = (due - MonotonicNow()).count() / 1000000;
          timeout = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(100, ms + 1)));
        }
      }
      int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), timeout);
      std::lock_guard<std::mutex> l(mu);
      for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == wake) {
          uint64_t v;
          (void)!read(wake, &v, sizeof(v));
          continue;
        }
        if (listener_link.count(fd)) {
          Accept(fd);
          continue;
        }
        auto it = by_fd.find(fd);
        if (it == by_fd.end()) continue;
        std::shared_ptr<Conn> c = it->second;
        Link& link = links[c->link];
        LinkState st = link.state;
        if (st.replication_only && !c->replication) st = LinkState::Pass();
        bool ok = true;
        if (fd == c->server && !c->connected && (events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
          int err = 0;
          socklen_t len = sizeof(err);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          if (err != 0) {
            CloseConn(c, true);
            continue;
          }
          c->connected = true;
          Watch(fd, c->server_mask = EPOLLIN | EPOLLRDHUP);
        }
        if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
          if (fd == c->client) ok = ReadInto(*c, c->up, st.up, st.delay, &link.counters);
          else ok = ReadInto(*c, c->down, st.down, st.delay, &link.counters);
        }
        if (!ok) {
          CloseConn(c, false);
          continue;
        }
      }
      // Deliver whatever is due on every connection.
      std::vector<std::shared_ptr<Conn>> dead;
      std::vector<std::shared_ptr<Conn>> all;
      for (auto& [fd, c] : by_fd) {
        if (fd == c->client) all.push_back(c);
      }
      for (auto& c : all) {
        Flush(*c, c->up);
        Flush(*c, c->down);
        if (c->up.done && c->down.done) {
          dead.push_back(c);
          continue;
        }
        // A due chunk left in a queue means its socket is full: wait for it to drain. A
        // closed sender is no longer read (its EOF would fire forever).
        Nanos now = MonotonicNow();
        uint32_t cm = (c->up.eof ? 0u : uint32_t{EPOLLIN | EPOLLRDHUP}) |
                      (Blocked(c->down, now) ? uint32_t{EPOLLOUT} : 0u);
        if (cm != c->client_mask) Watch(c->client, c->client_mask = cm);
        if (c->connected) {
          uint32_t sm = (c->down.eof ? 0u : uint32_t{EPOLLIN | EPOLLRDHUP}) |
                        (Blocked(c->up, now) ? uint32_t{EPOLLOUT} : 0u);
          if (sm != c->server_mask) Watch(c->server, c->server_mask = sm);
        }
      }
      for (auto& c : dead) CloseConn(c, false);
    }
  }
};

FaultProxy::FaultProxy() : impl_(std::make_unique<Impl>()) { impl_->bytes = &bytes_; }

FaultProxy::~FaultProxy() { Stop(); }

Status FaultProxy::Start() {
  impl_->epfd = epoll_create1(EPOLL_CLOEXEC);
  impl_->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->epfd < 0 || impl_->wake < 0) {
    return Status::Infrastructure(std::string("fault proxy: ") + strerror(errno));
  }
  impl_->Watch(impl_->wake, EPOLLIN);
  impl_->thread = std::thread([this] { impl_->Loop(); });
  return Status::Ok();
}

void FaultProxy::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stop.store(true);
  uint64_t one = 1;
  (void)!write(impl_->wake, &one, sizeof(one));
  impl_->thread.join();
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<std::shared_ptr<Conn>> all;
  for (auto& [fd, c] : impl_->by_fd) all.push_back(c);
  for (auto& c : all) impl_->CloseConn(c, false);
  for (auto& [fd, name] : impl_->listener_link) close(fd);
  impl_->listener_link.clear();
  close(impl_->epfd);
  close(impl_->wake);
}

Status FaultProxy::AddLink(const std::string& name, ProxyEndpoint upstream, int* port) {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (impl_->links.count(name)) return Status::Usage("fault proxy: link '" + name + "' exists");
  int fd = Listen(port);
  if (fd < 0) return Status::Infrastructure(std::string("fault proxy listen: ") + strerror(errno));
  Link link;
  link.name = name;
  link.listener = fd;
  link.upstream = upstream;
  impl_->links[name] = link;
  impl_->listener_link[fd] = name;
  impl_->Watch(fd, EPOLLIN);
  return Status::Ok();
}

void FaultProxy::SetUpstream(const std::string& name, ProxyEndpoint upstream) {
  std::lock_guard<std::mutex> l(impl_->mu);
  auto it = impl_->links.find(name);
  if (it != impl_->links.end()) it->second.upstream = upstream;
}

Status FaultProxy::SetLink(const std::string& name, const LinkState& state) {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    auto it = impl_->links.find(name);
    if (it == impl_->links.end()) return Status::Usage("fault proxy: no link '" + name + "'");
    it->second.state = state;
    std::vector<std::shared_ptr<Conn>> conns;
    for (auto& [fd, c] : impl_->by_fd) {
      if (c->link == name && fd == c->client) conns.push_back(c);
    }
    Nanos now = MonotonicNow();
    for (auto& c : conns) {
      if (state.replication_only && !c->replication) continue;
      // A direction that discarded bytes and discards no more: the connection breaks there
      // (reset), as a real one whose bytes never arrived would, instead of going on with a
      // gap in its stream.
      const bool gap_ends = (c->up.gap && state.up != Direction::kDiscard) ||
                            (c->down.gap && state.down != Direction::kDiscard);
      if (state.reset || gap_ends) {
        ++it->second.counters.resets;
        impl_->CloseConn(c, true);
        continue;
      }
      // Held bytes follow the new state of their direction.
      for (auto [pipe, dir] : {std::pair{&c->up, state.up}, std::pair{&c->down, state.down}}) {
        for (auto& ch : pipe->queue) {
          if (!ch.held) continue;
          if (dir == Direction::kPass) ch = Chunk{now, false, std::move(ch.bytes)};
          else if (dir == Direction::kDelay) ch = Chunk{now + state.delay, false, std::move(ch.bytes)};
        }
        if (dir == Direction::kDiscard) {
          while (!pipe->queue.empty() && pipe->queue.back().held) {
            it->second.counters.discarded += pipe->queue.back().bytes.size();
            pipe->queue.pop_back();
            pipe->gap = true;
          }
        }
      }
    }
  }
  uint64_t one = 1;
  (void)!write(impl_->wake, &one, sizeof(one));
  return Status::Ok();
}

LinkBytes FaultProxy::Counters(const std::string& name) {
  std::lock_guard<std::mutex> l(impl_->mu);
  auto it = impl_->links.find(name);
  return it == impl_->links.end() ? LinkBytes() : it->second.counters;
}

LinkState FaultProxy::GetLink(const std::string& name) {
  std::lock_guard<std::mutex> l(impl_->mu);
  auto it = impl_->links.find(name);
  return it == impl_->links.end() ? LinkState() : it->second.state;
}

}  // namespace locklab::faults
