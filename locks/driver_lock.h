// DriverLock: a lock implemented by an external program, the "lock driver", that speaks the
// JSON Lines protocol of docs/driver-protocol.md on its stdin/stdout. Lock id "driver:PATH".
// This is the adapter (the driver process, its failures, the Lock interface); the lines and
// their checks are in driver_protocol.h.
//
// The client process starts the driver before the run's clock starts (WaitReady(); without
// it the first operation starts it), as its own child in the client's process group (no
// setpgid), with PR_SET_PDEATHSIG(SIGKILL): a client-pause (SIGSTOP to the group, or the
// client stopping its group at a pause point) freezes the driver too, a client-crash
// (SIGKILL to the group) kills it, and a client that dies any other way takes the driver
// with it. The driver's stderr is the client's log. The lock servers' addresses (the
// fault-proxy links the client was given) and the timing config come in its environment
// (LOCKLAB_NODES, LOCKLAB_TTL_MS, ...).
//
// While a request is pending the driver may stop at a pause point its hello announced
// ({"point":"NAME"}): the client calls config.pause_point(NAME) (which may stop the whole
// process group, driver included, or sleep) and then answers {"point":"NAME","go":true}.
// The time spent there extends the wait for the answer (never the deadline: an answer after
// it is late, hence unknown). An unannounced or malformed point line is a protocol error.
//
// Every request carries an id and a timeout; the answer is validated strictly. Anything
// that is not a well-formed answer to the pending request, in time, is an `unknown` outcome
// whose detail says what happened (also logged on stderr): garbage, a wrong id, a missing or
// mistyped field, a line longer than max_line_bytes, the driver exiting, or no answer. A
// late answer (after the request's deadline, within answer_grace_ms) is unknown too but
// keeps the driver (a late `ok` acquire's token comes back in the result's lease, for the
// caller to release); everything else kills the driver (SIGKILL, reaped) and starts a fresh
// one at once, whose hello the next operation waits for. A driver that cannot be started
// (or sends no valid hello within start_timeout_ms) makes the operation fail: nothing was
// sent.
//
// A killed driver takes its whole tree with it (KillDriverTree): its descendants are stopped
// and killed, also those that called setsid or ignore SIGTERM, and, in a process that is a
// child subreaper (the client, harness/trial/client_main.cc), every orphan the driver's tree left
// reparented to it. The client does the same at each of its exits.
//
// Not thread-safe: one thread at a time (the Lock contract); it has no threads of its own.
// Because PR_SET_PDEATHSIG follows the thread that forked, WaitReady() (or the first
// operation) should come from a thread that lives as long as the client process (the
// workload's main thread does).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "base/subprocess.h"
#include "locks/driver_protocol.h"
#include "locks/lock.h"

namespace locklab::locks {

// "driver:PATH" ids.
constexpr const char kDriverPrefix[] = "driver:";

// What a client whose driver's hello asked for Sentinel ("sentinel": true) gets from the
// harness under the failover fault, in its environment, and passes on to its driver (every
// other LOCKLAB_ variable of the client's is withheld): the sentinels (host:port, through
// the fault proxy), the master's name, and REAL=LINK pairs from the addresses Sentinel
// names to the client's proxy links (docs/driver-protocol.md, "Sentinel").
inline constexpr const char kSentinelsEnv[] = "LOCKLAB_SENTINELS";
inline constexpr const char kSentinelMasterEnv[] = "LOCKLAB_SENTINEL_MASTER";
inline constexpr const char kNodeMapEnv[] = "LOCKLAB_NODE_MAP";
inline constexpr const char* kDriverSentinelEnv[] = {kSentinelsEnv, kSentinelMasterEnv, kNodeMapEnv};
bool IsDriverId(const std::string& id);
// The registry entry shared by every driver:PATH id (its knobs are the harness-side ones).
const LockInfo& DriverLockInfo();

// How long a started driver has to print its hello line, by default (the start_timeout_ms
// knob): the one limit of run, matrix, hunt, replay and driver-check. Up to jobs x clients
// drivers start at once on a busy 2-core machine (12 JVMs took 7.4 s to say hello); start-up
// is never charged to a run (its clock starts when every client is ready), so a wide limit
// costs only the wait for a driver that never says hello.
constexpr Millis kDefaultDriverStartTimeout{20000};

struct DriverOptions {
  std::string path;               // the program (absolute, or relative to the cwd)
  std::vector<std::string> args;  // its arguments (--driver-arg)
  Millis answer_grace{250};       // answer_grace_ms: wait past a deadline for a (late) answer
  Millis start_timeout = kDefaultDriverStartTimeout;  // start_timeout_ms: until the hello line
  Millis release_timeout{
      0};  // release_timeout_ms: per release/renew; 0 = max(1 s, 4 x command timeout)
  int64_t max_line_bytes = 65536;  // max_line_bytes: longer answer lines are a protocol error
  std::string log_path;  // the driver's stderr; empty: the caller's (a client's log)
  // hello: the hello the driver said when the harness last read it (locklab matrix, once per
  // row), so that a trial need not start the driver once more to learn its servers. A
  // running driver whose hello asks for other servers (backend, nodes, sentinel, resource)
  // than this one fails to start: the run was set up for the other.
  std::optional<DriverHello> known_hello;
};
Status ParseDriverOptions(const LockConfig& config, DriverOptions* out);

// Starts the driver `path` with `args` (the environment a client gives it, without nodes),
// reads its hello within `timeout`, closes its stdin and reaps it (SIGKILL when it is still
// running 500 ms later): the harness learns what a driver announces (its pause points, its
// TTL, the servers it needs) before a run, and nothing is left running. The probed driver
// leads a process group of its own (never the caller's) and carries a random
// LOCKLAB_PROBE_MARK in its environment; after the probe its tree and every process that
// still carries the mark (a grandchild that called setsid and outlived its parent) are
// killed. The error names the
// driver and what went wrong: Status::Usage (exit 64) when its first line is wrong (not a
// hello, a field of the wrong type or value: "hello: field 'backend' must be ..."),
// Status::Infrastructure when it could not say anything (cannot start, exited, no line in
// time). Blocks up to timeout + 500 ms; thread-safe.
Status ProbeDriver(const std::string& path, const std::vector<std::string>& args, Millis timeout,
                   DriverHello* out);

// The hello the last successful ProbeDriver of `path` with `args` read in this process: the
// harness asks it after the run (does the driver own the resource?) instead of starting the
// driver again. False when none was read. Thread-safe.
bool ProbedHello(const std::string& path, const std::vector<std::string>& args, DriverHello* out);

// Records `hello` as what ProbeDriver of `path` with `args` read (ProbedHello returns it): a
// trial given the hello its matrix read (the knob "hello") does not start the driver again.
void RememberProbedHello(const std::string& path, const std::vector<std::string>& args,
                         const DriverHello& hello);

// "" when the two hellos ask for the same servers and resource (backend, nodes, sentinel,
// resource), else what differs ("backend zookeeper, not redis").
std::string HelloServersDiffer(const DriverHello& said, const DriverHello& known);

// The start_timeout_ms knob of a driver lock among `knobs` (kDefaultDriverStartTimeout,
// when unset or unreadable: the lock's own knob check reports a bad value).
Millis DriverStartTimeout(const std::map<std::string, std::string>& knobs);

// Kills a driver and its whole tree, as above, and reaps the driver (`driver` is then empty).
// Returns how many processes besides the driver were killed.
int KillDriverTree(Subprocess& driver);

class DriverLock : public Lock {
 public:
  DriverLock(const LockConfig& config, DriverOptions options);
  ~DriverLock() override;  // closes the driver's stdin, waits 500 ms, then SIGKILL; reaped
  DriverLock(const DriverLock&) = delete;
  DriverLock& operator=(const DriverLock&) = delete;

