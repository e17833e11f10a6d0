#include "locks/driver_lock.h"

#include <signal.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <iterator>
#include <string>

#include "base/numbers.h"
#include "base/process_tree.h"
#include "base/random.h"
#include "locks/knobs.h"

extern char** environ;

namespace locklab::locks {

bool IsDriverId(const std::string& id) {
  return id.size() > sizeof(kDriverPrefix) - 1 && id.rfind(kDriverPrefix, 0) == 0;
}

const LockInfo& DriverLockInfo() {
  static const LockInfo kInfo = {
      "driver:PATH",
      "a lock implemented by an external program (any language) speaking the JSON Lines "
      "protocol of docs/driver-protocol.md on stdin/stdout; started by each client process in "
      "its process group (pauses and crashes hit it); arguments with --driver-arg",
      {{"answer_grace_ms", "250",
        "how long past a request's deadline the harness waits for a (late, hence unknown) "
        "answer before it kills the driver"},
       {"start_timeout_ms", std::to_string(kDefaultDriverStartTimeout.count()),
        "how long a started driver has to print its hello line"},
       {"release_timeout_ms", "0",
        "deadline of a release or renew; 0 = max(1000, 4 x command timeout)"},
       {"max_line_bytes", "65536", "longest answer line accepted; longer is a protocol error"},
       {"hello", "",
        "the driver's hello line as locklab matrix read it for the row: the run starts the "
        "servers it asks for without starting the driver once more to ask; a driver that then "
        "says another hello fails to start"}},
      1};
  return kInfo;
}

Status ParseDriverOptions(const LockConfig& config, DriverOptions* o) {
  if (!IsDriverId(config.algorithm)) {
    return Status::Usage("lock '" + config.algorithm + "': not a driver:PATH id");
  }
  o->path = config.algorithm.substr(sizeof(kDriverPrefix) - 1);
  o->args = config.driver_args;
  KnobReader k(config.algorithm, config.knobs);
  k.Duration("answer_grace_ms", Millis(0), Millis(600000), &o->answer_grace);
  k.Duration("start_timeout_ms", Millis(1), Millis(600000), &o->start_timeout);
  k.Duration("release_timeout_ms", Millis(0), Millis(600000), &o->release_timeout);
  k.Int("max_line_bytes", 64, 64 << 20, &o->max_line_bytes);
  if (!k.status().ok()) return k.status();
  if (auto known = config.knobs.find("hello"); known != config.knobs.end() && !known->second.empty()) {
    DriverHello hello;
    std::string bad = CheckHello(known->second, &hello);
    if (!bad.empty()) return Status::Usage("lock '" + config.algorithm + "': knob 'hello': " + bad);
    o->known_hello = hello;
  }
  if (o->release_timeout == Millis(0)) {
    o->release_timeout = std::max(Millis(1000), 4 * config.command_timeout);
  }
  return Status::Ok();
}

DriverLock::DriverLock(const LockConfig& config, DriverOptions options)
    : config_(config), o_(std::move(options)), reader_(static_cast<size_t>(o_.max_line_bytes)) {}

DriverLock::~DriverLock() {
  // A polite end first: stdin closes, a driver reads EOF and exits.
  driver_.CloseStdin();
  if (!driver_.WaitExit(Millis(500))) Kill("still running 500 ms after its stdin closed");
  else LogLeftovers(KillDriverTree(driver_));  // it ended: what its tree left behind
}

void DriverLock::LogLeftovers(int killed) const {
  if (killed > 0) LogLine("its tree: " + std::to_string(killed) + " more process(es) killed");
}

void DriverLock::LogLine(const std::string& msg) const {
  std::cerr << "locklab client: driver " << o_.path << " (pid " << log_pid_ << "): " << msg << "\n"
            << std::flush;
}

void DriverLock::Kill(const std::string& why) {
  if (driver_.pid() > 0) LogLine(why + "; killed (SIGKILL)");
  LogLeftovers(KillDriverTree(driver_));
  reader_.Clear();
}

int KillDriverTree(Subprocess& driver) {
  // Its descendants first, stopped and then killed while the driver still links them (a
  // grandchild that called setsid or ignores SIGTERM is still its descendant); then the
  // driver itself, alone (it shares the client's group), reaped.
  int killed = 0;
  if (driver.pid() > 0) killed += KillTree(driver.pid(), /*include_root=*/false);
  driver.Reset();
  // Descendants whose parent had already ended were reparented: to this process when it
  // is a child subreaper (the client makes itself one), where every child but the driver
  // is such an orphan: killed and reaped too. Elsewhere (a test) they went up the tree.
  if (IsChildSubreaper()) killed += KillChildrenExcept(-1);
  return killed;
}

namespace {
// How a driver is started, by a client (DriverLock) or by a probe (ProbeDriver).
SubprocessOptions DriverSpawnOptions(const LockConfig& config, const DriverOptions& o) {
  SubprocessOptions so;
  so.argv = {o.path};
  so.argv.insert(so.argv.end(), o.args.begin(), o.args.end());
  // The harness's LOCKLAB_ variables are none of the driver's business; its own are set
  // below, LOCKLAB_PROCESS (the client's number) is passed on for its log lines,
  // LOCKLAB_RUN_MARK (when the harness gives its clients one) so that whatever a driver's
  // tree leaves outside the client (a setsid grandchild of a client that was SIGKILLed,
  // which the client cannot sweep) still carries the run's mark (KillProcessesWithEnv), and
  // the Sentinel variables the harness gives a client whose driver asked for Sentinel
  // (kDriverSentinelEnv).
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string name(*e, strcspn(*e, "="));
    if (name.rfind("LOCKLAB_", 0) != 0 || name == "LOCKLAB_PROCESS" || name == "LOCKLAB_RUN_MARK" ||
        std::find(std::begin(kDriverSentinelEnv), std::end(kDriverSentinelEnv), name) !=
            std::end(kDriverSentinelEnv)) {
      continue;
    }
    so.unset_env.push_back(name);
  }
  std::string nodes;
  for (const auto& n : config.nodes) nodes += (nodes.empty() ? "" : ",") + n.ToString();
  so.env["LOCKLAB_DRIVER_PROTOCOL"] = std::to_string(kDriverProtocolVersion);
  so.env["LOCKLAB_NODES"] = nodes;
  so.env["LOCKLAB_TTL_MS"] = std::to_string(config.ttl.count());
  so.env["LOCKLAB_RETRY_DELAY_MS"] = std::to_string(config.retry_delay.count());
  so.env["LOCKLAB_CONNECT_TIMEOUT_MS"] = std::to_string(config.connect_timeout.count());
  so.env["LOCKLAB_COMMAND_TIMEOUT_MS"] = std::to_string(config.command_timeout.count());
  so.stdin_stream = StdStream::Pipe();
  so.stdout_stream = StdStream::Pipe();
  so.stderr_stream = StdStream::Inherit();  // the client's log
  if (!o.log_path.empty()) {
    so.stderr_stream = StdStream::LogFile();
    so.log_path = o.log_path;
  }
  // Same process group as the client: a pause or crash fault of the client hits it too.
  so.own_process_group = false;
  so.death_signal = SIGKILL;
  // Nothing else of the client's leaks into the driver (its history stream, sockets).
  so.close_other_fds = true;
  return so;
}
}  // namespace

