#include "harness/run_options.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "locks/driver_lock.h"
#include "locks/lock.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {
namespace {

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used != s.size()) return false;
    *out = v;
    return true;
  } catch (...) {
    return false;
  }
}

std::vector<int> ParseIntList(const std::string& s, bool* ok) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  *ok = true;
  while (std::getline(ss, item, ',')) {
    int64_t v;
    if (!ParseInt(item, &v)) *ok = false;
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// Messages echo what the user wrote (a lock id, a fault param, a URL), and a TOML string
// may hold a newline: escaped here, so that every error stays one line.
std::string OneLine(const std::string& s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Status OneLine(const Status& s) {
  if (s.ok() || s.message() == OneLine(s.message())) return s;
  switch (s.code()) {
    case Status::Code::kBadInput: return Status::BadInput(OneLine(s.message()));
    case Status::Code::kUsage: return Status::Usage(OneLine(s.message()));
    default: return s;
  }
}

}  // namespace

Status ResolveDriverPath(const std::string& lock_id, std::string* resolved) {
  resolved->clear();
  if (!locks::IsDriverId(lock_id)) {
    if (lock_id == "driver:") return Status::Usage("lock 'driver:': no program path after driver:");
    return Status::Ok();
  }
  std::string path = lock_id.substr(sizeof(locks::kDriverPrefix) - 1);
  std::vector<std::string> candidates = {path};
  if (path[0] != '/') candidates.push_back(std::string(LOCKLAB_SOURCE_DIR) + "/" + path);
  for (const auto& c : candidates) {
    struct stat st;
    if (stat(c.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) return Status::Usage("lock driver '" + path + "': not a regular file");
    if (access(c.c_str(), X_OK) != 0) {
      return Status::Usage("lock driver '" + path + "': not executable (chmod +x, with a #! line)");
    }
    char buf[PATH_MAX];
    *resolved = realpath(c.c_str(), buf) ? std::string(buf) : c;
    return Status::Ok();
  }
  return Status::Usage("lock driver '" + path + "': no such file (looked in the current directory" +
                       (path[0] != '/' ? std::string(" and ") + LOCKLAB_SOURCE_DIR : std::string()) + ")");
}

std::string LockDisplayName(const std::string& lock_id) {
  if (!locks::IsDriverId(lock_id)) return lock_id;
  std::string base = lock_id.substr(lock_id.find_last_of(":/") + 1);
  auto dot = base.find('.');
  if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  if (base.empty() || base == "." || base == "..") base = "program";
  return "driver-" + base;
}

std::string FaultIds(const RunOptions& o) {
  if (o.faults.empty()) return "none";
  std::string out;
  for (const auto& f : o.faults) out += (out.empty() ? "" : "+") + f.id;
  return out;
}

namespace {

// "1,3" or "n1,n3" -> {1,3}.
bool ParseNodeList(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty() && item[0] == 'n') item = item.substr(1);
    int64_t v;
    if (!ParseInt(item, &v) || v < 1 || v > 64) return false;
    out->push_back(static_cast<int>(v));
  }
  return !out->empty();
}

}  // namespace

bool ParseRedisUrl(const std::string& url, std::string* host, int* port, std::string* error) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) {
    *error = "'" + url + "' is not redis://host:port";
    return false;
  }
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('@') != std::string::npos || rest.find('/') != std::string::npos ||
      rest.find('?') != std::string::npos) {
    *error = "'" + url + "': only redis://host:port (no user, password, database or options)";
    return false;
  }
  size_t colon = rest.rfind(':');
  int64_t p = 0;
  if (colon == std::string::npos || colon == 0 || !ParseInt(rest.substr(colon + 1), &p) || p < 1 ||
      p > 65535) {
    *error = "'" + url + "' is not redis://host:port (port 1-65535)";
    return false;
  }
  *host = rest.substr(0, colon);
  for (char c : *host) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
      *error = "'" + url + "': host '" + *host + "' is not a host name or IPv4 address";
      return false;
    }
  }
  *port = static_cast<int>(p);
  return true;
}

int LockNodes(const RunOptions& o) {
  if (o.nodes > 0) return o.nodes;
  const locks::LockInfo* info = locks::FindLock(o.lock);
  return info ? info->default_nodes : 0;
}