  LockResult Acquire(const std::string& key, Nanos deadline) override;
  LockResult Release(const Lease& lease) override;
  // What the last hello announced ("renew": true); false before the driver first started.
  bool SupportsRenew() const override { return hello_.renew; }
  LockResult Renew(const Lease& lease) override;

  // Starts the driver now (fork and exec; the hello is read at the next operation) so that
  // its start-up overlaps other work: a killed driver's replacement starts this way. Errors
  // are logged; the next operation tries again.
  void Prestart();

  // Starts the driver and waits for its hello (until start_timeout_ms after the spawn): the
  // client calls it once the lock is built, so that start-up ends before the run's clock
  // starts. The error names the driver and what went wrong (no hello, garbage, exited).
  Status WaitReady() { return Start(); }

  // What the last hello announced (empty before the driver first started).
  const DriverHello& hello() const { return hello_; }

  // A driver whose hello says "resource": true owns the guarded resource
  // (docs/driver-protocol.md, "Your own resource"). `read` of the counter `counter` (with the
  // lease it is read under, or none for the harness's final read) and `work`, the critical
  // section's write of `value` under `lease`; both with release_timeout_ms. An ok read's
  // value is unset for a counter never written; an ok work's value is what the resource
  // holds now (and its fence, when the answer says, the fence it recorded); a fail with
  // "stale": true is the resource refusing an older fence (newest: its newest, if said).
  struct ResourceResult {
    Outcome outcome = Outcome::kUnknown;
    std::optional<int64_t> value;
    int64_t fence = -1;
    bool stale = false;
    int64_t newest = -1;
    std::string detail;
  };
  ResourceResult ReadResource(const std::string& counter, const Lease* lease);
  ResourceResult Work(const std::string& counter, const Lease& lease, int64_t value);

  // The running driver's pid, -1 when none (tests check that nothing is left behind).
  pid_t driver_pid() const { return driver_.pid(); }

 private:
  Status Spawn();  // fork and exec (base/subprocess.h)
  Status Start();  // Spawn if needed, then wait for the hello (until spawned_at_ + start_timeout)
  void Kill(const std::string& why);
  // Sends `request` (id and timeout_ms filled in) and waits for its answer until deadline.
  LockResult Call(nlohmann::json request, Nanos deadline, nlohmann::json* answer);
  // One line from the driver before `until`: 1 a line, 0 timeout, -1 EOF/error/too long
  // (*why says which).
  int ReadLine(Nanos until, std::string* line, std::string* why);
  LockResult Unknown(const std::string& what, const nlohmann::json& request, bool kill);
  void LogLine(const std::string& msg) const;
  void LogLeftovers(int killed) const;  // a line when a driver's tree left processes

  LockConfig config_;
  DriverOptions o_;
  Subprocess driver_;   // the running driver (pid -1 once reaped) and its stdin/stdout pipes
  pid_t log_pid_ = -1;  // the last driver started, for log lines
  DriverLineReader reader_;
  int64_t next_id_ = 0;
  DriverHello hello_;
  bool greeted_ = false;  // the running driver's hello was read
  Nanos spawned_at_{0};
};

}  // namespace locklab::locks
