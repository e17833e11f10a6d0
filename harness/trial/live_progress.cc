#include "harness/trial/live_progress.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace locklab::harness {

bool LiveProgress::StderrIsLiveTerminal() {
  if (isatty(STDERR_FILENO) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

LiveProgress::LiveProgress(bool enabled, std::ostream* out)
    : enabled_(enabled), out_(out != nullptr ? out : &std::cerr) {}

void LiveProgress::Start(Nanos now, Millis duration) {
  start_ = now;
  duration_ = duration;
  started_ = true;
  next_draw_ = now;
}

void LiveProgress::OnClientEvent(const std::string& line) {
  if (!enabled_) return;
  nlohmann::json e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!e.is_object() || !e["process"].is_number_integer()) return;
  const int process = e["process"].get<int>();
  const std::string type = e.value("type", "");
  const std::string f = e.value("f", "");
  const std::string key = e["key"].is_string() ? e["key"].get<std::string>() : "";
  if (type == "ok" || type == "fail" || type == "info") ++ops_;
  if (f == "acquire" && type == "ok") {
    std::set<int>& held = holders_[key];
    held.erase(process);
    if (!held.empty()) ++overlaps_;
    held.insert(process);
  } else if ((f == "release" || f == "acquire") && type == "invoke") {
    // Releasing, or asking again: this client no longer counts itself a holder.
    holders_[key].erase(process);
  }
}

void LiveProgress::OnFaultWindow(const std::string& id, bool open) {
  if (!enabled_) return;
  int& n = open_faults_[id];
  n = open ? n + 1 : (n > 0 ? n - 1 : 0);
}

void LiveProgress::Tick(Nanos now) {
  if (!enabled_ || !started_ || now < next_draw_) return;
  next_draw_ = now + kRedrawEvery;
  std::ostringstream line;
  line.setf(std::ios::fixed);
  line.precision(1);
  line << "running " << ToMillis(now - start_) / 1000.0 << " of " << duration_.count() / 1000.0
       << " s, " << ops_ << " ops, faults open: ";
  std::string open;
  for (const auto& [id, n] : open_faults_) {
    if (n > 0) open += (open.empty() ? "" : " + ") + id;
  }
  line << (open.empty() ? "none" : open) << ", 2 holders at once: " << overlaps_
       << (overlaps_ == 1 ? " time" : " times");
  *out_ << "\r\033[K" << line.str() << std::flush;
  shown_ = true;
}

void LiveProgress::Interrupt() {
  if (!shown_) return;
  *out_ << "\r\033[K" << std::flush;
  shown_ = false;
  next_draw_ = Nanos{0};
}

}  // namespace locklab::harness
