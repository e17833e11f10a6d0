// EventSink: where a client's history events go (docs/design.md 3.2).
//
// The sink stamps each event with MonotonicNow() (raw CLOCK_MONOTONIC, shared by all
// processes of a run) and the client's process id; the harness adds the `index` when it
// writes history.jsonl. Implementations must write each event as one atomic unit so a
// killed client leaves whole lines. Not thread-safe unless an implementation says so.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/clock.h"

namespace locklab::workloads {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // type: invoke | ok | fail | info.
  virtual void Emit(const char* type, const char* f, const std::string& key,
                    const nlohmann::json& value) = 0;
};

// Writes `{"time_ns":..,"process":..,"type":..,"f":..,"key":..,"value":..}\n` to a file
// descriptor with one write(2) per event (atomic on a pipe for lines under PIPE_BUF).
// Thread-safe: a renewal thread may emit too.
class FdEventSink : public EventSink {
 public:
  FdEventSink(int fd, int64_t process) : fd_(fd), process_(process) {}
  void Emit(const char* type, const char* f, const std::string& key,
            const nlohmann::json& value) override;
  // The same, as another logical process: a lock's renewal worker w of this client is
  // recorded as process + 1000 * w (see locks::LockEventFn), so every process of the
  // history has at most one pending operation.
  void EmitAs(int64_t process, const char* type, const char* f, const std::string& key,
              const nlohmann::json& value);
  // A control line for the harness ({"ctl":...}), not a history event.
  void Control(const nlohmann::json& message);

 private:
  void WriteLine(const std::string& line);
  int fd_;
  int64_t process_;
};

}  // namespace locklab::workloads
