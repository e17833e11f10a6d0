// ScenarioToToml (run_options.h): a trial written back as the scenario file that replays it.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "harness/scenario/run_options.h"

namespace locklab::harness {

// A float as TOML writes one, exactly: the shortest form that reads back as the same double,
// with a decimal point (TOML reads "1" as an integer; the reader takes both).
static std::string Number(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

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
  if (HasExpectations(o)) {
    t << "[expect]\n";
    if (o.expect_verdict) t << "verdict = " << q(std::string(checker::VerdictName(*o.expect_verdict))) << "\n";
    if (o.expect_stuck) t << "stuck = " << q(*o.expect_stuck ? "yes" : "no") << "\n";
    if (o.expect_resource) t << "resource = " << q(std::string(checker::VerdictName(*o.expect_resource))) << "\n";
    // As given (a rate is not turned into its K): the replay derives the same K from it.
    if (o.expect_violated_at_least > 0) t << "violated_at_least = " << o.expect_violated_at_least << "\n";
    if (o.expect_violated_rate > 0) t << "violated_rate = " << Number(o.expect_violated_rate) << "\n";
    if (o.expect_confidence > 0) t << "confidence = " << Number(o.expect_confidence) << "\n";
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
  t << "acquire_timeout_ms = " << o.acquire_timeout.count() << "\n";
  t << "renew_every_ms = " << o.renew_every.count() << "\n";
  t << "validity = " << q(o.validity) << "\n\n";
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

}  // namespace locklab::harness