Status CheckEndpoints(const RunOptions& o) {
  if (o.endpoints.empty()) {
    if (o.endpoint_control.empty()) return Status::Ok();
    return Status::Usage("run: flag --endpoint-control (or topology.endpoint_control): needs --endpoints");
  }
  std::string where = o.endpoints_origin.empty() ? "endpoints" : o.endpoints_origin;
  for (const auto& e : o.endpoints) {
    std::string host, error;
    int port = 0;
    if (!ParseRedisUrl(e, &host, &port, &error)) return Status::Usage("run: " + where + ": " + error);
  }
  const locks::LockInfo* info = locks::FindLock(o.lock);
  if (info != nullptr && info->backend != "redis") {
    return Status::Usage("run: " + where + ": lock " + o.lock + " runs on " + info->backend +
                         " servers the lab starts; --endpoints takes Redis servers only");
  }
  std::string refused;
  bool clocks_would_help = false;
  for (const auto& f : o.faults) {
    bool clock_ok = faults::IsNodeControlFault(f.id) && !o.endpoint_control.empty();
    if (!faults::IsClientSideFault(f.id) && !clock_ok) {
      refused += (refused.empty() ? "" : ", ") + f.id;
      clocks_would_help = clocks_would_help || faults::IsNodeControlFault(f.id);
    }
  }
  if (!refused.empty()) {
    std::string allowed;
    for (const auto& f : faults::ListFaults()) {
      if (faults::IsClientSideFault(f.id) && f.id != "none") allowed += (allowed.empty() ? "" : ", ") + f.id;
    }
    return Status::Usage("run: " + where + ": fault(s) " + refused +
                         " need control of the servers; against your own servers only client-side "
                         "faults run (" + allowed + ")" +
                         (clocks_would_help ? ", and node faults with --endpoint-control DIR" : ""));
  }
  int n = LockNodes(o);
  int given = static_cast<int>(o.endpoints.size());
  if (n > 0 && (given < n || given > n + 1)) {
    return Status::Usage("run: " + where + ": lock " + o.lock + " needs " + std::to_string(n) +
                         " endpoint(s) (n1..n" + std::to_string(n) +
                         ", then optionally one for the resource), got " + std::to_string(given));
  }
  return Status::Ok();
}

namespace {
Status ValidateRunOptionsMultiLine(const RunOptions& o);
}  // namespace

Status ValidateRunOptions(const RunOptions& o) { return OneLine(ValidateRunOptionsMultiLine(o)); }

namespace {
Status ValidateRunOptionsMultiLine(const RunOptions& o) {
  // The scenario file's place for a field, or the flag that sets it.
  // A field the file left out (a default) is named by its table: "fault0.first_at_ms"
  // falls back to "fault0".
  auto where = [&](const std::string& key, const std::string& flag) {
    auto it = o.origins.find(key);
    if (it == o.origins.end() && key.find('.') != std::string::npos) {
      it = o.origins.find(key.substr(0, key.find('.')));
    }
    return it != o.origins.end() ? it->second : "run: flag " + flag;
  };
  const locks::LockInfo* info = locks::FindLock(o.lock);
  if (info == nullptr) {
    return Status::Usage(where("lock", "--lock") + ": lock '" + o.lock + "': unknown lock id (see `locklab list`)");
  }
  if (o.faults.size() > kMaxFaults) {
    return Status::Usage("run: " + std::to_string(o.faults.size()) + " faults, at most " +
                         std::to_string(kMaxFaults) + " (one fault repeats its window: --windows, --interval)");
  }
  // Knobs one at a time first, so that the message names the knob's own line.
  locks::LockConfig probe;
  probe.algorithm = o.lock;
  probe.nodes.assign(std::max(LockNodes(o), 1), locks::Endpoint{});
  probe.ttl = o.ttl;
  probe.driver_args = o.driver_args;
  std::unique_ptr<locks::Lock> unused;
  for (const auto& [k, v] : o.knobs) {
    probe.knobs = {{k, v}};
    Status s = locks::MakeLock(probe, &unused);
    if (!s.ok()) return Status::Usage(where("knob." + k, "--knob") + ": " + s.message());
  }
  probe.knobs = o.knobs;
  Status s = locks::MakeLock(probe, &unused);
  if (!s.ok()) return Status::Usage(where(o.knobs.empty() ? "lock" : "lock.knobs", "--knob") + ": " + s.message());
  const int nodes = LockNodes(o);
  for (size_t i = 0; i < o.faults.size(); ++i) {
    const faults::FaultOptions& f = o.faults[i];
    const std::string key = "fault" + std::to_string(i);
    if (faults::FindFault(f.id) == nullptr) {
      return Status::Usage(where(key, "--fault") + ": unknown fault '" + f.id + "' (see `locklab list`)");
    }
    if (!locks::FaultApplies(*info, f.id)) {
      return Status::Usage(where(key, "--fault") + ": fault '" + f.id + "' does not apply to lock '" +
                           o.lock + "' (see `locklab list`)");
    }
    for (int t : f.targets) {
      if (t < 1 || t > o.clients) {
        return Status::Usage(where(key + ".targets", "--targets") + ": fault " + f.id + ": target client " +
                             std::to_string(t) + " does not exist (clients are 1.." +
                             std::to_string(o.clients) + ")");
      }
    }
    for (int n : f.nodes) {
      if (n < 1 || n > nodes) {
        return Status::Usage(where(key + ".nodes", "--fault-nodes") + ": fault " + f.id + ": node " +
                             std::to_string(n) + " does not exist (lock " + o.lock + " has n1..n" +
                             std::to_string(nodes) + ")");
      }
    }
    // A first window at or past the end never opens: the fault would run silently not at all.
    if (f.first_at >= o.duration) {
      return Status::Usage(where(key + ".first_at_ms", "--first-at") + ": fault " + f.id + " would first open at " +
                           std::to_string(f.first_at.count()) + " ms, at or after the run's end (" +
                           std::to_string(o.duration.count()) + " ms)");
    }
    std::unique_ptr<faults::Fault> fault;
    s = faults::MakeFault(f, 1, &fault);
    if (s.ok()) s = fault->CheckOptions(o.clients, nodes);
    if (!s.ok()) return Status::Usage(where(key, "--fault") + ": " + s.message());
  }
  return Status::Ok();
}

}  // namespace