namespace {
std::mutex probed_mu;
std::map<std::pair<std::string, std::vector<std::string>>, DriverHello> probed;
}  // namespace

void RememberProbedHello(const std::string& path, const std::vector<std::string>& args,
                         const DriverHello& hello) {
  std::lock_guard<std::mutex> lock(probed_mu);
  probed[{path, args}] = hello;
}

std::string HelloServersDiffer(const DriverHello& said, const DriverHello& known) {
  std::string out;
  auto differ = [&out](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  if (said.backend != known.backend) {
    differ("backend " + BackendName(said.backend) + ", not " + BackendName(known.backend));
  }
  if (said.nodes != known.nodes) {
    auto n = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("unset"); };
    differ("nodes " + n(said.nodes) + ", not " + n(known.nodes));
  }
  if (said.sentinel != known.sentinel) differ(std::string("sentinel ") + (said.sentinel ? "true" : "false"));
  if (said.resource != known.resource) differ(std::string("resource ") + (said.resource ? "true" : "false"));
  return out;
}

Millis DriverStartTimeout(const std::map<std::string, std::string>& knobs) {
  auto knob = knobs.find("start_timeout_ms");
  if (knob != knobs.end()) {
    if (auto ms = ParseInt(knob->second, 1, 600000)) return Millis(*ms);
  }
  return kDefaultDriverStartTimeout;
}

