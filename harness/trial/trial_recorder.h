// TrialRecorder: a trial's two files in its run directory, history.jsonl (what the checker
// judges) and lab.log (what the lab did, for a human).
//
// Every history event gets the next "index" and is flushed on its own line, so a killed run
// keeps a readable prefix. The first failed write (disk full...) stops the history there:
// history_error() says why and every later event is dropped, since nothing after a gap may
// be judged as if the history were whole. Log lines carry the seconds since the recorder was
// made; Progress() also prints them on stderr unless quiet. Before Open() (or after a failed
// one) events and log lines go nowhere. Not thread-safe: the trial's one thread uses it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "harness/trial/live_progress.h"

namespace locklab::harness {

class TrialRecorder {
 public:
  explicit TrialRecorder(bool quiet) : quiet_(quiet) {}
  ~TrialRecorder();
  TrialRecorder(const TrialRecorder&) = delete;
  TrialRecorder& operator=(const TrialRecorder&) = delete;

  // Opens RUN_DIR/lab.log (append) and RUN_DIR/history.jsonl (new).
  Status Open(const std::string& run_dir);

  // The run's live line (live_progress.h), told of fault windows and erased before each
  // Progress line; nullptr: none.
  void set_live(LiveProgress* live) { live_ = live; }

  void Log(const std::string& line);
  void Progress(const std::string& line);  // Log, and stderr unless quiet

  // body: a JSON object without "index".
  void WriteEvent(const std::string& body);
  // One event of the lab's own processes ("nemesis", "harness"), fields in history order.
  void WriteLabEvent(const char* process, const char* type, const std::string& f,
                     const std::string& key, const nlohmann::json& value, Nanos time);
  // The harness's run declarations (checker::RunStartValue / RunEndValue), key start / end.
  void WriteRunEvent(const std::string& key, const nlohmann::ordered_json& value);

  bool history_open() const { return history_ != nullptr; }
  // The first failed write of history.jsonl; ok while the history is whole.
  const Status& history_error() const { return history_error_; }
  void CloseHistory();
  void CloseLog();

 private:
  bool quiet_;
  LiveProgress* live_ = nullptr;
  Nanos created_ = MonotonicNow();
  std::string history_path_;
  FILE* history_ = nullptr;
  FILE* log_ = nullptr;
  int64_t next_index_ = 0;
  Status history_error_;
};

}  // namespace locklab::harness