Status ParseIntFlag(const std::string& command, const std::string& flag, const std::string& value,
                    int64_t lo, int64_t hi, int64_t* out) {
  int64_t n = 0;
  if (!ParseInt(value, &n) || n < lo || n > hi) {
    return Status::Usage(command + ": flag " + flag + ": '" + value + "' is not a whole number in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = n;
  return Status::Ok();
}

namespace {
Status ParseRunFlagsMultiLine(const std::vector<std::string>& args, RunOptions* o,
                              std::string* scenario_path);
}  // namespace

Status ParseRunFlags(const std::vector<std::string>& args, RunOptions* o,
                     std::string* scenario_path) {
  return OneLine(ParseRunFlagsMultiLine(args, o, scenario_path));
}

namespace {
Status ParseRunFlagsMultiLine(const std::vector<std::string>& args, RunOptions* o,
                              std::string* scenario_path) {
  scenario_path->clear();
  bool name_given = false;
  bool fault_named = false;  // whether the last fault entry got its id from --fault
  bool driver_args_given = false;  // flags' --driver-arg list replaces a scenario file's
  auto fault = [&]() -> faults::FaultOptions& {
    if (o->faults.empty()) o->faults.emplace_back();
    return o->faults.back();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] != '-') {
      if (!scenario_path->empty()) return Status::Usage("run: more than one scenario file: '" + a + "'");
      *scenario_path = a;
      continue;
    }
    if (i + 1 >= args.size()) return Status::Usage("run: flag " + a + " needs a value");
    const std::string v = args[++i];
    int64_t n = 0;
    auto need_int = [&](int64_t lo, int64_t hi) { return ParseIntFlag("run", a, v, lo, hi, &n); };
    auto param = [&](const std::string& kv) -> Status {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return Status::Usage("run: flag " + a + ": '" + kv + "' is not NAME=VALUE");
      fault().params[kv.substr(0, eq)] = kv.substr(eq + 1);
      return Status::Ok();
    };
    Status s;
    if (a == "--lock") {
      o->lock = v;
      std::string resolved;
      if (!(s = ResolveDriverPath(v, &resolved)).ok()) return Status::Usage("run: flag --lock: " + s.message());
    }
    else if (a == "--driver-arg") {
      if (!driver_args_given) o->driver_args.clear();
      driver_args_given = true;
      o->driver_args.push_back(v);
    }
    else if (a == "--fault") {
      if (fault_named || o->faults.empty()) o->faults.emplace_back();
      o->faults.back().id = v;
      fault_named = true;
    }
    else if (a == "--name") { o->name = v; name_given = true; }
    else if (a == "--out") o->out_dir = v;
    else if (a == "--endpoints") {
      o->endpoints.clear();
      std::stringstream ss(v);
      std::string item, host, error;
      int port = 0;
      while (std::getline(ss, item, ',')) {
        if (!ParseRedisUrl(item, &host, &port, &error)) return Status::Usage("run: flag --endpoints: " + error);
        o->endpoints.push_back(item);
      }
      if (o->endpoints.empty()) return Status::Usage("run: flag --endpoints: expected redis://host:port,...");
      o->endpoints_origin = "flag --endpoints";
    }
    else if (a == "--endpoint-control") o->endpoint_control = v;
    else if (a == "--duration") { if ((s = need_int(1, 86400)).ok()) o->duration = Millis(n * 1000); }
    else if (a == "--duration-ms") { if ((s = need_int(100, 86400000)).ok()) o->duration = Millis(n); }
    else if (a == "--clients") { if ((s = need_int(1, 64)).ok()) o->clients = static_cast<int>(n); }
    else if (a == "--keys") { if ((s = need_int(1, 1000)).ok()) o->keys = static_cast<int>(n); }
    else if (a == "--nodes") { if ((s = need_int(1, 15)).ok()) o->nodes = static_cast<int>(n); }
    else if (a == "--ttl") { if ((s = need_int(1, 3600000)).ok()) o->ttl = Millis(n); }
    else if (a == "--hold") { if ((s = need_int(0, 3600000)).ok()) o->hold = Millis(n); }
    else if (a == "--think") { if ((s = need_int(0, 3600000)).ok()) o->think = Millis(n); }
    else if (a == "--seed") { if ((s = need_int(1, INT64_MAX)).ok()) o->seed = static_cast<uint64_t>(n); }
    else if (a == "--timeout") { if ((s = need_int(1, 60000)).ok()) o->command_timeout = Millis(n); }
    else if (a == "--acquire-timeout") { if ((s = need_int(1, 3600000)).ok()) o->acquire_timeout = Millis(n); }
    // Fault schedule flags apply to the most recent --fault.
    else if (a == "--pause" || a == "--fault-duration") { if ((s = need_int(1, 3600000)).ok()) fault().duration = Millis(n); }
    else if (a == "--first-at") { if ((s = need_int(0, 3600000)).ok()) fault().first_at = Millis(n); }
    else if (a == "--interval") { if ((s = need_int(0, 3600000)).ok()) fault().interval = Millis(n); }
    else if (a == "--windows") { if ((s = need_int(0, 100000)).ok()) fault().windows = static_cast<int>(n); }
    else if (a == "--pause-mode") s = param("mode=" + v);
    else if (a == "--pause-point") s = param("point=" + v);
    else if (a == "--param") s = param(v);
    else if (a == "--targets") {
      bool ok;
      fault().targets = ParseIntList(v, &ok);
      if (!ok) return Status::Usage("run: flag --targets: '" + v + "' is not a list of client numbers");
    } else if (a == "--fault-nodes") {
      if (!ParseNodeList(v, &fault().nodes)) {
        return Status::Usage("run: flag --fault-nodes: '" + v + "' is not a list of nodes like n1,n3");
      }
    } else if (a == "--knob") {
      auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return Status::Usage("run: flag --knob: '" + v + "' is not NAME=VALUE");
      o->knobs[v.substr(0, eq)] = v.substr(eq + 1);
    } else {
      return Status::Usage("run: unknown flag " + a);
    }
    if (!s.ok()) return s;
  }
  for (auto it = o->faults.begin(); it != o->faults.end();) {
    it = it->id == "none" ? o->faults.erase(it) : it + 1;
  }
  // A misspelt --param would otherwise run the fault with its default, silently.
  for (const auto& f : o->faults) {
    const faults::FaultInfo* info = faults::FindFault(f.id);
    if (info == nullptr) continue;  // unknown ids are named where the fault is made
    Status s = faults::CheckFaultParams(f, *info);
    if (!s.ok()) return Status::Usage("run: flag --param: " + s.message());
  }
  if (!o->driver_args.empty() && !locks::IsDriverId(o->lock)) {
    return Status::Usage("run: flag --driver-arg: only with --lock driver:PATH");
  }
  if (!name_given && o->name.empty()) o->name = LockDisplayName(o->lock) + "--" + FaultIds(*o);
  return Status::Ok();
}

}  // namespace