bool ProbedHello(const std::string& path, const std::vector<std::string>& args, DriverHello* out) {
  std::lock_guard<std::mutex> lock(probed_mu);
  auto it = probed.find({path, args});
  if (it == probed.end()) return false;
  *out = it->second;
  return true;
}

Status ProbeDriver(const std::string& path, const std::vector<std::string>& args, Millis timeout,
                   DriverHello* out) {
  LockConfig config;
  config.algorithm = std::string(kDriverPrefix) + path;
  // A node nobody listens on (port 1): drivers that need LOCKLAB_NODES to say hello (the
  // npm redlock example exits without one) get one, and connect lazily or not at all.
  config.nodes = {Endpoint{"127.0.0.1", 1}};
  DriverOptions o;
  o.path = path;
  o.args = args;
  SubprocessOptions so = DriverSpawnOptions(config, o);
  // Says this start is only for the hello: a driver that connects before its hello (to warm
  // up; the Java LockUnderTest.start, kazoo_lock.py) skips that here.
  so.env["LOCKLAB_PROBE"] = "1";
  so.stderr_stream = StdStream::DevNull();  // a probe's chatter is nobody's log
  // Not in the caller's process group (the harness's: its terminal's Ctrl-C, its group
  // signals), and marked: whatever the probe's tree leaves (a grandchild that called
  // setsid and was reparented away from it) still carries this entry in its environment,
  // and is found by it once the probe ends.
  so.own_process_group = true;
  const std::string mark = RandomToken();
  so.env["LOCKLAB_PROBE_MARK"] = mark;
  Subprocess child;
  Status s = Subprocess::Spawn(so, &child);
  if (!s.ok()) return Status::Infrastructure("driver " + path + ": cannot start: " + s.message());
  DriverLineReader reader(65536);
  std::string line, why, bad;
  bool said_hello = false;  // a line came: what is wrong is in it
  DriverLineReader::Result r;
  const Nanos until = MonotonicNow() + timeout;
  do {
    r = reader.Read(child.stdout_pipe(), until, &line, &why);
  } while (r == DriverLineReader::Result::kLine && IsBlankLine(line));
  if (r == DriverLineReader::Result::kTimeout) {
    bad = "no hello line within " + std::to_string(timeout.count()) + " ms";
  } else if (r == DriverLineReader::Result::kEof) {
    bad = "it closed its stdout before its hello line";
  } else if (r == DriverLineReader::Result::kError) {
    bad = "before its hello line: " + why;
  } else {
    bad = CheckHello(line, out);
    said_hello = true;
  }
  child.CloseStdin();
  if (!child.WaitExit(Millis(500))) {
    KillTree(child.pid(), /*include_root=*/false);  // its tree, while it still links it
    child.Reset();                                  // SIGKILL to its group, reaped
  }
  // Nothing of the probe outlives it: what its tree left, wherever it went.
  KillProcessesWithEnv("LOCKLAB_PROBE_MARK=" + mark);
  if (bad.empty()) {
    std::lock_guard<std::mutex> lock(probed_mu);
    probed[{path, args}] = *out;
    return Status::Ok();
  }
  // A hello with a bad field is the driver's bad input (exit 64), not a server failure.
  if (said_hello) return Status::Usage("driver " + path + ": " + bad);
  return Status::Infrastructure("driver " + path + ": " + bad);
}

Status DriverLock::Spawn() {
  SubprocessOptions so = DriverSpawnOptions(config_, o_);
  Subprocess child;
  Status s = Subprocess::Spawn(so, &child);
  if (!s.ok()) return s;
  driver_ = std::move(child);
  log_pid_ = driver_.pid();
  reader_.Clear();
  greeted_ = false;
  spawned_at_ = MonotonicNow();
  LogLine("started");
  return Status::Ok();
}

void DriverLock::Prestart() {
  if (driver_.pid() > 0) return;
  Status s = Spawn();
  if (!s.ok()) LogLine("could not start: " + s.message());
}

