#include "harness/hunt/hunt_plain.h"

#include <algorithm>

#include "faults/fault_draw.h"

namespace locklab::harness {
std::vector<PlainWorkload> PlainPass(const SearchSpace& space, bool ignore_validity_past_ttl) {
  // Longest first (up to 6 s each, contention 3 s at most): with --jobs trials at once, the
  // short ones fill the slots the long ones leave, and the pass ends soonest.
  std::vector<PlainWorkload> pass;
  // Once at each TTL the space draws: a lease's last milliseconds are where a TTL's rounding
  // shows (whole seconds look right at 500 ms and break at 1250 ms).
  for (size_t i = 0; i < std::max<size_t>(1, space.ttls.size()) && space.validity != "ignore"; ++i) {
    pass.push_back(PlainWorkload::kToValidity);
  }
  // With --validity fixed, the long holds run once, with it.
  if (space.validity != "honour" && ignore_validity_past_ttl) pass.push_back(PlainWorkload::kLongHoldsIgnore);
  if (space.validity != "ignore") pass.push_back(PlainWorkload::kLongHoldsHonour);
  pass.push_back(PlainWorkload::kContentionOneKey);
  pass.push_back(PlainWorkload::kContentionKeys);
  return pass;
}

const char* PlainWorkloadName(PlainWorkload w) {
  switch (w) {
    case PlainWorkload::kContentionOneKey: return "plain contention on one key";
    case PlainWorkload::kContentionKeys: return "plain contention on three keys";
    case PlainWorkload::kLongHoldsIgnore: return "critical sections longer than the TTL";
    case PlainWorkload::kLongHoldsHonour: return "critical sections longer than the TTL, validity honoured";
    case PlainWorkload::kToValidity: return "work to the end of each lease's validity";
  }
  return "plain";
}

RunOptions DrawPlain(const SearchSpace& s, PlainWorkload w, size_t nth, Rng& rng, const std::string& name) {
  RunOptions o;
  o.name = name;
  o.seed = DrawSeed(rng);
  o.lock = s.lock;
  o.knobs = s.knobs;
  o.driver_args = s.driver_args;
  o.ttl = s.ttls.empty() ? s.ttl : s.ttls[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(s.ttls.size()) - 1))];
  if (w == PlainWorkload::kToValidity && !s.ttls.empty()) o.ttl = s.ttls[nth % s.ttls.size()];
  const Millis ttl = o.ttl;
  o.acquire_timeout = faults::TtlTimes(ttl, 4, Millis(100));
  o.validity = s.validity.empty() ? "ignore" : s.validity;
  switch (w) {
    case PlainWorkload::kContentionOneKey:
    case PlainWorkload::kContentionKeys:
      o.clients = static_cast<int>(rng.Uniform(std::max(s.min_clients, std::min(4, s.max_clients)), s.max_clients));
      o.keys = w == PlainWorkload::kContentionKeys ? 3 : 1;
      o.hold = faults::TtlTimes(ttl, 0.5 * rng.Unit(), Millis(1));
      o.think = faults::TtlTimes(ttl, 0.5 * rng.Unit(), Millis(0));
      break;
    case PlainWorkload::kLongHoldsIgnore:
    case PlainWorkload::kLongHoldsHonour:
      o.clients = std::clamp(3, s.min_clients, s.max_clients);
      o.hold = faults::TtlTimes(ttl, 1.5 + 0.5 * rng.Unit(), Millis(1));
      o.think = faults::TtlTimes(ttl, 0.3 * rng.Unit(), Millis(0));
      o.validity = w == PlainWorkload::kLongHoldsHonour ? "honour" : "ignore";
      if (!s.validity.empty()) o.validity = s.validity;
      // A lock that renews on request is renewed as an application would (a third of the
      // TTL); a driver whose hello says it renews is renewed by its client anyway.
      if (s.can_renew) o.renew_every = faults::TtlTimes(ttl, 1.0 / 3, Millis(1));
      break;
    case PlainWorkload::kToValidity:
      o.clients = std::clamp(3, s.min_clients, s.max_clients);
      o.hold = faults::TtlTimes(ttl, 1.0 + 0.5 * rng.Unit(), Millis(1));
      o.think = faults::TtlTimes(ttl, 0.2 * rng.Unit(), Millis(0));
      o.validity = "honour";
      break;
  }
  // A few turns of every client: long enough for a handover past a lease to be seen.
  const Millis turn = o.hold + o.think;
  // Contention shows within a few handovers; a hold past the TTL at the first handover (two
  // holds and a TTL cover it); a lease's end needs a turn of every client.
  const bool contention = w == PlainWorkload::kContentionOneKey || w == PlainWorkload::kContentionKeys;
  const bool long_holds = w == PlainWorkload::kLongHoldsIgnore || w == PlainWorkload::kLongHoldsHonour;
  const Millis most = std::max(Millis(1500), std::min(s.max_duration, contention ? Millis(3000) : Millis(6000)));
  const Millis want = contention   ? turn * o.clients / std::max(1, o.keys) + ttl
                      : long_holds ? 2 * o.hold + ttl
                                   : turn * o.clients / std::max(1, o.keys) + 3 * ttl;
  o.duration = std::clamp(want, Millis(1500), most);
  return o;
}

}  // namespace locklab::harness
