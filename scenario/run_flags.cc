// The `locklab run` flag reader: ParseRunFlags (run_options.h). Plain
// numbers and strings come from the field table (run_fields.h); this file reads the flags
// with more to them (lock, faults and their params, endpoints, knobs, lists). The reader
// knows run's whole table (cli_spec.h), so a flag `locklab run --help` does not list is
// unknown here.
#include <sstream>

#include "base/argv.h"
#include "base/numbers.h"
#include "scenario/cli_spec.h"
#include "scenario/run_fields.h"
#include "scenario/run_options.h"
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

Status ParseRunFlagsMultiLine(const std::vector<std::string>& args, RunOptions* o,
                              std::string* scenario_path) {
  scenario_path->clear();
  bool name_given = false;
  bool fault_named = false;  // whether the last fault entry got its id from --fault
  bool driver_args_given = false;  // flags' --driver-arg list replaces a scenario file's
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
