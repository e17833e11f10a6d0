// History: the events of one run, as docs/design.md 3.2 defines them (JSON Lines).
//
// One Event per line. Clients are processes >= 0; the fault process is "nemesis" and the
// harness's own final reads are "harness" (both mapped to negative ids here). `time` is
// CLOCK_MONOTONIC shared by every process of the run; `index` is the order the harness
// wrote events in. Readers never throw: malformed input yields a Status whose message names
// the file, the line and the field. The checker depends on no other lab folder, so it can
// read histories written by any tool. Functions here are thread-compatible.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"

namespace locklab::checker {

enum class EventType { kInvoke, kOk, kFail, kInfo };

inline constexpr int64_t kNemesisProcess = -1;
inline constexpr int64_t kHarnessProcess = -2;

struct Event {
  int64_t index = 0;
  Nanos time{0};
  int64_t process = 0;
  EventType type = EventType::kInvoke;
  int line = 0;     // 1-based source line, for messages (here: no padding after `type`)
  std::string f;    // acquire release renew | read write cas | start stop (nemesis)
  std::string key;  // lock key, resource key; for nemesis events the fault id
  nlohmann::json value;  // null when absent
};

using History = std::vector<Event>;

const char* EventTypeName(EventType t);
std::string ProcessName(int64_t process);
// Whether an event's `f` is an operation on the lock itself (acquire, release, renew), not on
// the resource or the run.
bool IsLockOp(const std::string& f);

// The readers' one error shape for a bad field: "NAME:LINE: field 'FIELD': WHAT".
Status HistoryFieldError(const std::string& name, int line, const std::string& field,
                         const std::string& what);

// Parses JSON Lines. `name` is used in error messages ("history.jsonl:12: ...").
// Blank lines are skipped; two events with the same index are an error (field 'index').
// A truncated last line (a killed run) is an error unless `allow_torn_tail` is set, in
// which case it is dropped and its line number stored in `*torn_line` (0: none dropped).
Status ParseJsonlHistory(std::istream& in, const std::string& name, History* out,
                         bool allow_torn_tail = false, int* torn_line = nullptr);
Status ReadJsonlHistory(const std::string& path, History* out, bool allow_torn_tail = false,
                        int* torn_line = nullptr);

// One event as one JSON line (no trailing newline), fields in the order of docs/design.md 3.2.
std::string ToJsonLine(const Event& e);

// Events ordered by time, ties by index: the order every analysis walks.
History SortedByTime(History h);
// The same order, in place, holding only a permutation beside the events (a sorted copy of
// a lab history, whose clients' events arrive a little out of order, was its size again).
void SortByTimeInPlace(History* h);

}  // namespace locklab::checker
