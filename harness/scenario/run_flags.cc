// The `locklab run` flag reader: ParseRunFlags (run_options.h). Plain
// numbers and strings come from the field table (run_fields.h); this file reads the flags
// with more to them (lock, faults and their params, endpoints, knobs, lists). The reader
// knows run's whole table (cli_spec.h), so a flag `locklab run --help` does not list is
// unknown here.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "base/argv.h"
#include "base/numbers.h"
#include "faults/fault_descriptor.h"
#include "harness/scenario/cli_spec.h"
#include "harness/scenario/run_fields.h"
#include "harness/scenario/run_options.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

namespace locklab::harness {
namespace {

// "1,3" -> {1,3}: client numbers, range-checked against the run's clients later.
bool ParseIntList(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    std::optional<int64_t> v = ParseInt(item, INT32_MIN, INT32_MAX);
    if (!v) return false;
    out->push_back(static_cast<int>(*v));
  }
  return true;
}

// "1,3" or "n1,n3" -> {1,3}.
bool ParseNodeList(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty() && item[0] == 'n') item = item.substr(1);
    std::optional<int64_t> v = ParseInt(item, 1, 64);
    if (!v) return false;
    out->push_back(static_cast<int>(*v));
  }
  return !out->empty();
}

// A field of the table (run_fields.h) set by its flag, in the table's words after the flag's.
Status SetField(const ArgvReader& r, const RunField& field, const std::string& v, RunOptions* o,
                faults::FaultOptions* fault) {
  Status s = ParseFieldText(field, v, o, fault);
  return s.ok() ? s : r.Error(s.message());
}

// What the faults ask of the run (faults/effect.h, RunShape), for each value no flag gave:
// `given` holds the fields set by a flag, `fault_given` those of each fault entry. When two
// faults ask for one value, the first fault's stands.
void ShapeRunForFaults(const std::set<const RunField*>& given,
                       const std::map<size_t, std::set<const RunField*>>& fault_given, RunOptions* o) {
  std::set<const RunField*> shaped;
  auto take = [&](const RunField* field, Millis want, Millis* value) {
    if (want.count() <= 0 || field == nullptr || given.count(field) > 0 || shaped.count(field) > 0) return;
    *value = want;
    shaped.insert(field);
  };
  for (size_t i = 0; i < o->faults.size(); ++i) {
    faults::FaultOptions& f = o->faults[i];
    const faults::FaultDescriptor* d = faults::FindFaultDescriptor(f.id);
    if (d == nullptr || !d->make_effect) continue;  // unknown ids are named where the fault is made
    std::unique_ptr<faults::Effect> effect = d->make_effect(f);
    if (effect == nullptr) continue;
    const faults::RunShape r = effect->ShapeRun();
    take(FindField(FieldSection::kLock, "ttl_ms"), r.ttl, &o->ttl);
    take(FindField(FieldSection::kWorkload, "hold_ms"), r.hold, &o->hold);
    take(FindField(FieldSection::kWorkload, "acquire_timeout_ms"), r.acquire_timeout, &o->acquire_timeout);
    take(FindField(FieldSection::kTop, "duration_ms"), r.duration, &o->duration);
    auto it = fault_given.find(i);
    const std::set<const RunField*> none;
    const std::set<const RunField*>& mine = it == fault_given.end() ? none : it->second;
    const RunField* first_at = FindField(FieldSection::kFault, "first_at_ms");
    const RunField* window = FindField(FieldSection::kFault, "duration_ms");
    if (r.first_at.count() > 0 && mine.count(first_at) == 0) f.first_at = r.first_at;
    if (r.window.count() > 0 && mine.count(window) == 0) f.duration = r.window;
    const RunField* ttl = FindField(FieldSection::kLock, "ttl_ms");
    if (r.lease_over_hold.count() > 0 && given.count(ttl) == 0) o->ttl = std::max(o->ttl, o->hold + r.lease_over_hold);
  }
}