Status DriverLock::Start() {
  if (driver_.pid() <= 0) {
    Status s = Spawn();
    if (!s.ok()) return s;
  }
  if (greeted_) return Status::Ok();
  // The hello line: {"hello":"locklab-driver","protocol":1,"renew":true|false}.
  std::string line, why;
  int r = 0;
  Nanos until = spawned_at_ + o_.start_timeout;
  do {
    r = ReadLine(until, &line, &why);
  } while (r == 1 && IsBlankLine(line));
  std::string bad;
  if (r == 0) {
    bad = "no hello line within start_timeout_ms " + std::to_string(o_.start_timeout.count());
  } else if (r < 0) {
    bad = "before its hello line: " + why;
  } else {
    bad = CheckHello(line, &hello_);
    if (bad.empty() && o_.known_hello) {
      // The run's servers were set up for the hello its matrix read (knob "hello").
      std::string differ = HelloServersDiffer(hello_, *o_.known_hello);
      if (!differ.empty()) {
        bad = "its hello asks for other servers than the run was set up for (" + differ +
              "; the knob 'hello' is older than the driver: drop it)";
      }
    }
    greeted_ = bad.empty();
  }
  if (!bad.empty()) {
    Kill(bad);
    return Status::Infrastructure("driver " + o_.path + ": " + bad);
  }
  return Status::Ok();
}

int DriverLock::ReadLine(Nanos until, std::string* line, std::string* why) {
  switch (reader_.Read(driver_.stdout_pipe(), until, line, why)) {
    case DriverLineReader::Result::kLine:
      return 1;
    case DriverLineReader::Result::kTimeout:
      return 0;
    case DriverLineReader::Result::kError:
      return -1;
    case DriverLineReader::Result::kEof:
      break;
  }
  // EOF: the driver closed its stdout, almost always because it ended. Its exit status
  // (if it ends within 200 ms) says how.
  *why = "the driver closed its stdout";
  int status = 0;
  if (driver_.pid() > 0 && driver_.WaitExit(Millis(200), &status)) {
    *why = "the driver " + DescribeWaitStatus(status);
  }
  if (!reader_.partial().empty()) {
    *why += " after a partial line '" + LineExcerpt(reader_.partial(), 60) + "'";
  }
  return -1;
}

LockResult DriverLock::Unknown(const std::string& what, const nlohmann::json& request, bool kill) {
  std::string msg =
      "driver protocol: " + what + " (request " + std::to_string(request.value("id", int64_t{0})) +
      " " + request.value("op", std::string()) + " " + request.value("key", std::string()) + ")";
  if (kill && driver_.pid() > 0) {
    Kill(msg);
  } else if (kill) {  // already gone (and reaped): say so, drop the pipes
    LogLine(msg + "; a fresh driver starts now");
    Kill("");
  } else {
    LogLine(msg);
  }
  // The replacement starts now (fork and exec only; its hello is read at the next
  // operation), so an interpreter's start overlaps the workload's think time.
  if (kill) Prestart();
  LockResult r;
  r.outcome = Outcome::kUnknown;
  r.detail = msg;
  return r;
}

