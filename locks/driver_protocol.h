// The lock-driver protocol of docs/driver-protocol.md, apart from the driver process: its
// lines (the hello, requests, answers) and their framing over non-blocking pipes.
//
// The checks return the reason a line breaks the protocol, in the words the client logs
// and records in an unknown outcome's detail ("answer for id 7 while id 3 is pending"), or
// "" when the line is well-formed. DriverLock (driver_lock.h) decides what follows (an
// unknown outcome, killing the driver). Nothing here blocks past the deadline it is given.
//
// Thread safety: the functions are thread-safe; a DriverLineReader is thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/json_limits.h"
#include "locks/backend.h"

namespace locklab::locks {

constexpr int kDriverProtocolVersion = 1;

// Text for messages: at most `n` bytes of a driver's line, control characters and bytes that
// are not UTF-8 escaped (\x0a, \xff), and the line's length when it was cut. Always valid
// UTF-8: it goes into history events and results, whose JSON dump throws on anything else.
std::string LineExcerpt(const std::string& line, size_t n = 120);

// What every driver line must be before the JSON library sees it: UTF-8, and nested no
// deeper than kMaxJsonDepth (base/json_limits.h). "" when it is; else why not ("line is not
// UTF-8 (byte 0xff at offset 31, in field 'detail'): '...'", "line nested deeper than 64
// levels (at offset 80, in field 'extra')"). CheckHello, CheckPointLine and CheckAnswer
// start with it, so such a line is a protocol error like any garbage (docs/driver-protocol.md).
std::string CheckLineBytes(const std::string& line);

// Whole milliseconds from now until `t`, rounded up; 0 once it passed (a request's
// timeout_ms).
int64_t MillisUntil(Nanos t);

// True for a line the protocol ignores (empty, or only blanks).
bool IsBlankLine(const std::string& line);

// What a driver's hello announced.
struct DriverHello {
  bool renew = false;          // "renew": it implements renew
  std::optional<Millis> ttl;   // "ttl_ms": the TTL it really sets on its keys (>= 1 ms)
  std::vector<std::string> points;  // "points": the pause points it may announce
  std::string name;            // "name": for logs
  // "backend": the servers the lab starts as the lock's nodes (a BackendName word; the
  // driver finds them in LOCKLAB_NODES). Redis when the hello does not say.
  Backend backend = Backend::kRedis;
  // "nodes": how many of them (1..kMaxDriverNodes); unset = the run's --nodes, else 1.
  std::optional<int> nodes;
  // "resource": the driver owns the guarded resource: the workload asks it to read the
  // counter (`read`) and to do the critical section's write (`work`), and the harness reads
  // the final values through it (docs/driver-protocol.md, "Your own resource").
  bool resource = false;
  // "sentinel": the driver finds its Redis master through Sentinel when the lab runs one
  // (the failover fault): it then gets LOCKLAB_SENTINELS, LOCKLAB_SENTINEL_MASTER and
  // LOCKLAB_NODE_MAP in its environment (docs/driver-protocol.md), and failover applies.
  bool sentinel = false;
  // The hello line itself, as the driver printed it (a matrix hands it to its trials: the
  // driver's knob "hello", driver_lock.h).
  std::string line;
};

// The backends a hello may ask for: "redis", "mariadb", "postgres", "etcd", "zookeeper"
// (BackendName of every Backend, locks/backend.h: the kinds of harness/lab/lab_cluster.h).
const std::vector<std::string>& DriverBackends();
constexpr int kMaxDriverNodes = 9;

// A pause point's name: [a-z0-9-]+, at most 64 characters (the faults' `point` param obeys
// the same rule).
bool IsWellFormedPointName(const std::string& name);

// The hello line {"hello":"locklab-driver","protocol":1,"renew":true|false,"ttl_ms":N,
// "points":["NAME",...],"backend":"zookeeper","nodes":3,"name":"..."} (all but hello and
// protocol optional); on "" *out is what it announced. An error names the field
// ("hello: field 'backend' must be one of ...").
std::string CheckHello(const std::string& line, DriverHello* out);

// Whether a line the driver printed while a request is pending is a pause-point line (a
// JSON object with a "point" field) rather than an answer.
bool IsPointLine(const std::string& line);
// A pause-point line {"point":"NAME"}: NAME must be one of `declared` (the hello's points).
// On "" *name is NAME; the client then answers with PointGoLine(NAME).
std::string CheckPointLine(const std::string& line, const std::vector<std::string>& declared,
                           std::string* name);
// {"point":"NAME","go":true}: the client's answer that lets the driver go on past NAME.
std::string PointGoLine(const std::string& name);

// An answer line to the request `pending_id`: a JSON object with that integer id, an
// outcome "ok", "fail" or "unknown", and a string detail if any. On "" *answer is the object
// and *outcome its outcome.
std::string CheckAnswer(const std::string& line, int64_t pending_id, nlohmann::json* answer,
                        std::string* outcome);

// A field of an ok answer that must be an integer >= 0 when present (fence, validity_ms).
bool IsValidCount(const nlohmann::json& answer, const char* field);

// Writes `line` in full to the non-blocking `fd` before `until`. Returns "" when written,
// or why not: "the driver does not read its stdin" (the pipe stayed full until `until`),
// "cannot send the request: ..." (an error such as EPIPE).
std::string WriteLine(int fd, const std::string& line, Nanos until);

// Lines from a non-blocking fd (the driver's stdout), at most max_line_bytes each: the
// bytes read past a line are kept for the next Read.
class DriverLineReader {
 public:
  explicit DriverLineReader(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  enum class Result {
    kLine,     // *line is the next line, without its '\n'
    kTimeout,  // no full line before `until`
    kEof,      // the writer closed its end (partial() holds a last unfinished line, if any)
    kError,    // *why says what: a line longer than max_line_bytes, or poll failed
  };
  // Waits for the next line until `until` (an `until` in the past takes only what is
  // already readable).
  Result Read(int fd, Nanos until, std::string* line, std::string* why);
  const std::string& partial() const { return buffer_; }
  void Clear() { buffer_.clear(); }

 private:
  size_t max_line_bytes_;
  std::string buffer_;  // bytes read past the last line
};

}  // namespace locklab::locks
