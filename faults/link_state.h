// LinkState: what the fault proxy does to the bytes of one (client, node) link, each
// direction on its own. Shared by the proxy (faults/fault_proxy.h), which applies it, and by
// the network facet of the lab (faults/lab_control.h), through which faults set it. Plain
// values: thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "base/clock.h"

namespace locklab::faults {

//   pass     bytes go through at once
//   hold     black hole: bytes are held, nothing is answered; they are delivered when the
//            direction passes again (as TCP retransmission would after a healed partition)
//   discard  bytes are dropped for good (with `down` only: the request ran, the reply is
//            lost, so the client sees a timeout: an unknown outcome); a connection that
//            lost bytes is reset when its direction stops discarding, never resumed with a
//            gap in its stream (TCP delivers in order or the connection breaks)
//   delay    every chunk is delivered `delay` after it was read, in order
enum class Direction { kPass, kHold, kDiscard, kDelay };

struct LinkState {
  Direction up = Direction::kPass;    // client -> server
  Direction down = Direction::kPass;  // server -> client
  Millis delay{0};                    // for kDelay (either direction)
  bool reset = false;                 // RST every connection, refuse new ones
  // Apply the state only to Redis replication streams (connections that sent PSYNC/SYNC);
  // other connections on the link pass. Sentinel must monitor the master at the same
  // address the replica replicates from, so the two share one link.
  bool replication_only = false;
  static LinkState Pass() { return LinkState(); }
  static LinkState BlackHole() { return {Direction::kHold, Direction::kHold, Millis(0), false}; }
  // "reset", or "up <d>, down <d>" with <d> pass, hold, discard or "delay <N>ms".
  std::string ToString() const;
};

// Bytes the fault proxy held, dropped or delayed on one link, and connections it reset,
// since the link was added (cumulative: a fault takes differences).
struct LinkBytes {
  uint64_t held = 0;
  uint64_t discarded = 0;
  uint64_t delayed = 0;
  uint64_t resets = 0;
  uint64_t total() const { return held + discarded + delayed + resets; }
};

}  // namespace locklab::faults
