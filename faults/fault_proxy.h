// FaultProxy: a TCP relay with one listener per link, whose state the harness sets.
//
// Clients never dial lab nodes directly: every (client, node) connection goes through its
// own link, so one client can lose nodes D and E while another loses A and B, the way a real
// network partition looks from each side. Each direction of a link has a state (pass, hold,
// discard, delay: faults/link_state.h), which can be limited to replication streams, and a
// link can be `reset`: every connection on it is closed with RST and new ones are refused
// that way until the state changes.
//
// One thread runs the relay (epoll). SetLink/GetLink/AddLink are thread-safe and take
// effect on bytes read after the call (held bytes are re-timed at once). Listeners bind
// 127.0.0.1 only.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/status.h"
#include "faults/link_state.h"

namespace locklab::faults {

struct ProxyEndpoint {
  std::string host = "127.0.0.1";
  int port = 0;
};

class FaultProxy {
 public:
  FaultProxy();
  ~FaultProxy();  // stops the thread, closes everything
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  Status Start();
  void Stop();
  // A new link named `name` relaying to `upstream`; `*port` is its loopback listener.
  Status AddLink(const std::string& name, ProxyEndpoint upstream, int* port);
  // Points the link at another server (new connections only), e.g. after a failover.
  void SetUpstream(const std::string& name, ProxyEndpoint upstream);
  Status SetLink(const std::string& name, const LinkState& state);
  LinkState GetLink(const std::string& name);
  // What the link's states did to its bytes so far: read while held, discarded or delayed,
  // and connections reset or refused (a fault's evidence). Zeros for an unknown link.
  LinkBytes Counters(const std::string& name);
  // Byte counters (for tests and the benchmark).
  uint64_t BytesRelayed() const { return bytes_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace locklab::faults
