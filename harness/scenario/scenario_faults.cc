#include "harness/scenario/scenario_faults.h"

#include "harness/scenario/toml_fields.h"

namespace locklab::harness {

Status ReadFaultTables(const std::string& path, const toml::table& root, RunOptions* o) {
  std::vector<const toml::table*> tables;
  size_t array_tables = 0;  // the first ones come from [[faults]], a [fault] after them
  if (const toml::node* n = root.get("faults")) {
    if (!n->is_array_of_tables()) {
      return Status::BadInput(Where(path, *n) + ": field 'faults': expected [[faults]] tables");
    }
    for (const auto& e : *n->as_array()) tables.push_back(e.as_table());
    array_tables = tables.size();
    if (tables.size() > kMaxFaults) {
      return Status::BadInput(Where(path, *tables[kMaxFaults]) + ": field 'faults': " +
                              std::to_string(tables.size()) + " [[faults]] tables, at most " +
                              std::to_string(kMaxFaults) +
                              " (one table repeats its window: windows, interval_ms)");
    }
  }
  const toml::table* single = nullptr;
  if (Status s = SubTable(path, root, "fault", &single); !s.ok()) return s;
  if (single) tables.push_back(single);
  o->faults.clear();
  for (size_t i = 0; i < tables.size(); ++i) {
    const toml::table& t = *tables[i];
    std::string prefix = i < array_tables ? "faults[" + std::to_string(i) + "]." : "fault.";
    TableReader r(path, t, prefix);
    faults::FaultOptions f;
    Status s;
    if (!(s = r.Str("id", &f.id)).ok()) return s;
    const faults::FaultInfo* info = faults::FindFault(f.id);
    if (info == nullptr) {
      const toml::node* id = t.get("id");
      return Status::BadInput(Where(path, id ? *id : t) + ": field '" + prefix + "id': unknown fault '" +
                              f.id + "'");
    }
    for (const RunField& field : RunFields()) {
      if (field.section != FieldSection::kFault) continue;
      if (!(s = r.Field(field, o, &f)).ok()) return s;
    }
    if (!(s = r.IntList("targets", &f.targets)).ok()) return s;
    if (!(s = r.IntList("nodes", &f.nodes)).ok()) return s;
    for (const auto& p : info->params) {
      std::string v;
      if (!(s = r.Str(p.name, &v)).ok()) return s;
      if (t.get(p.name)) f.params[p.name] = v;
    }
    if (!(s = r.RejectUnknown()).ok()) return s;
    if (f.id == "none") continue;
    std::string key = "fault" + std::to_string(o->faults.size());
    o->origins[key] = Where(path, t) + ": field '" + prefix.substr(0, prefix.size() - 1) + "'";
    for (const char* field : {"targets", "nodes", "first_at_ms", "point"}) {
      if (const toml::node* n = t.get(field)) {
        o->origins[key + "." + field] = Where(path, *n) + ": field '" + prefix + field + "'";
      }
    }
    o->faults.push_back(f);
  }
  return Status::Ok();
}

}  // namespace locklab::harness
