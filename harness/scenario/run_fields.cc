#include "locks/lease_ttl.h"
#include "harness/scenario/run_fields.h"

#include <cstdio>

#include "base/numbers.h"

namespace locklab::harness {
namespace {

using Type = RunField::Type;
using F = faults::FaultOptions;

// Day-long runs are the most anyone asked for; an hour bounds what a lock holds or waits.
constexpr int64_t kDayMs = 86400000;
constexpr int64_t kHourMs = 3600000;

#define SET_RUN(expr) [](RunOptions& o, F&, int64_t v) { expr; }
#define SET_FAULT(expr) [](RunOptions&, F& f, int64_t v) { expr; }
#define GET_RUN(expr) [](const RunOptions& o, const F&) -> int64_t { return expr; }
#define GET_FAULT(expr) [](const RunOptions&, const F& f) -> int64_t { return expr; }
#define SET_STRING(expr) [](RunOptions& o, F&, const std::string& v) { expr; }
#define GET_STRING(expr) [](const RunOptions& o) -> std::string { return expr; }
constexpr bool kClient = true;  // the `client` column: each client process needs it

const RunField kFields[] = {
    {FieldSection::kTop, "name", "", "--name", "", Type::kString, 0, 0, nullptr,
     SET_STRING(o.name = v), nullptr,
     "the scenario's name, in the run directory's name (default LOCK--FAULT)", "NAME",
     GET_STRING(o.name)},
    {FieldSection::kTop, "seed", "", "--seed", "", Type::kInteger, 0, kInt64Max,
     SET_RUN(o.seed = static_cast<uint64_t>(v)), nullptr, GET_RUN(static_cast<int64_t>(o.seed)),
     "the run's seed: the same seed replays the same schedule; 0: drawn and recorded"},
    {FieldSection::kTop, "duration_ms", "", "--duration", "--duration-ms", Type::kInteger, 100,
     kDayMs, SET_RUN(o.duration = Millis(v)), nullptr, GET_RUN(o.duration.count()),
     "how long the clients run"},
    {FieldSection::kTop, "stuck_after_ms", "", "", "", Type::kInteger, 0, kDayMs,
     SET_RUN(o.stuck_after = Millis(v)), nullptr, GET_RUN(o.stuck_after.count()), ""},
    {FieldSection::kTop, "trials", "", "", "", Type::kInteger, 1, 1000,
     SET_RUN(o.trials = static_cast<int>(v)), nullptr, GET_RUN(o.trials), ""},

    {FieldSection::kLock, "ttl_ms", "", "--ttl", "", Type::kInteger,
     locks::kMinLeaseTtl.count(), locks::kMaxLeaseTtl.count(),
     SET_RUN(o.ttl = Millis(v)), nullptr, GET_RUN(o.ttl.count()), "the lock's lease (key lifetime)",
     "", nullptr, kClient},
    {FieldSection::kLock, "retry_delay_ms", "", "", "", Type::kInteger, 0, 60000,
     SET_RUN(o.retry_delay = Millis(v)), nullptr, GET_RUN(o.retry_delay.count()), "", "", nullptr,
     kClient},
    {FieldSection::kLock, "command_timeout_ms", "", "--timeout", "", Type::kInteger, 1, 60000,
     SET_RUN(o.command_timeout = Millis(v)), nullptr, GET_RUN(o.command_timeout.count()),
     "each command's timeout (an expired one is an unknown outcome)", "", nullptr, kClient},
    // 0: the lock's own default (5 for redlock, 1 for the single-node locks).
    {FieldSection::kLock, "nodes", "", "--nodes", "", Type::kInteger, 0, 15,
     SET_RUN(o.nodes = static_cast<int>(v)), nullptr, GET_RUN(o.nodes),
     "lock nodes; 0: the lock's own (5 for redlock, 1 for the single-node locks)"},

    {FieldSection::kWorkload, "clients", "", "--clients", "", Type::kInteger, 1, 64,
     SET_RUN(o.clients = static_cast<int>(v)), nullptr, GET_RUN(o.clients),
     "client processes contending for the lock"},
    {FieldSection::kWorkload, "keys", "", "--keys", "", Type::kInteger, 1, 1000,
     SET_RUN(o.keys = static_cast<int>(v)), nullptr, GET_RUN(o.keys), "lock keys the clients share",
     "", nullptr, kClient},
    {FieldSection::kWorkload, "hold_ms", "", "--hold", "", Type::kInteger, 0, kHourMs,
     SET_RUN(o.hold = Millis(v)), nullptr, GET_RUN(o.hold.count()),
     "time a client holds the lock around its read-modify-write", "", nullptr, kClient},
    {FieldSection::kWorkload, "think_ms", "", "--think", "", Type::kInteger, 0, kHourMs,
     SET_RUN(o.think = Millis(v)), nullptr, GET_RUN(o.think.count()),
     "time between a release and the next acquire", "", nullptr, kClient},
    {FieldSection::kWorkload, "acquire_timeout_ms", "", "--acquire-timeout", "", Type::kInteger,
     1, kHourMs, SET_RUN(o.acquire_timeout = Millis(v)), nullptr,
     GET_RUN(o.acquire_timeout.count()), "how long a client retries one acquire", "", nullptr,
     kClient},
    {FieldSection::kWorkload, "renew_every_ms", "", "--renew-every", "", Type::kInteger, 0,
     kHourMs, SET_RUN(o.renew_every = Millis(v)), nullptr, GET_RUN(o.renew_every.count()),
     "a holder renews its lease this often; 0: never", "", nullptr, kClient},
    // "ignore" | "honour": checked by ValidateRunOptions (CheckWorkloadValidity).
    {FieldSection::kWorkload, "validity", "", "--validity", "", Type::kString, 0, 0, nullptr,
     SET_STRING(o.validity = v), nullptr,
     "honour: a client stops using an expired lease; ignore: it runs its critical section to "
     "the end (default ignore)",
     "honour|ignore", GET_STRING(o.validity), kClient},

    {FieldSection::kTopology, "endpoint_control", "", "--endpoint-control", "", Type::kString, 0,
     0, nullptr, SET_STRING(o.endpoint_control = v), nullptr,
     "with --endpoints: the nodes' control directory (docker/node-entrypoint.sh), so node "
     "faults run too",
     "DIR", GET_STRING(o.endpoint_control)},

    {FieldSection::kFault, "first_at_ms", "", "--first-at", "", Type::kInteger, 0, kDayMs,
     SET_FAULT(f.first_at = Millis(v)), nullptr, GET_FAULT(f.first_at.count()),
     "the first window opens this long after the start"},
    {FieldSection::kFault, "duration_ms", "pause_ms", "--pause", "--fault-duration",
     Type::kInteger, 1, kDayMs, SET_FAULT(f.duration = Millis(v)), nullptr,
     GET_FAULT(f.duration.count()), "how long each window lasts (the pause, the partition...)"},
    {FieldSection::kFault, "interval_ms", "", "--interval", "", Type::kInteger, 0, kDayMs,
     SET_FAULT(f.interval = Millis(v)), nullptr, GET_FAULT(f.interval.count()),
     "quiet time between one window's end and the next"},
    {FieldSection::kFault, "windows", "", "--windows", "", Type::kInteger, 0, 100000,
     SET_FAULT(f.windows = static_cast<int>(v)), nullptr, GET_FAULT(f.windows),
     "windows at most; 0: as many as fit"},
};

#undef SET_RUN
#undef SET_FAULT
#undef GET_RUN
#undef GET_FAULT
#undef SET_STRING
#undef GET_STRING

}  // namespace

std::span<const RunField> RunFields() { return kFields; }

const RunField* FindField(FieldSection section, std::string_view key) {
  for (const RunField& f : kFields) {
    if (f.section == section && f.key == key) return &f;
  }
  return nullptr;
}

const RunField* FindFlag(std::string_view flag) {
  if (flag.empty()) return nullptr;
  for (const RunField& f : kFields) {
    if (f.flag == flag || f.flag_alias == flag) return &f;
  }
  return nullptr;
}

std::string FieldPath(const RunField& field) {
  std::string_view section;
  switch (field.section) {
    case FieldSection::kTop: break;
    case FieldSection::kLock: section = "lock"; break;
    case FieldSection::kWorkload: section = "workload"; break;
    case FieldSection::kTopology: section = "topology"; break;
    case FieldSection::kFault: section = "faults"; break;
  }
  return section.empty() ? std::string(field.key) : std::string(section) + "." + std::string(field.key);
}

Status ParseFieldText(const RunField& field, const std::string& text, RunOptions* o,
                      faults::FaultOptions* fault) {
  faults::FaultOptions unused;
  faults::FaultOptions& f = fault != nullptr ? *fault : unused;
  if (field.type == RunField::Type::kString) {
    field.set_string(*o, f, text);
    return Status::Ok();
  }
  int64_t n = 0;
  if (field.IsDuration()) {
    Millis d{0};
    if (Status s = ParseDuration(text, Millis(field.lo), Millis(field.hi), &d); !s.ok()) return s;
    n = d.count();
  } else if (Status s = ParseInt(text, field.lo, field.hi, &n); !s.ok()) {
    return s;
  }
  field.set_integer(*o, f, n);
  return Status::Ok();
}

std::string FormatFieldText(const RunField& field, const RunOptions& o) {
  if (field.type == RunField::Type::kString) return field.get_string ? field.get_string(o) : "";
  return field.get_integer ? std::to_string(field.get_integer(o, faults::FaultOptions())) : "";
}

std::vector<std::string> ClientFieldArgs(const RunOptions& o) {
  std::vector<std::string> args;
  for (const RunField& f : kFields) {
    if (!f.client) continue;
    args.push_back("--" + FieldPath(f));
    args.push_back(FormatFieldText(f, o));
  }
  return args;
}

const RunField* FindClientFlag(std::string_view flag) {
  if (!flag.starts_with("--")) return nullptr;
  for (const RunField& f : kFields) {
    if (f.client && flag.substr(2) == FieldPath(f)) return &f;
  }
  return nullptr;
}

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

}  // namespace locklab::harness