std::string ScenarioToToml(const RunOptions& o) {
  // A TOML basic string: quotes, backslashes and control characters escaped, so that any
  // name or knob value a scenario held is written back as one that parses to the same.
  auto q = [](const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
      unsigned char u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(c);
      } else if (u < 0x20 || u == 0x7f) {
        char buf[8];
        snprintf(buf, sizeof(buf), "\\u%04x", u);
        out += buf;
      } else {
        out.push_back(c);
      }
    }
    return out + "\"";
  };
  // A key as written: bare when TOML allows it, else quoted.
  auto key = [&q](const std::string& k) {
    bool bare = !k.empty();
    for (char c : k) bare = bare && (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
    return bare ? k : q(k);
  };
  std::ostringstream t;
  t << "# locklab scenario. Replay this exact trial with: locklab run <this file>\n";
  t << "name = " << q(o.name) << "\n";
  t << "seed = " << o.seed << "\n";
  t << "duration_ms = " << o.duration.count() << "\n";
  t << "stuck_after_ms = " << o.stuck_after.count() << "\n";
  t << "trials = " << o.trials << "\n\n";
  if (!o.expect_verdict.empty() || !o.expect_stuck.empty() || !o.expect_resource.empty()) {
    t << "[expect]\n";
    if (!o.expect_verdict.empty()) t << "verdict = " << q(o.expect_verdict) << "\n";
    if (!o.expect_stuck.empty()) t << "stuck = " << q(o.expect_stuck) << "\n";
    if (!o.expect_resource.empty()) t << "resource = " << q(o.expect_resource) << "\n";
    t << "\n";
  }
  t << "[lock]\n";
  t << "id = " << q(o.lock) << "\n";
  t << "ttl_ms = " << o.ttl.count() << "\n";
  t << "retry_delay_ms = " << o.retry_delay.count() << "\n";
  t << "command_timeout_ms = " << o.command_timeout.count() << "\n";
  t << "nodes = " << o.nodes << "\n";
  if (!o.driver_args.empty()) {
    t << "driver_args = [";
    for (size_t i = 0; i < o.driver_args.size(); ++i) t << (i ? ", " : "") << q(o.driver_args[i]);
    t << "]\n";
  }
  if (!o.knobs.empty()) {
    t << "[lock.knobs]\n";
    for (const auto& [k, v] : o.knobs) t << key(k) << " = " << q(v) << "\n";
  }
  t << "\n[workload]\n";
  t << "id = \"counter\"\n";
  t << "clients = " << o.clients << "\n";
  t << "keys = " << o.keys << "\n";
  t << "hold_ms = " << o.hold.count() << "\n";
  t << "think_ms = " << o.think.count() << "\n";
  t << "acquire_timeout_ms = " << o.acquire_timeout.count() << "\n\n";
  if (!o.endpoints.empty()) {
    t << "[topology]\nendpoints = [";
    for (size_t i = 0; i < o.endpoints.size(); ++i) t << (i ? ", " : "") << q(o.endpoints[i]);
    t << "]\n";
    if (!o.endpoint_control.empty()) t << "endpoint_control = " << q(o.endpoint_control) << "\n";
    t << "\n";
  }
  for (const auto& f : o.faults) {
    t << "[[faults]]\n";
    t << "id = " << q(f.id) << "\n";
    t << "first_at_ms = " << f.first_at.count() << "\n";
    t << "duration_ms = " << f.duration.count() << "\n";
    t << "interval_ms = " << f.interval.count() << "\n";
    t << "windows = " << f.windows << "\n";
    t << "targets = [";
    for (size_t i = 0; i < f.targets.size(); ++i) t << (i ? ", " : "") << f.targets[i];
    t << "]\n";
    t << "nodes = [";
    for (size_t i = 0; i < f.nodes.size(); ++i) t << (i ? ", " : "") << f.nodes[i];
    t << "]\n";
    for (const auto& [k, v] : f.params) t << k << " = " << q(v) << "\n";
    t << "\n";
  }
  return t.str();
}

