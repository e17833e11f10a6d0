#include "harness/run_fields.h"

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

const RunField kFields[] = {
    {FieldSection::kTop, "name", "", "--name", "", "", Type::kString, 0, 0, nullptr,
     [](RunOptions& o, F&, const std::string& v) { o.name = v; }},
    {FieldSection::kTop, "seed", "", "--seed", "", "", Type::kInteger, 0, kInt64Max,
     SET_RUN(o.seed = static_cast<uint64_t>(v)), nullptr},
    {FieldSection::kTop, "duration_ms", "", "--duration-ms", "", "--duration", Type::kInteger, 100,
     kDayMs, SET_RUN(o.duration = Millis(v)), nullptr},
    {FieldSection::kTop, "stuck_after_ms", "", "", "", "", Type::kInteger, 0, kDayMs,
     SET_RUN(o.stuck_after = Millis(v)), nullptr},
    {FieldSection::kTop, "trials", "", "", "", "", Type::kInteger, 1, 1000,
     SET_RUN(o.trials = static_cast<int>(v)), nullptr},

    {FieldSection::kLock, "ttl_ms", "", "--ttl", "", "", Type::kInteger, 1, kHourMs,
     SET_RUN(o.ttl = Millis(v)), nullptr},
    {FieldSection::kLock, "retry_delay_ms", "", "", "", "", Type::kInteger, 0, 60000,
     SET_RUN(o.retry_delay = Millis(v)), nullptr},
    {FieldSection::kLock, "command_timeout_ms", "", "--timeout", "", "", Type::kInteger, 1, 60000,
     SET_RUN(o.command_timeout = Millis(v)), nullptr},
    // 0: the lock's own default (5 for redlock, 1 for the single-node locks).
    {FieldSection::kLock, "nodes", "", "--nodes", "", "", Type::kInteger, 0, 15,
     SET_RUN(o.nodes = static_cast<int>(v)), nullptr},

    {FieldSection::kWorkload, "clients", "", "--clients", "", "", Type::kInteger, 1, 64,
     SET_RUN(o.clients = static_cast<int>(v)), nullptr},
    {FieldSection::kWorkload, "keys", "", "--keys", "", "", Type::kInteger, 1, 1000,
     SET_RUN(o.keys = static_cast<int>(v)), nullptr},
    {FieldSection::kWorkload, "hold_ms", "", "--hold", "", "", Type::kInteger, 0, kHourMs,
     SET_RUN(o.hold = Millis(v)), nullptr},
    {FieldSection::kWorkload, "think_ms", "", "--think", "", "", Type::kInteger, 0, kHourMs,
     SET_RUN(o.think = Millis(v)), nullptr},
    {FieldSection::kWorkload, "acquire_timeout_ms", "", "--acquire-timeout", "", "", Type::kInteger,
     1, kHourMs, SET_RUN(o.acquire_timeout = Millis(v)), nullptr},
    {FieldSection::kWorkload, "renew_every_ms", "", "--renew-every", "", "", Type::kInteger, 0,
     kHourMs, SET_RUN(o.renew_every = Millis(v)), nullptr},
    // "ignore" | "honour": checked by ValidateRunOptions (CheckWorkloadValidity).
    {FieldSection::kWorkload, "validity", "", "--validity", "", "", Type::kString, 0, 0, nullptr,
     [](RunOptions& o, F&, const std::string& v) { o.validity = v; }},

    {FieldSection::kTopology, "endpoint_control", "", "--endpoint-control", "", "", Type::kString, 0,
     0, nullptr, [](RunOptions& o, F&, const std::string& v) { o.endpoint_control = v; }},

    {FieldSection::kFault, "first_at_ms", "", "--first-at", "", "", Type::kInteger, 0, kDayMs,
     SET_FAULT(f.first_at = Millis(v)), nullptr},
    {FieldSection::kFault, "duration_ms", "pause_ms", "--pause", "--fault-duration", "",
     Type::kInteger, 1, kDayMs, SET_FAULT(f.duration = Millis(v)), nullptr},
    {FieldSection::kFault, "interval_ms", "", "--interval", "", "", Type::kInteger, 0, kDayMs,
     SET_FAULT(f.interval = Millis(v)), nullptr},
    {FieldSection::kFault, "windows", "", "--windows", "", "", Type::kInteger, 0, 100000,
     SET_FAULT(f.windows = static_cast<int>(v)), nullptr},
};

#undef SET_RUN
#undef SET_FAULT

}  // namespace

std::span<const RunField> RunFields() { return kFields; }

const RunField* FindField(FieldSection section, std::string_view key) {
  for (const RunField& f : kFields) {
    if (f.section == section && f.key == key) return &f;
  }
  return nullptr;
}

const RunField* FindFlag(std::string_view flag, bool* in_seconds) {
  *in_seconds = false;
  if (flag.empty()) return nullptr;
  for (const RunField& f : kFields) {
    if (f.flag == flag || f.flag_alias == flag) return &f;
    if (f.seconds_flag == flag) {
      *in_seconds = true;
      return &f;
    }
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