LockResult DriverLock::Call(nlohmann::json request, Nanos deadline, nlohmann::json* answer) {
  LockResult r;
  if (driver_.pid() > 0) {
    // Anything the driver printed since its last answer is out of protocol (a second answer,
    // an answer to a request given up on): start over with a fresh driver.
    std::string line, why;
    int got;
    while ((got = ReadLine(MonotonicNow(), &line, &why)) == 1) {
      if (IsBlankLine(line)) continue;
      Kill("driver protocol: unsolicited line between requests: '" + LineExcerpt(line) + "'");
      break;
    }
    if (got < 0) {
      if (driver_.pid() <= 0) LogLine("between requests: " + why);  // reaped by ReadLine
      Kill("between requests: " + why);                             // (logs only while it runs)
    }
  }
  if (driver_.pid() <= 0 || !greeted_) {
    Status s = Start();
    if (!s.ok()) {
      r.outcome = Outcome::kFail;  // nothing was sent
      r.detail = "driver did not start: " + s.message();
      LogLine(r.detail);
      return r;
    }
    if (MonotonicNow() >= deadline) {
      r.outcome = Outcome::kFail;
      r.detail = "driver: its start took past the deadline; the request was not sent";
      LogLine(r.detail);
      return r;
    }
  }
  request["id"] = ++next_id_;
  request["timeout_ms"] = MillisUntil(deadline);
  std::string unsent =
      WriteLine(driver_.stdin_pipe(), request.dump() + "\n", deadline + o_.answer_grace);
  if (!unsent.empty()) return Unknown(unsent, request, true);
  // A stop at a pause point can outlast the deadline: the driver then still gets its grace
  // to answer once it goes on (a late answer is unknown, but keeps the driver).
  Nanos read_until = deadline + o_.answer_grace;
  for (;;) {
    std::string line, why;
    int got = ReadLine(read_until, &line, &why);
    if (got == 0) {
      return Unknown("no answer within timeout_ms " +
                         std::to_string(request["timeout_ms"].get<int64_t>()) +
                         " + answer_grace_ms " + std::to_string(o_.answer_grace.count()),
                     request, true);
    }
    if (got < 0) return Unknown(why, request, true);
    if (IsBlankLine(line)) continue;
    if (IsPointLine(line)) {
      // The driver waits at a pause point: the client may stop here (the whole group,
      // driver included) or sleep, as an armed fault says; then the driver goes on.
      std::string point;
      std::string bad = CheckPointLine(line, hello_.points, &point);
      if (!bad.empty()) return Unknown(bad, request, true);
      // The read window grows by the time the client spent at the point (stopped or slowed),
      // never more: a driver printing points in a loop still meets its deadline.
      Nanos before = MonotonicNow();
      if (config_.pause_point) config_.pause_point(point.c_str());
      read_until += MonotonicNow() - before;
      std::string unsent = WriteLine(driver_.stdin_pipe(), PointGoLine(point), read_until);
      if (!unsent.empty()) return Unknown(unsent, request, true);
      continue;
    }
    nlohmann::json j;
    std::string outcome;
    std::string bad = CheckAnswer(line, next_id_, &j, &outcome);
    if (!bad.empty()) return Unknown(bad, request, true);
    Nanos now = MonotonicNow();
    if (now > deadline) {
      // In sync, just too late: the operation may have taken effect or not, as far as the
      // caller can tell. The driver stays. The answer is still handed back: a late `ok`
      // acquire names the token the lock is now held with (Acquire passes it on).
      *answer = j;
      return Unknown("late answer '" + outcome + "' " +
                         std::to_string(std::chrono::ceil<Millis>(now - deadline).count()) +
                         " ms after the deadline",
                     request, false);
    }
    *answer = j;
    r.outcome = outcome == "ok"     ? Outcome::kOk
                : outcome == "fail" ? Outcome::kFail
                                    : Outcome::kUnknown;
    if (j.contains("detail")) r.detail = "driver: " + j["detail"].get<std::string>();
    return r;
  }
}

LockResult DriverLock::Acquire(const std::string& key, Nanos deadline) {
  nlohmann::json req = {{"op", "acquire"}, {"key", key}, {"ttl_ms", config_.ttl.count()}};
  nlohmann::json a;
  LockResult r = Call(req, deadline, &a);
  // An `ok` with a token that is recorded unknown (it came after the deadline, or a field is
  // malformed) still took the lock: the result names the token (LockResult) so that the
  // caller releases it at once. Left alone it would stay held until its TTL ran out, or for
  // as long as the driver lives when its library renews locks on its own.
  const bool granted = a.is_object() && a.value("outcome", nlohmann::json()) == "ok" &&
                       a.contains("token") && a["token"].is_string() &&
                       !a["token"].get<std::string>().empty();
  auto may_hold = [&](LockResult u) {
    if (granted) {
      u.lease.key = key;
      u.lease.token = a["token"].get<std::string>();
      if (a.contains("fence") && IsValidCount(a, "fence")) {
        u.lease.fence = a["fence"].get<int64_t>();
      }
    }
    return u;
  };
  if (r.outcome != Outcome::kOk) return may_hold(r);
  req["id"] = next_id_;
  if (!granted) {
    return Unknown("acquire answered ok without a non-empty string 'token'", req, false);
  }
  if (!IsValidCount(a, "fence")) {
    return may_hold(Unknown("answer field 'fence' must be an integer >= 0", req, false));
  }
  if (!IsValidCount(a, "validity_ms")) {
    return may_hold(Unknown("answer field 'validity_ms' must be an integer >= 0", req, false));
  }
  r.lease.key = key;
  r.lease.token = a["token"].get<std::string>();
  r.lease.fence = a.value("fence", int64_t{-1});
  r.lease.validity = Millis(a.value("validity_ms", static_cast<int64_t>(config_.ttl.count())));
  r.lease.acquired_at = MonotonicNow();
  return r;
}

