#include "checker/infra.h"

namespace locklab::checker {
namespace {

std::string StringField(const nlohmann::json& v, const char* field) {
  auto it = v.find(field);
  return it != v.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t IntField(const nlohmann::json& v, const char* field) {
  auto it = v.find(field);
  return it != v.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

bool IsDeath(const std::string& how) {
  return how.rfind("killed", 0) == 0 || how.rfind("exited", 0) == 0;
}

}  // namespace

std::string InfraEvent::Describe() const {
  std::string s = what == "client" ? subject : "lab " + subject;
  std::string paren = server;
  if (pid > 0) paren += (paren.empty() ? "" : ", ") + std::string("pid ") + std::to_string(pid);
  if (!paren.empty()) s += " (" + paren + ")";
  return s + " " + (how.empty() ? "died" : how);
}

bool IsInfraEvent(const Event& e) {
  return e.process == kHarnessProcess && e.f == "infra" && e.value.is_object();
}

int64_t InfraDeadClient(const Event& e) {
  if (!IsInfraEvent(e) || StringField(e.value, "what") != "client") return 0;
  if (!IsDeath(StringField(e.value, "how"))) return 0;
  return IntField(e.value, "process");
}

std::vector<InfraEvent> ReadInfraEvents(const History& sorted) {
  std::vector<InfraEvent> out;
  for (const Event& e : sorted) {
    if (!IsInfraEvent(e)) continue;
    InfraEvent i;
    i.time = e.time;
    i.subject = e.key;
    i.what = StringField(e.value, "what");
    i.process = IntField(e.value, "process");
    i.pid = IntField(e.value, "pid");
    i.server = StringField(e.value, "server");
    i.how = StringField(e.value, "how");
    i.log_line = StringField(e.value, "log_line");
    if (i.stall()) {
      int64_t from = IntField(e.value, "from_ns");
      i.stalled_from = from > 0 && Nanos(from) < e.time ? Nanos(from) : e.time;
    }
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace locklab::checker
