#include "harness/trial/trial_recorder.h"

#include <string_view>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace locklab::harness {

TrialRecorder::~TrialRecorder() {
  CloseHistory();
  CloseLog();
}

Status TrialRecorder::Open(const std::string& run_dir) {
  history_path_ = run_dir + "/history.jsonl";
  log_ = fopen((run_dir + "/lab.log").c_str(), "a");
  history_ = fopen(history_path_.c_str(), "w");
  if (!history_) return Status::Io("write " + history_path_ + ": " + strerror(errno));
  if (!log_) return Status::Io("write " + run_dir + "/lab.log: " + strerror(errno));
  return Status::Ok();
}

void TrialRecorder::Log(const std::string& line) {
  if (log_ == nullptr) return;
  double t = ToMillis(MonotonicNow() - created_) / 1000.0;
  fprintf(log_, "[%8.3f] %s\n", t, line.c_str());
  fflush(log_);
}

void TrialRecorder::Progress(const std::string& line) {
  Log(line);
  if (live_ != nullptr) live_->Interrupt();
  if (!quiet_) std::cerr << "locklab: " << line << "\n";
}

void TrialRecorder::WriteEvent(const std::string& body) {
  if (history_ == nullptr || !history_error_.ok() || body.size() < 2 || body[0] != '{') return;
  std::string line = "{\"index\":" + std::to_string(next_index_++) + "," + body.substr(1) + "\n";
  // Flushed per event (a killed run keeps its prefix); a short write or failed flush ends
  // the history there: nothing after a gap may be judged as if it were whole.
  if (fwrite(line.data(), 1, line.size(), history_) != line.size() || fflush(history_) != 0) {
    history_error_ = Status::Io("write " + history_path_ + ": " + strerror(errno));
    Log("stopping: " + history_error_.message());  // `locklab run` prints the one line
  }
}

void TrialRecorder::WriteLabEvent(const char* process, const char* type, const std::string& f,
                                  const std::string& key, const nlohmann::json& value, Nanos time) {
  nlohmann::ordered_json j;
  j["time_ns"] = time.count();
  j["process"] = process;
  j["type"] = type;
  j["f"] = f;
  j["key"] = key;
  j["value"] = value;
  WriteEvent(j.dump());
  if (live_ != nullptr && std::string_view(process) == "nemesis" && (f == "start" || f == "stop")) {
    live_->OnFaultWindow(key, f == "start");
  }
}

void TrialRecorder::WriteRunEvent(const std::string& key, const nlohmann::ordered_json& value) {
  WriteLabEvent("harness", "info", "run", key, value, MonotonicNow());
}

void TrialRecorder::CloseHistory() {
  if (history_) fclose(history_);
  history_ = nullptr;
}

void TrialRecorder::CloseLog() {
  if (log_) fclose(log_);
  log_ = nullptr;
}

}  // namespace locklab::harness
