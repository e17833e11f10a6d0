#include "checker/trial_signals.h"

#include <map>
#include <optional>

#include "checker/trial_outcome.h"

namespace locklab::checker {
namespace {

// A lease a client holds now: when its validity runs out (by the history's clock).
struct Lease {
  std::optional<Nanos> valid_until;  // none when the lock reported no validity
  Nanos validity{0};
};

std::optional<Nanos> ValidityOf(const nlohmann::json& value) {
  if (!value.is_object()) return std::nullopt;
  auto it = value.find("validity_ms");
  if (it == value.end() || !it->is_number() || it->get<double>() <= 0) return std::nullopt;
  return std::chrono::duration_cast<Nanos>(std::chrono::duration<double, std::milli>(it->get<double>()));
}

const char* OutcomeWord(checker::EventType t) {
  switch (t) {
    case checker::EventType::kOk: return "ok";
    case checker::EventType::kFail: return "fail";
    case checker::EventType::kInfo: return "info";
    case checker::EventType::kInvoke: break;
  }
  return "invoke";
}

// AFL's hit-count buckets: 1, 2, 3, 4-7, 8+ (0 is no feature at all).
std::string Bucket(int n) {
  if (n <= 3) return std::to_string(n);
  return n < 8 ? "4-7" : "8+";
}

}  // namespace

TrialSignals SignalsOf(const checker::History& history, double longest_wait_ms,
                       Millis stuck_after) {
  TrialSignals s;
  std::map<int64_t, Lease> held;  // client -> the lease it holds now
  for (const checker::Event& e : checker::SortedByTime(history)) {
    if (e.process < 0) continue;  // the nemesis and the harness
    const bool completion = e.type != checker::EventType::kInvoke;
    if (completion) s.outcome_kinds.insert(e.f + ":" + OutcomeWord(e.type));
    if (e.type == checker::EventType::kInfo) ++s.unknown_outcomes;
    auto lease = held.find(e.process);
    if (e.f == "acquire" && e.type == checker::EventType::kInvoke && lease != held.end()) {
      held.erase(lease);  // a new acquire ends the hold (as the checker's hold intervals do)
    } else if (e.f == "acquire" && e.type == checker::EventType::kOk) {
      ++s.holds;
      Lease l;
      if (auto v = ValidityOf(e.value)) l = {e.time + *v, *v};
      held[e.process] = l;
    } else if (e.f == "release" && e.type == checker::EventType::kInvoke && lease != held.end()) {
      if (lease->second.valid_until && e.time > *lease->second.valid_until) ++s.holds_past_validity;
      held.erase(lease);
    } else if (e.f == "renew" && completion) {
      if (e.type == checker::EventType::kFail) ++s.renew_failures;
      if (e.type == checker::EventType::kInfo) ++s.renew_unknown;
      if (e.type == checker::EventType::kOk && lease != held.end()) {
        Lease& l = lease->second;
        if (l.valid_until && e.time > *l.valid_until) ++s.renew_late;
        std::optional<Nanos> v = ValidityOf(e.value);
        if (!v && l.valid_until) v = l.validity;  // a renewal that names no validity grants the same
        if (v) l = {e.time + *v, *v};
      }
    } else if (e.f == "write" && e.type == checker::EventType::kOk && lease != held.end() &&
               lease->second.valid_until) {
      const Nanos margin = *lease->second.valid_until - e.time;
      if (margin < Nanos(0)) {
        ++s.writes_after_lease_end;
      } else if (margin < lease->second.validity / 10) {
        ++s.writes_near_lease_end;
      }
    }
  }
  // A hold still open when the history ended counts as past its validity only when the
  // history went on past it: the last event's time is the end.
  if (!history.empty()) {
    Nanos last = Nanos::min();
    for (const checker::Event& e : history) last = std::max(last, e.time);
    for (const auto& [process, lease] : held) {
      if (lease.valid_until && last > *lease.valid_until) ++s.holds_past_validity;
    }
  }
  if (longest_wait_ms >= 0 && stuck_after > Millis(0)) {
    s.wait_fraction = longest_wait_ms / static_cast<double>(stuck_after.count());
  }
  return s;
}

Status ReadTrialSignals(const std::string& run_dir, const nlohmann::ordered_json& results, TrialSignals* out) {
  checker::History history;
  Status st = checker::ReadJsonlHistory(run_dir + "/history.jsonl", &history, /*allow_torn_tail=*/true);
  if (!st.ok()) return st;
  double longest_wait_ms = -1;
  Millis stuck_after{0};
  if (results.is_object()) {
    try {
      const checker::TrialOutcome outcome = checker::TrialOutcome::FromJson(results);
      longest_wait_ms = outcome.longest_wait_ms.value_or(-1);
      stuck_after = Millis(outcome.stuck_after_ms);
    } catch (const nlohmann::json::exception&) {
      // A malformed results.json: the history's own signals still count.
    }
  }
  *out = SignalsOf(history, longest_wait_ms, stuck_after);
  return Status::Ok();
}

std::set<std::string> Features(const TrialSignals& s) {
  std::set<std::string> f;
  for (const std::string& k : s.outcome_kinds) f.insert("kind:" + k);
  const std::pair<const char*, int> counted[] = {
      {"holds_past_validity", s.holds_past_validity},
      {"writes_near_lease_end", s.writes_near_lease_end},
      {"writes_after_lease_end", s.writes_after_lease_end},
      {"renew_failures", s.renew_failures},
      {"renew_unknown", s.renew_unknown},
      {"renew_late", s.renew_late},
      {"unknown_outcomes", s.unknown_outcomes},
  };
  for (const auto& [name, n] : counted) {
    if (n > 0) f.insert(std::string(name) + ":" + Bucket(n));
  }
  // Quarters of the liveness bound from a half up: a wait near the bound is news.
  for (double q : {0.5, 0.75, 0.9}) {
    if (s.wait_fraction >= q) f.insert("wait:" + std::to_string(static_cast<int>(q * 100)));
  }
  return f;
}

double Closeness(const TrialSignals& s) {
  return 8.0 * s.writes_after_lease_end + 4.0 * s.holds_past_validity +
         2.0 * (s.writes_near_lease_end + s.renew_late + s.renew_failures + s.renew_unknown) +
         1.0 * s.unknown_outcomes + 2.0 * std::max(0.0, s.wait_fraction - 0.5);
}

}  // namespace locklab::checker
