#include "checker/history.h"

#include <algorithm>
#include <fstream>
#include <istream>
#include <sstream>
#include <unordered_map>

namespace locklab::checker {
namespace {

Status FieldError(const std::string& name, int line, const std::string& field,
                  const std::string& what) {
  return Status::BadInput(name + ":" + std::to_string(line) + ": field '" + field + "': " + what);
}

bool ParseType(const std::string& s, EventType* t) {
  if (s == "invoke") *t = EventType::kInvoke;
  else if (s == "ok") *t = EventType::kOk;
  else if (s == "fail") *t = EventType::kFail;
  else if (s == "info") *t = EventType::kInfo;
  else return false;
  return true;
}

Status ParseOne(const std::string& text, const std::string& name, int line, Event* e) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::BadInput(name + ":" + std::to_string(line) + ": not a JSON object");
  }
  if (!j.is_object()) {
    return Status::BadInput(name + ":" + std::to_string(line) + ": not a JSON object");
  }
  e->line = line;
  auto it = j.find("index");
  if (it == j.end() || it->is_null()) e->index = line - 1;
  else if (it->is_number_integer()) e->index = it->get<int64_t>();
  else return FieldError(name, line, "index", "expected an integer");

  it = j.find("time_ns");
  if (it == j.end()) return FieldError(name, line, "time_ns", "missing");
  if (!it->is_number_integer()) return FieldError(name, line, "time_ns", "expected an integer");
  e->time = Nanos(it->get<int64_t>());

  it = j.find("process");
  if (it == j.end()) return FieldError(name, line, "process", "missing");
  if (it->is_number_integer()) {
    e->process = it->get<int64_t>();
    if (e->process < 0) return FieldError(name, line, "process", "negative process id");
  } else if (it->is_string() && it->get<std::string>() == "nemesis") {
    e->process = kNemesisProcess;
  } else if (it->is_string() && it->get<std::string>() == "harness") {
    e->process = kHarnessProcess;
  } else {
    return FieldError(name, line, "process", "expected an integer, \"nemesis\" or \"harness\"");
  }

  it = j.find("type");
  if (it == j.end()) return FieldError(name, line, "type", "missing");
  if (!it->is_string() || !ParseType(it->get<std::string>(), &e->type)) {
    return FieldError(name, line, "type", "expected invoke, ok, fail or info");
  }
  it = j.find("f");
  if (it == j.end()) return FieldError(name, line, "f", "missing");
  if (!it->is_string()) return FieldError(name, line, "f", "expected a string");
  e->f = it->get<std::string>();

  it = j.find("key");
  if (it == j.end() || it->is_null()) e->key.clear();
  else if (it->is_string()) e->key = it->get<std::string>();
  else return FieldError(name, line, "key", "expected a string");

  it = j.find("value");
  e->value = (it == j.end()) ? nlohmann::json() : *it;
  return Status::Ok();
}

}  // namespace

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kInvoke: return "invoke";
    case EventType::kOk: return "ok";
    case EventType::kFail: return "fail";
    case EventType::kInfo: return "info";
  }
  return "?";
}

std::string ProcessName(int64_t process) {
  if (process == kNemesisProcess) return "nemesis";
  if (process == kHarnessProcess) return "harness";
  return std::to_string(process);
}

Status ParseJsonlHistory(std::istream& in, const std::string& name, History* out,
                         bool allow_torn_tail, int* torn_line) {
  out->clear();
  if (torn_line != nullptr) *torn_line = 0;
  std::unordered_map<int64_t, int> first_line;  // index -> the line that had it
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    bool last = in.peek() == std::char_traits<char>::eof();
    bool had_newline = !in.eof();
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Event e;
    Status s = ParseOne(text, name, line, &e);
    if (!s.ok()) {
      if (allow_torn_tail && last && !had_newline) {  // killed mid-write
        if (torn_line != nullptr) *torn_line = line;
        break;
      }
      return s;
    }
    // The index orders events written at the same time: two with one index make that
    // order, and every "the event at index N" in a report, ambiguous.
    auto [it, fresh] = first_line.emplace(e.index, line);
    if (!fresh) {
      return FieldError(name, line, "index", "duplicate index " + std::to_string(e.index) +
                                                 " (also on line " + std::to_string(it->second) + ")");
    }
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

Status ReadJsonlHistory(const std::string& path, History* out, bool allow_torn_tail,
                        int* torn_line) {
  std::ifstream in(path);
  if (!in) return Status::BadInput(path + ": cannot open");
  return ParseJsonlHistory(in, path, out, allow_torn_tail, torn_line);
}

std::string ToJsonLine(const Event& e) {
  nlohmann::ordered_json j;
  j["index"] = e.index;
  j["time_ns"] = e.time.count();
  if (e.process >= 0) j["process"] = e.process;
  else j["process"] = ProcessName(e.process);
  j["type"] = EventTypeName(e.type);
  j["f"] = e.f;
  j["key"] = e.key;
  j["value"] = e.value;
  return j.dump();
}

History SortedByTime(History h) {
  std::stable_sort(h.begin(), h.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.index < b.index;
  });
  return h;
}

}  // namespace locklab::checker