Status ParseRunFlagsMultiLine(const std::vector<std::string>& args, RunOptions* o,
                              std::string* scenario_path) {
  scenario_path->clear();
  bool name_given = false;
  bool fault_named = false;  // whether the last fault entry got its id from --fault
  bool driver_args_given = false;  // flags' --driver-arg list replaces a scenario file's
  std::set<const RunField*> given;  // the run's fields a flag set
  std::map<size_t, std::set<const RunField*>> fault_given;  // each fault entry's
  // Schedule flags and params apply to the most recent --fault (an entry without an id
  // before the first).
  auto fault = [&]() -> faults::FaultOptions& {
    if (o->faults.empty()) o->faults.emplace_back();
    return o->faults.back();
  };
  ArgvReader r(RunCommandSpec(), args);
  while (r.Next()) {
    // "run: unknown flag --bogus" before its value is looked for ("needs a value").
    if (r.AtFlag() && RunCommandSpec().Find(r.flag()) == nullptr) return r.Unknown();
    if (r.Is("--no-report")) {
      // RunCommand (main.cc) reads it; a scenario holds no report setting.
      if (Status s = r.NoValue(); !s.ok()) return s;
      continue;
    }
    if (!r.AtFlag()) {
      if (!scenario_path->empty()) {
        return Status::Usage("run: more than one scenario file: '" + r.word() +
                             "' (to replay several: locklab replay FILE|DIR...)");
      }
      *scenario_path = r.word();
      continue;
    }
    std::string v;
    Status s = r.Value(&v);
    if (!s.ok()) return s;
    auto param = [&](const std::string& kv) -> Status {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return r.Error("'" + kv + "' is not NAME=VALUE");
      fault().params[kv.substr(0, eq)] = kv.substr(eq + 1);
      return Status::Ok();
    };
    const RunField* field = FindFlag(r.flag());
    if (field != nullptr && r.Is(field->flag)) {
      faults::FaultOptions unused;
      s = SetField(r, *field, v, o, field->section == FieldSection::kFault ? &fault() : &unused);
      if (field->section == FieldSection::kFault) {
        fault_given[o->faults.size() - 1].insert(field);
      } else {
        given.insert(field);
      }
      name_given = name_given || r.Is("--name");
    } else if (r.Is("--lock")) {
      o->lock = v;
      std::string resolved;
      if (!(s = ResolveDriverPath(v, &resolved)).ok()) return r.Error(s.message());
    } else if (r.Is("--driver-arg")) {
      if (!driver_args_given) o->driver_args.clear();
      driver_args_given = true;
      o->driver_args.push_back(v);
    } else if (r.Is("--fault")) {
      if (fault_named || o->faults.empty()) o->faults.emplace_back();
      o->faults.back().id = v;
      fault_named = true;
    } else if (r.Is("--out")) {
      o->out_dir = v;
    } else if (r.Is("--endpoints")) {
      o->endpoints.clear();
      std::stringstream ss(v);
      std::string item, host, error;
      int port = 0;
      while (std::getline(ss, item, ',')) {
        if (!ParseRedisUrl(item, &host, &port, &error)) return r.Error(error);
        o->endpoints.push_back(item);
      }
      if (o->endpoints.empty()) return r.Error("expected redis://host:port,...");
      o->endpoints_origin = "flag --endpoints";
    } else if (r.Is("--pause-mode")) {
      s = param("mode=" + v);
    } else if (r.Is("--pause-point")) {
      s = param("point=" + v);
    } else if (r.Is("--param")) {
      s = param(v);
    } else if (r.Is("--targets")) {
      if (!ParseIntList(v, &fault().targets)) return r.Error("'" + v + "' is not a list of client numbers");
    } else if (r.Is("--fault-nodes")) {
      if (!ParseNodeList(v, &fault().nodes)) return r.Error("'" + v + "' is not a list of nodes like n1,n3");
    } else if (r.Is("--knob")) {
      auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return r.Error("'" + v + "' is not NAME=VALUE");
      o->knobs[v.substr(0, eq)] = v.substr(eq + 1);
    } else {
      return r.Unknown();
    }
    if (!s.ok()) return s;
  }
  // A bare `run --fault ID` gets the run its fault needs; a scenario file is taken as written.
  if (scenario_path->empty()) ShapeRunForFaults(given, fault_given, o);
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

Status ParseRunFlags(const std::vector<std::string>& args, RunOptions* o,
                     std::string* scenario_path) {
  return OneLine(ParseRunFlagsMultiLine(args, o, scenario_path));
}

}  // namespace locklab::harness