LockResult DriverLock::Release(const Lease& lease) {
  nlohmann::json req = {{"op", "release"}, {"key", lease.key}, {"token", lease.token}};
  if (lease.fence >= 0) req["fence"] = lease.fence;
  nlohmann::json a;
  return Call(req, MonotonicNow() + o_.release_timeout, &a);
}

LockResult DriverLock::Renew(const Lease& lease) {
  if (!hello_.renew) return Lock::Renew(lease);
  nlohmann::json req = {
      {"op", "renew"}, {"key", lease.key}, {"token", lease.token}, {"ttl_ms", config_.ttl.count()}};
  if (lease.fence >= 0) req["fence"] = lease.fence;
  nlohmann::json a;
  LockResult r = Call(req, MonotonicNow() + o_.release_timeout, &a);
  if (r.outcome != Outcome::kOk) return r;
  if (!IsValidCount(a, "validity_ms")) {
    req["id"] = next_id_;
    return Unknown("answer field 'validity_ms' must be an integer >= 0", req, false);
  }
  r.lease = lease;
  r.lease.validity = Millis(a.value("validity_ms", static_cast<int64_t>(config_.ttl.count())));
  r.lease.acquired_at = MonotonicNow();
  return r;
}

DriverLock::ResourceResult DriverLock::ReadResource(const std::string& counter, const Lease* lease) {
  nlohmann::json req = {{"op", "read"}, {"key", counter}};
  if (lease != nullptr) {
    req["lock"] = lease->key;
    req["token"] = lease->token;
  }
  nlohmann::json a;
  LockResult r = Call(req, MonotonicNow() + o_.release_timeout, &a);
  ResourceResult out;
  out.outcome = r.outcome;
  out.detail = r.detail;
  if (r.outcome != Outcome::kOk) return out;
  const nlohmann::json v = a.is_object() && a.contains("value") ? a["value"] : nlohmann::json();
  if (!a.is_object() || !a.contains("value") || !(v.is_null() || v.is_number_integer())) {
    req["id"] = next_id_;
    LockResult u = Unknown("read answered ok without an integer or null 'value'", req, false);
    out.outcome = u.outcome;
    out.detail = u.detail;
    return out;
  }
  if (v.is_number_integer()) out.value = v.get<int64_t>();
  return out;
}

DriverLock::ResourceResult DriverLock::Work(const std::string& counter, const Lease& lease, int64_t value) {
  nlohmann::json req = {{"op", "work"}, {"key", counter}, {"lock", lease.key}, {"token", lease.token}, {"value", value}};
  if (lease.fence >= 0) req["fence"] = lease.fence;
  nlohmann::json a;
  LockResult r = Call(req, MonotonicNow() + o_.release_timeout, &a);
  ResourceResult out;
  out.outcome = r.outcome;
  out.detail = r.detail;
  if (r.outcome == Outcome::kFail) {
    if (!a.is_object()) return out;  // the driver did not start: nothing was sent
    out.stale = a.contains("stale") && a["stale"].is_boolean() && a["stale"].get<bool>();
    if (a.contains("newest") && IsValidCount(a, "newest")) out.newest = a["newest"].get<int64_t>();
    return out;
  }
  if (r.outcome != Outcome::kOk) return out;
  if (!a.contains("value") || !a["value"].is_number_integer() || !IsValidCount(a, "fence")) {
    req["id"] = next_id_;
    LockResult u = Unknown("work answered ok without an integer 'value' (or a bad 'fence')", req, false);
    out.outcome = u.outcome;
    out.detail = u.detail;
    return out;
  }
  out.value = a["value"].get<int64_t>();
  out.fence = a.value("fence", lease.fence);
  return out;
}

}  // namespace locklab::locks
