// The scenario file reader: LoadScenarioFile and ParseScenario (run_options.h). Plain
// numbers and strings come from the field table (run_fields.h), the [[faults]] tables from
// scenario_faults.cc; this file reads the tables with more to them (lock id and knobs,
// workload id, topology, expectations).
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "checker/verdict.h"
#include "harness/scenario/expect_rate.h"
#include "harness/scenario/run_fields.h"
#include "harness/scenario/run_options.h"
#include "harness/scenario/scenario_faults.h"
#include "harness/scenario/toml_fields.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

namespace locklab::harness {
namespace {

// Every table field of `section` (run_fields.h) from `r`'s table.
Status ReadFields(TableReader& r, FieldSection section, RunOptions* o) {
  for (const RunField& field : RunFields()) {
    if (field.section != section) continue;
    if (Status s = r.Field(field, o, nullptr); !s.ok()) return s;
  }
  return Status::Ok();
}

// A number (integer or float) in (lo, hi], or [lo, hi) with `open_hi`, else the field's error.
Status ReadFraction(TableReader& r, const toml::table& t, const char* key, bool open_hi, double* out) {
  r.Allow(key);
  const toml::node* n = t.get(key);
  if (n == nullptr) return Status::Ok();
  std::optional<double> v = n->is_integer() ? std::optional<double>(static_cast<double>(*n->value<int64_t>()))
                                            : n->value_exact<double>();
  if (!v || !(*v > 0.0) || (open_hi ? !(*v < 1.0) : !(*v <= 1.0))) {
    std::ostringstream got;  // as TOML writes it, cut short (a refused table can be long)
    if (const auto* text = n->as_string()) {
      got << text->get();
    } else {
      n->visit([&got](const auto& value) { got << value; });
    }
    std::string shown = got.str().substr(0, 40);
    return r.Error(*n, key, std::string("expected a number in ") + (open_hi ? "(0, 1)" : "(0, 1]") +
                                ", got '" + shown + "'");
  }
  *out = *v;
  return Status::Ok();
}

// The statistical keys (run_options.h): violated_at_least = K, or violated_rate with an
// optional confidence, each checked against the file's trials.
Status ReadStatisticalExpect(const toml::table& t, TableReader& r, RunOptions* o) {
  int64_t at_least = 0;
  Status s;
  if (!(s = r.Int("violated_at_least", 1, 1000, &at_least)).ok()) return s;
  if (!(s = ReadFraction(r, t, "violated_rate", false, &o->expect_violated_rate)).ok()) return s;
  if (!(s = ReadFraction(r, t, "confidence", true, &o->expect_confidence)).ok()) return s;
  o->expect_violated_at_least = static_cast<int>(at_least);
  const toml::node* k = t.get("violated_at_least");
  const toml::node* rate = t.get("violated_rate");
  if (k && rate) return r.Error(*rate, "violated_rate", "give violated_at_least or violated_rate, not both");
  if (const toml::node* c = t.get("confidence"); c && !rate) {
    return r.Error(*c, "confidence", "only with violated_rate");
  }
  if (!k && !rate) return Status::Ok();
  const toml::node& stat = k ? *k : *rate;
  const char* key = k ? "violated_at_least" : "violated_rate";
  if (o->expect_verdict && *o->expect_verdict != checker::Verdict::kViolated) {
    return r.Error(*t.get("verdict"), "verdict",
                   std::string(key) + " counts failing trials: verdict must be " +
                       std::string(checker::VerdictName(checker::Verdict::kViolated)) + " or left out");
  }
  if (o->expect_stuck == false && !o->expect_verdict) {
    return r.Error(*t.get("stuck"), "stuck", std::string(key) + " counts failing trials: stuck = \"no\" fails none");
  }
  if (k && at_least > o->trials) {
    return r.Error(*k, "violated_at_least",
                   std::to_string(at_least) + " of " + std::to_string(o->trials) +
                       " trials: more than the scenario runs (trials = " + std::to_string(o->trials) + ")");
  }
  if (rate && RequiredFailures(*o) < 1) {
    const double c = o->expect_confidence > 0 ? o->expect_confidence : kDefaultExpectConfidence;
    std::ostringstream why;
    why << "at rate " << o->expect_violated_rate << ", " << o->trials << " trial" << (o->trials == 1 ? "" : "s")
        << " fail at least once with probability " << BinomialAtLeast(o->trials, o->expect_violated_rate, 1)
        << ", below the confidence " << c << ": raise trials";
    return r.Error(stat, key, why.str());
  }
  return Status::Ok();
}

Status ReadExpect(const std::string& path, const toml::table& t, RunOptions* o) {
  TableReader r(path, t, "expect.");
  Status s;
  std::string verdict, stuck, resource;
  if (!(s = r.Str("verdict", &verdict)).ok()) return s;
  if (!(s = r.Str("stuck", &stuck)).ok()) return s;
  if (!(s = r.Str("resource", &resource)).ok()) return s;
  for (const char* k : {"violated_at_least", "violated_rate", "confidence"}) r.Allow(k);
  if (!(s = r.RejectUnknown()).ok()) return s;
  if (t.get("verdict") != nullptr && !(o->expect_verdict = checker::ParseVerdict(verdict))) {
    return r.Error(*t.get("verdict"), "verdict", "expected " + checker::VerdictWordList());
  }
  if (t.get("stuck") != nullptr) {
    if (stuck != "yes" && stuck != "no") return r.Error(*t.get("stuck"), "stuck", "expected yes or no");
    o->expect_stuck = stuck == "yes";
  }
  if (t.get("resource") != nullptr) {
    o->expect_resource = checker::ParseVerdict(resource);
    if (!o->expect_resource || *o->expect_resource == checker::Verdict::kUnknown) {
      return r.Error(*t.get("resource"), "resource",
                     "expected " + std::string(checker::VerdictName(checker::Verdict::kSafe)) + " or " +
                         std::string(checker::VerdictName(checker::Verdict::kViolated)));
    }
  }
  if (!(s = ReadStatisticalExpect(t, r, o)).ok()) return s;
  o->expect_origin = Where(path, t);
  return Status::Ok();
}

Status ReadLock(const std::string& path, const toml::table& t, RunOptions* o) {
  TableReader r(path, t, "lock.");
  Status s;
  if (!(s = r.Str("id", &o->lock)).ok()) return s;
  if (const toml::node* id = t.get("id")) {
    if (locks::FindLock(o->lock) == nullptr) {
      return r.Error(*id, "id", "unknown lock '" + o->lock + "'");
    }
    std::string resolved;
    if (!(s = ResolveDriverPath(o->lock, &resolved)).ok()) return r.Error(*id, "id", s.message());
  }
  if (!(s = r.StrList("driver_args", &o->driver_args)).ok()) return s;
  if (!o->driver_args.empty() && !locks::IsDriverId(o->lock)) {
    return r.Error(*t.get("driver_args"), "driver_args", "only for a driver:PATH lock");
  }
  if (!(s = ReadFields(r, FieldSection::kLock, o)).ok()) return s;
  r.Allow("knobs");
  if (!(s = r.RejectUnknown()).ok()) return s;
  const toml::table* knobs = nullptr;
  if (!(s = SubTable(path, t, "knobs", &knobs)).ok()) return s;
  o->origins["lock"] = Where(path, t) + ": field 'lock.id'";
  if (knobs == nullptr) return Status::Ok();
  o->origins["lock.knobs"] = Where(path, *knobs) + ": field 'lock.knobs'";
  TableReader kr(path, *knobs, "lock.knobs.");
  for (const auto& [k, v] : *knobs) {
    std::string name(k.str());
    o->origins["knob." + name] = Where(path, v) + ": field 'lock.knobs." + name + "'";
    if (!(s = kr.Str(name, &o->knobs[name])).ok()) return s;
  }
  return Status::Ok();
}

Status ReadWorkload(const std::string& path, const toml::table& t, RunOptions* o) {
  TableReader r(path, t, "workload.");
  std::string id = "counter";
  Status s;
  if (!(s = r.Str("id", &id)).ok()) return s;
  if (id != "counter") return r.Error(*t.get("id"), "id", "unknown workload '" + id + "'");
  if (!(s = ReadFields(r, FieldSection::kWorkload, o)).ok()) return s;
  // Checked against the lock later (ValidateRunOptions): their lines, for its messages.
  for (const std::string k : {"validity", "renew_every_ms"}) {
    if (const toml::node* n = t.get(k)) o->origins["workload." + k] = Where(path, *n) + ": field 'workload." + k + "'";
  }
  return r.RejectUnknown();
}

// [topology]: what the lab starts, or the user's own servers. nodes = lock nodes; replicas
// and sentinels come with the failover fault (one replica of n1, three sentinels) and must
// agree with it. Read after the faults, which it is checked against.
Status ReadTopology(const std::string& path, const toml::table& t, RunOptions* o) {
  TableReader r(path, t, "topology.");
  RunOptions read = *o;  // nodes is checked against failover before it is taken
  int64_t replicas = -1, sentinels = -1;
  Status s;
  if (!(s = r.Field(*FindField(FieldSection::kLock, "nodes"), &read, nullptr)).ok()) return s;
  if (!(s = r.Int("replicas", 0, 15, &replicas)).ok()) return s;
  if (!(s = r.Int("sentinels", 0, 15, &sentinels)).ok()) return s;
  r.Allow("endpoints");
  if (!(s = ReadFields(r, FieldSection::kTopology, o)).ok()) return s;
  if (!(s = r.RejectUnknown()).ok()) return s;
  if (const toml::node* en = t.get("endpoints")) {
    const std::string expected = "expected an array of \"redis://host:port\" strings";
    if (!en->is_array() || en->as_array()->empty()) return r.Error(*en, "endpoints", expected);
    o->endpoints.clear();
    for (const auto& e : *en->as_array()) {
      std::string host, error;
      int port = 0;
      if (!e.is_string()) return r.Error(*en, "endpoints", expected);
      std::string url = *e.value<std::string>();
      if (!ParseRedisUrl(url, &host, &port, &error)) return r.Error(*en, "endpoints", error);
      o->endpoints.push_back(url);
    }
    o->endpoints_origin = Where(path, *en) + ": field 'topology.endpoints'";
  }
  bool failover = false;
  for (const auto& f : o->faults) failover = failover || f.id == "failover";
  auto bad = [&](const char* key, const std::string& what) { return r.Error(*t.get(key), key, what); };
  if (replicas >= 0 && replicas != (failover ? 1 : 0)) {
    return bad("replicas", failover ? "the failover fault runs exactly 1 replica of n1"
                                    : "replicas exist only with the failover fault");
  }
  if (sentinels >= 0 && sentinels != (failover ? 3 : 0)) {
    return bad("sentinels", failover ? "the failover fault runs exactly 3 sentinels"
                                     : "sentinels exist only with the failover fault");
  }
  if (failover && read.nodes > 1) return bad("nodes", "failover needs a single lock node (n1)");
  o->nodes = read.nodes;
  return Status::Ok();
}

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
  o->origins.clear();
  Status s;
  TableReader top(path, root, "");
  if (!(s = ReadFields(top, FieldSection::kTop, o)).ok()) return s;
  for (const char* table : {"lock", "workload", "fault", "faults", "expect", "topology"}) top.Allow(table);
  if (!(s = top.RejectUnknown()).ok()) return s;