namespace {

// Reads typed fields from one TOML table, rejecting unknown keys, with file:line messages.
class TableReader {
 public:
  TableReader(const std::string& file, const toml::table& table, std::string prefix)
      : file_(file), table_(table), prefix_(std::move(prefix)) {}

  Status Int(const char* key, int64_t lo, int64_t hi, int64_t* out) {
    seen_.push_back(key);
    const toml::node* n = table_.get(key);
    if (n == nullptr) return Status::Ok();
    auto v = n->value<int64_t>();
    if (!n->is_integer() || !v) return Error(*n, key, "expected an integer");
    if (*v < lo || *v > hi) {
      return Error(*n, key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    *out = *v;
    return Status::Ok();
  }
  Status Ms(const char* key, int64_t lo, int64_t hi, Millis* out) {
    int64_t v = out->count();
    Status s = Int(key, lo, hi, &v);
    *out = Millis(v);
    return s;
  }
  Status Str(const char* key, std::string* out) {
    seen_.push_back(key);
    const toml::node* n = table_.get(key);
    if (n == nullptr) return Status::Ok();
    if (!n->is_string()) return Error(*n, key, "expected a string");
    *out = *n->value<std::string>();
    return Status::Ok();
  }
  Status StrList(const char* key, std::vector<std::string>* out) {
    seen_.push_back(key);
    const toml::node* n = table_.get(key);
    if (n == nullptr) return Status::Ok();
    if (!n->is_array()) return Error(*n, key, "expected an array of strings");
    out->clear();
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) return Error(e, key, "expected an array of strings");
      out->push_back(*e.value<std::string>());
    }
    return Status::Ok();
  }
  Status IntList(const char* key, std::vector<int>* out) {
    seen_.push_back(key);
    const toml::node* n = table_.get(key);
    if (n == nullptr) return Status::Ok();
    if (!n->is_array()) return Error(*n, key, "expected an array of integers");
    out->clear();
    for (const auto& e : *n->as_array()) {
      if (!e.is_integer()) return Error(e, key, "expected an array of integers");
      out->push_back(static_cast<int>(*e.value<int64_t>()));
    }
    return Status::Ok();
  }
  void Allow(const char* key) { seen_.push_back(key); }
  Status RejectUnknown() {
    for (const auto& [k, v] : table_) {
      bool known = false;
      for (const auto& s : seen_) known = known || s == k.str();
      if (!known) return Error(v, std::string(k.str()), "unknown field");
    }
    return Status::Ok();
  }

 private:
  Status Error(const toml::node& n, const std::string& key, const std::string& what) {
    return Status::BadInput(file_ + ":" + std::to_string(n.source().begin.line) + ": field '" +
                            prefix_ + key + "': " + what);
  }
  const std::string& file_;
  const toml::table& table_;
  std::string prefix_;
  std::vector<std::string> seen_;
};

Status SubTable(const std::string& file, const toml::table& root, const char* key,
                const toml::table** out) {
  *out = nullptr;
  const toml::node* n = root.get(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_table()) {
    return Status::BadInput(file + ":" + std::to_string(n->source().begin.line) + ": field '" +
                            key + "': expected a table");
  }
  *out = n->as_table();
  return Status::Ok();
}

}  // namespace

