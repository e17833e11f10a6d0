#include "harness/scenario/toml_fields.h"

#include <sstream>

#include "base/numbers.h"

namespace locklab::harness {
namespace {

// What a refused value was, for "got '...'": a string as its text, anything else as TOML
// writes it, cut short (a refused table can be long).
std::string NodeText(const toml::node& n) {
  std::string text;
  if (const auto* s = n.as_string()) {
    text = s->get();
  } else {
    std::ostringstream out;
    n.visit([&out](const auto& v) { out << v; });
    text = out.str();
  }
  constexpr size_t kMax = 40;
  return text.size() > kMax ? text.substr(0, kMax) + "..." : text;
}

}  // namespace

std::string Where(const std::string& file, const toml::node& n) {
  return file + ":" + std::to_string(n.source().begin.line);
}

Status TableReader::Field(const RunField& field, RunOptions* o, faults::FaultOptions* fault) {
  faults::FaultOptions unused;
  faults::FaultOptions& f = fault ? *fault : unused;
  for (std::string_view key : {field.key, field.alias}) {
    if (key.empty()) continue;
    if (field.type == RunField::Type::kString) {
      std::string v;
      if (Status s = Str(key, &v); !s.ok()) return s;
      if (table_.get(key)) field.set_string(*o, f, v);
    } else {
      int64_t v = 0;
      if (Status s = Int(key, field.lo, field.hi, &v); !s.ok()) return s;
      if (table_.get(key)) field.set_integer(*o, f, v);
    }
  }
  return Status::Ok();
}

Status TableReader::Int(std::string_view key, int64_t lo, int64_t hi, int64_t* out) {
  seen_.emplace_back(key);
  const toml::node* n = table_.get(key);
  if (n == nullptr) return Status::Ok();
  std::optional<int64_t> v = n->value_exact<int64_t>();
  if (!v || *v < lo || *v > hi) return Error(*n, key, ExpectedInteger(lo, hi, NodeText(*n)));
  *out = *v;
  return Status::Ok();
}

Status TableReader::Str(std::string_view key, std::string* out) {
  seen_.emplace_back(key);
  const toml::node* n = table_.get(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_string()) return Error(*n, key, "expected a string");
  *out = *n->value<std::string>();
  return Status::Ok();
}

Status TableReader::StrList(std::string_view key, std::vector<std::string>* out) {
  seen_.emplace_back(key);
  const toml::node* n = table_.get(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_array()) return Error(*n, key, "expected an array of strings");
  out->clear();
  for (const auto& e : *n->as_array()) {
    if (!e.is_string()) return Error(e, key, "expected an array of strings");
    out->push_back(*e.value<std::string>());
  }
  return Status::Ok();
}

Status TableReader::IntList(std::string_view key, std::vector<int>* out) {
  seen_.emplace_back(key);
  const toml::node* n = table_.get(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_array()) return Error(*n, key, "expected an array of integers");
  out->clear();
  for (const auto& e : *n->as_array()) {
    if (!e.is_integer()) return Error(e, key, "expected an array of integers");
    out->push_back(static_cast<int>(*e.value<int64_t>()));
  }
  return Status::Ok();
}

Status TableReader::RejectUnknown() {
  for (const auto& [k, v] : table_) {
    bool known = false;
    for (const auto& s : seen_) known = known || s == k.str();
    if (!known) return Error(v, k.str(), "unknown field");
  }
  return Status::Ok();
}

Status TableReader::Error(const toml::node& n, std::string_view key, const std::string& what) const {
  return Status::BadInput(Where(file_, n) + ": field '" + prefix_ + std::string(key) + "': " + what);
}

Status SubTable(const std::string& file, const toml::table& root, const char* key,
                const toml::table** out) {
  *out = nullptr;
  const toml::node* n = root.get(key);
  if (n == nullptr) return Status::Ok();
  if (!n->is_table()) return Status::BadInput(Where(file, *n) + ": field '" + key + "': expected a table");
  *out = n->as_table();
  return Status::Ok();
}

}  // namespace locklab::harness