  const toml::table* t = nullptr;
  if (!(s = SubTable(path, root, "expect", &t)).ok()) return s;
  if (t && !(s = ReadExpect(path, *t, o)).ok()) return s;
  if (!(s = SubTable(path, root, "lock", &t)).ok()) return s;
  if (t && !(s = ReadLock(path, *t, o)).ok()) return s;
  if (!(s = SubTable(path, root, "workload", &t)).ok()) return s;
  if (t && !(s = ReadWorkload(path, *t, o)).ok()) return s;
  if (!(s = ReadFaultTables(path, root, o)).ok()) return s;
  if (!(s = SubTable(path, root, "topology", &t)).ok()) return s;
  if (t && !(s = ReadTopology(path, *t, o)).ok()) return s;
  // A scenario without its lock would run the defaults without a word. Checked last, so
  // that a misspelt field is named first.
  const toml::node* lock_node = root.get("lock");
  if (lock_node == nullptr) {
    return Status::BadInput(path + ":1: field 'lock': missing: a scenario needs [lock] with its id "
                            "(see `locklab list`)");
  }
  if (lock_node->as_table()->get("id") == nullptr) {
    return Status::BadInput(Where(path, *lock_node) + ": field 'lock.id': missing (see `locklab list`)");
  }
  if (o->name.empty()) o->name = LockDisplayName(o->lock) + "--" + FaultIds(*o);
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

Status ParseScenario(const std::string& text, const std::string& path, RunOptions* o) {
  return OneLine(ParseScenarioMultiLine(text, path, o));
}

}  // namespace locklab::harness
