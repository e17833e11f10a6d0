#include "harness/matrix/matrix_scaling.h"

#include <algorithm>
#include <cstdio>

#include "base/numbers.h"

namespace locklab::harness {

bool UsesLabTtl(const locks::LockInfo& info) { return info.uses_lab_ttl; }

namespace {

// v x num / den rounded to the nearest millisecond; a time that was > 0 stays >= 1 ms (a
// zero think time stays zero, a hold does not vanish).
Millis Scale(Millis v, Millis num, Millis den) {
  if (v <= Millis(0)) return v;
  int64_t r = (v.count() * num.count() + den.count() / 2) / den.count();
  return Millis(std::max<int64_t>(r, 1));
}

std::string Seconds(Millis v) {
  char buf[32];
  if (v.count() % 1000 == 0) {
    snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v.count() / 1000));
  } else {
    snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(v.count()) / 1000.0);
  }
  return buf;
}

bool EndsWithMs(const std::string& name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, "_ms") == 0;
}

}  // namespace

bool ScaleToTtl(const RunOptions& preset, Millis ttl, RunOptions* out, std::string* why_not) {
  RunOptions o = preset;
  const Millis from = preset.ttl;
  if (ttl == from || from <= Millis(0) || ttl <= Millis(0)) {
    *out = o;
    return true;
  }
  o.ttl = ttl;
  // A run is at least 100 ms (the duration_ms field's lower bound).
  o.duration = std::max(Scale(preset.duration, ttl, from), Millis(100));
  o.hold = Scale(preset.hold, ttl, from);
  o.think = Scale(preset.think, ttl, from);
  o.acquire_timeout = Scale(preset.acquire_timeout, ttl, from);
  for (auto& f : o.faults) {
    f.first_at = Scale(f.first_at, ttl, from);
    f.duration = Scale(f.duration, ttl, from);
    f.interval = Scale(f.interval, ttl, from);
    for (auto& [name, value] : f.params) {
      if (!EndsWithMs(name)) continue;
      if (auto ms = ParseInt(value, 0, kInt64Max / (ttl.count() + 1))) {
        value = std::to_string(Scale(Millis(*ms), ttl, from).count());
      }
    }
  }
  char factor[32];
  snprintf(factor, sizeof(factor), "%.3g", static_cast<double>(ttl.count()) / static_cast<double>(from.count()));
  if (o.duration > kMaxScaledRun) {
    *why_not = "needs a " + Seconds(o.duration) + " s run (the preset's times x " + factor +
               " for TTL " + std::to_string(ttl.count()) + " ms), runs are capped at " +
               Seconds(kMaxScaledRun) + " s";
    return false;
  }
  // A lock command is not scaled (the network's time): an acquire that could not wait for two
  // of them would end unknown before the lock answered, whatever the lock did.
  if (preset.acquire_timeout > Millis(0) && o.acquire_timeout < 2 * o.command_timeout) {
    *why_not = "its acquire timeout would be " + std::to_string(o.acquire_timeout.count()) +
               " ms (the preset's times x " + factor + " for TTL " + std::to_string(ttl.count()) +
               " ms, from its own TTL " + std::to_string(from.count()) + " ms), below two command timeouts (2 x " +
               std::to_string(o.command_timeout.count()) + " ms): no room for a lock command";
    return false;
  }
  *out = std::move(o);
  return true;
}

}  // namespace locklab::harness