Status LoadScenarioFile(const std::string& path, RunOptions* o) {
  // An ifstream opens a directory and reads it as empty: say what it is instead.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::BadInput(path + ": cannot open: " + strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::BadInput(path + ": is a directory, not a scenario file");
  // Far beyond any real scenario (kMaxFaults tables are some 50 KiB): parsing 16 MiB of TOML
  // takes seconds, and more would only make `run` look hung before it refuses the file.
  constexpr off_t kMaxScenarioBytes = off_t{16} << 20;
  if (S_ISREG(st.st_mode) && st.st_size > kMaxScenarioBytes) {
    return Status::BadInput(path + ": " + std::to_string(st.st_size) +
                            " bytes; a scenario file is at most 16 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::BadInput(path + ": cannot open: " + strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::BadInput(path + ": cannot read: " + strerror(errno));
  return ParseScenario(text.str(), path, o);
}

namespace {
Status ParseScenarioMultiLine(const std::string& text, const std::string& path, RunOptions* o);
}  // namespace

Status ParseScenario(const std::string& text, const std::string& path, RunOptions* o) {
  return OneLine(ParseScenarioMultiLine(text, path, o));
}

namespace {
Status ParseScenarioMultiLine(const std::string& text, const std::string& path, RunOptions* o) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    // toml++ descriptions are one line; keep it so whatever the input held.
    std::string what(e.description());
    for (char& c : what) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return Status::BadInput(path + ":" + std::to_string(e.source().begin.line) + ": " + what);
  }
  auto at = [&](const toml::node& n) { return path + ":" + std::to_string(n.source().begin.line); };
  o->origins.clear();
  Status s;
  TableReader top(path, root, "");
  int64_t seed = static_cast<int64_t>(o->seed);
  if (!(s = top.Str("name", &o->name)).ok()) return s;
  if (!(s = top.Int("seed", 0, INT64_MAX, &seed)).ok()) return s;
  o->seed = static_cast<uint64_t>(seed);
  if (!(s = top.Ms("duration_ms", 100, 86400000, &o->duration)).ok()) return s;
  if (!(s = top.Ms("stuck_after_ms", 0, 86400000, &o->stuck_after)).ok()) return s;
  int64_t trials = o->trials;
  if (!(s = top.Int("trials", 1, 1000, &trials)).ok()) return s;
  o->trials = static_cast<int>(trials);
  top.Allow("lock");
  top.Allow("workload");
  top.Allow("fault");
  top.Allow("faults");
  top.Allow("expect");
  top.Allow("topology");
  if (!(s = top.RejectUnknown()).ok()) return s;

  const toml::table* t = nullptr;
  if (!(s = SubTable(path, root, "expect", &t)).ok()) return s;
  if (t) {
    TableReader r(path, *t, "expect.");
    if (!(s = r.Str("verdict", &o->expect_verdict)).ok()) return s;
    if (!(s = r.Str("stuck", &o->expect_stuck)).ok()) return s;
    if (!(s = r.Str("resource", &o->expect_resource)).ok()) return s;
    if (!(s = r.RejectUnknown()).ok()) return s;
    auto line = [&](const char* k) { return std::to_string(t->get(k)->source().begin.line); };
    if (!o->expect_verdict.empty() && o->expect_verdict != "safe" &&
        o->expect_verdict != "violated" && o->expect_verdict != "unknown") {
      return Status::BadInput(path + ":" + line("verdict") +
                              ": field 'expect.verdict': expected safe, violated or unknown");
    }
    if (!o->expect_stuck.empty() && o->expect_stuck != "yes" && o->expect_stuck != "no") {
      return Status::BadInput(path + ":" + line("stuck") + ": field 'expect.stuck': expected yes or no");
    }
    if (!o->expect_resource.empty() && o->expect_resource != "safe" && o->expect_resource != "violated") {
      return Status::BadInput(path + ":" + line("resource") +
                              ": field 'expect.resource': expected safe or violated");
    }
    o->expect_origin = path + ":" + std::to_string(t->source().begin.line);
  }

  if (!(s = SubTable(path, root, "lock", &t)).ok()) return s;
  if (t) {
    TableReader r(path, *t, "lock.");
    int64_t nodes = o->nodes;
    if (!(s = r.Str("id", &o->lock)).ok()) return s;
    if (t->get("id") && locks::FindLock(o->lock) == nullptr) {
      return Status::BadInput(path + ":" + std::to_string(t->get("id")->source().begin.line) +
                              ": field 'lock.id': unknown lock '" + o->lock + "'");
    }
    std::string resolved;
    if (t->get("id") && !(s = ResolveDriverPath(o->lock, &resolved)).ok()) {
      return Status::BadInput(path + ":" + std::to_string(t->get("id")->source().begin.line) +
                              ": field 'lock.id': " + s.message());
    }
    if (!(s = r.StrList("driver_args", &o->driver_args)).ok()) return s;
    if (!o->driver_args.empty() && !locks::IsDriverId(o->lock)) {
      return Status::BadInput(path + ":" + std::to_string(t->get("driver_args")->source().begin.line) +
                              ": field 'lock.driver_args': only for a driver:PATH lock");
    }
    if (!(s = r.Ms("ttl_ms", 1, 3600000, &o->ttl)).ok()) return s;
    if (!(s = r.Ms("retry_delay_ms", 0, 60000, &o->retry_delay)).ok()) return s;
    if (!(s = r.Ms("command_timeout_ms", 1, 60000, &o->command_timeout)).ok()) return s;
    if (!(s = r.Int("nodes", 0, 15, &nodes)).ok()) return s;
    o->nodes = static_cast<int>(nodes);
    r.Allow("knobs");
    if (!(s = r.RejectUnknown()).ok()) return s;
    const toml::table* knobs = nullptr;
    if (!(s = SubTable(path, *t, "knobs", &knobs)).ok()) return s;
    o->origins["lock"] = at(*t) + ": field 'lock.id'";
    if (knobs) {
      o->origins["lock.knobs"] = at(*knobs) + ": field 'lock.knobs'";
      for (const auto& [k, v] : *knobs) {
        o->origins["knob." + std::string(k.str())] = at(v) + ": field 'lock.knobs." + std::string(k.str()) + "'";
        if (!v.is_string()) {
          return Status::BadInput(path + ":" + std::to_string(v.source().begin.line) +
                                  ": field 'lock.knobs." + std::string(k.str()) +
                                  "': expected a string");
        }
        o->knobs[std::string(k.str())] = *v.value<std::string>();
      }
    }
  }
  if (!(s = SubTable(path, root, "workload", &t)).ok()) return s;
  if (t) {
    TableReader r(path, *t, "workload.");
    std::string id = "counter";
    int64_t clients = o->clients, keys = o->keys;
    if (!(s = r.Str("id", &id)).ok()) return s;
    if (id != "counter") {
      return Status::BadInput(path + ":" + std::to_string(t->get("id")->source().begin.line) +
                              ": field 'workload.id': unknown workload '" + id + "'");
    }
    if (!(s = r.Int("clients", 1, 64, &clients)).ok()) return s;
    if (!(s = r.Int("keys", 1, 1000, &keys)).ok()) return s;
    if (!(s = r.Ms("hold_ms", 0, 3600000, &o->hold)).ok()) return s;
    if (!(s = r.Ms("think_ms", 0, 3600000, &o->think)).ok()) return s;
    if (!(s = r.Ms("acquire_timeout_ms", 1, 3600000, &o->acquire_timeout)).ok()) return s;
    if (!(s = r.RejectUnknown()).ok()) return s;
    o->clients = static_cast<int>(clients);
    o->keys = static_cast<int>(keys);
  }
  // Faults: [[faults]] (up to kMaxFaults) or a single [fault] table.
  std::vector<const toml::table*> fault_tables;
  if (const toml::node* n = root.get("faults")) {
    if (!n->is_array_of_tables()) {
      return Status::BadInput(path + ":" + std::to_string(n->source().begin.line) +
                              ": field 'faults': expected [[faults]] tables");
    }
    for (const auto& e : *n->as_array()) fault_tables.push_back(e.as_table());
    if (fault_tables.size() > kMaxFaults) {
      return Status::BadInput(at(*fault_tables[kMaxFaults]) + ": field 'faults': " +
                              std::to_string(fault_tables.size()) + " [[faults]] tables, at most " +
                              std::to_string(kMaxFaults) +
                              " (one table repeats its window: windows, interval_ms)");
    }
  }
  if (!(s = SubTable(path, root, "fault", &t)).ok()) return s;
  if (t) fault_tables.push_back(t);
  o->faults.clear();
  for (size_t i = 0; i < fault_tables.size(); ++i) {
    const toml::table& ft = *fault_tables[i];
    std::string prefix = root.get("faults") && i < root.get("faults")->as_array()->size()
                             ? "faults[" + std::to_string(i) + "]." : "fault.";
    TableReader r(path, ft, prefix);
    faults::FaultOptions f;
    int64_t windows = 0;
    if (!(s = r.Str("id", &f.id)).ok()) return s;
    const faults::FaultInfo* info = faults::FindFault(f.id);
    if (info == nullptr) {
      const toml::node* idn = ft.get("id");
      return Status::BadInput(path + ":" + std::to_string(idn ? idn->source().begin.line : ft.source().begin.line) +
                              ": field '" + prefix + "id': unknown fault '" + f.id + "'");
    }
    if (!(s = r.Ms("first_at_ms", 0, 86400000, &f.first_at)).ok()) return s;
    if (!(s = r.Ms("duration_ms", 1, 86400000, &f.duration)).ok()) return s;
    if (!(s = r.Ms("pause_ms", 1, 86400000, &f.duration)).ok()) return s;  // alias
    if (!(s = r.Ms("interval_ms", 0, 86400000, &f.interval)).ok()) return s;
    if (!(s = r.Int("windows", 0, 100000, &windows)).ok()) return s;
    if (!(s = r.IntList("targets", &f.targets)).ok()) return s;
    if (!(s = r.IntList("nodes", &f.nodes)).ok()) return s;
    f.windows = static_cast<int>(windows);
    for (const auto& p : info->params) {
      std::string v;
      if (!(s = r.Str(p.name.c_str(), &v)).ok()) return s;
      if (ft.get(p.name)) f.params[p.name] = v;
    }
    if (!(s = r.RejectUnknown()).ok()) return s;
    if (f.id == "none") continue;
    std::string key = "fault" + std::to_string(o->faults.size());
    o->origins[key] = at(ft) + ": field '" + prefix.substr(0, prefix.size() - 1) + "'";
    for (const char* field : {"targets", "nodes", "first_at_ms"}) {
      if (const toml::node* fn = ft.get(field)) {
        o->origins[key + "." + field] = at(*fn) + ": field '" + prefix + field + "'";
      }
    }
    o->faults.push_back(f);
  }
  // [topology]: what the lab starts. nodes = lock nodes; replicas and sentinels come with
  // the failover fault (one replica of n1, three sentinels) and must agree with it.
  if (!(s = SubTable(path, root, "topology", &t)).ok()) return s;
  if (t) {
    TableReader r(path, *t, "topology.");
    int64_t nodes = o->nodes, replicas = -1, sentinels = -1;
    if (!(s = r.Int("nodes", 0, 15, &nodes)).ok()) return s;
    if (!(s = r.Int("replicas", 0, 15, &replicas)).ok()) return s;
    if (!(s = r.Int("sentinels", 0, 15, &sentinels)).ok()) return s;
    r.Allow("endpoints");
    if (!(s = r.Str("endpoint_control", &o->endpoint_control)).ok()) return s;
    if (!(s = r.RejectUnknown()).ok()) return s;
    if (const toml::node* en = t->get("endpoints")) {
      std::string at = path + ":" + std::to_string(en->source().begin.line) + ": field 'topology.endpoints'";
      if (!en->is_array() || en->as_array()->empty()) {
        return Status::BadInput(at + ": expected an array of \"redis://host:port\" strings");
      }
      o->endpoints.clear();
      for (const auto& e : *en->as_array()) {
        std::string host, error;
        int port = 0;
        if (!e.is_string()) return Status::BadInput(at + ": expected an array of \"redis://host:port\" strings");
        std::string url = *e.value<std::string>();
        if (!ParseRedisUrl(url, &host, &port, &error)) return Status::BadInput(at + ": " + error);
        o->endpoints.push_back(url);
      }
      o->endpoints_origin = path + ":" + std::to_string(en->source().begin.line) + ": field 'topology.endpoints'";
    }
    bool failover = false;
    for (const auto& f : o->faults) failover = failover || f.id == "failover";
    auto bad = [&](const char* key, const std::string& what) {
      return Status::BadInput(path + ":" + std::to_string(t->get(key)->source().begin.line) +
                              ": field 'topology." + key + "': " + what);
    };
    if (replicas >= 0 && replicas != (failover ? 1 : 0)) {
      return bad("replicas", failover ? "the failover fault runs exactly 1 replica of n1"
                                      : "replicas exist only with the failover fault");
    }
    if (sentinels >= 0 && sentinels != (failover ? 3 : 0)) {
      return bad("sentinels", failover ? "the failover fault runs exactly 3 sentinels"
                                       : "sentinels exist only with the failover fault");
    }
    if (failover && nodes > 1) return bad("nodes", "failover needs a single lock node (n1)");
    o->nodes = static_cast<int>(nodes);
  }
  // A scenario without its lock would run the defaults without a word. Checked last, so
  // that a misspelt field is named first.
  const toml::node* lock_node = root.get("lock");
  if (lock_node == nullptr) {
    return Status::BadInput(path + ":1: field 'lock': missing: a scenario needs [lock] with its id "
                            "(see `locklab list`)");
  }
  if (lock_node->as_table()->get("id") == nullptr) {
    return Status::BadInput(at(*lock_node) + ": field 'lock.id': missing (see `locklab list`)");
  }
  if (o->name.empty()) o->name = LockDisplayName(o->lock) + "--" + FaultIds(*o);
  return Status::Ok();
}

}  // namespace

std::string CheckExpectations(const RunOptions& o, const nlohmann::ordered_json& r) {
  std::string out;
  std::string verdict = r.value("verdict", std::string("unknown"));
  if (!o.expect_verdict.empty() && verdict != o.expect_verdict) {
    out = "expected verdict " + o.expect_verdict + ", got " + verdict;
  }
  if (!o.expect_stuck.empty()) {
    bool stuck = r.contains("liveness") && r["liveness"].value("stuck", false);
    if ((o.expect_stuck == "yes") != stuck) {
      out += std::string(out.empty() ? "" : "; ") + "expected stuck " + o.expect_stuck + ", got " +
             (stuck ? "yes" : "no");
    }
  }
  if (!o.expect_resource.empty()) {
    std::string got = r.value("resource_verdict", std::string("unknown"));
    if (got != o.expect_resource) {
      out += std::string(out.empty() ? "" : "; ") + "expected resource " + o.expect_resource +
             ", got " + got;
    }
  }
  if (!out.empty() && !o.expect_origin.empty()) out += " (expectation at " + o.expect_origin + ")";
  return out;
}

}  // namespace locklab::harness
