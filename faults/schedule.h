// Schedule: when a fault's windows open and close, apart from what a window does (the
// effect, faults/effect.h). Jepsen's split: the schedule is the generator, the effect the
// nemesis, and faults/scheduled_fault.h the loop that applies one to the other.
//
// The first window opens `first_at` after the start, each lasts `duration`, and the next
// opens `interval` after the previous one closed, at most `max_windows` of them (0: as many
// as fit). A timed schedule opens a window at its time; an armed schedule arms
// `armed_point` in a client at that time and the window opens when the client reports the
// point. The first window always opens (a duration longer than the run means "until the
// end": the teardown cuts it); a later one opens only if it ends before the run does.
//
// Pure values and functions of time: no lab, no clock, no randomness (the seed draws
// targets, faults/target_draw.h, never times), so the same options give the same windows.
// Thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"

namespace locklab::faults {

struct FaultOptions;

struct Window {
  Nanos open{0};
  Nanos close{0};
  bool operator==(const Window& o) const { return open == o.open && close == o.close; }
};

struct Schedule {
  Millis first_at{1000};
  Millis duration{1500};
  Millis interval{2000};
  int max_windows = 0;      // 0: as many as fit
  std::string armed_point;  // empty: a timed schedule

  // first_at, duration, interval and windows of the options; not armed (the effect arms).
  static Schedule FromOptions(const FaultOptions& options);

  bool armed() const { return !armed_point.empty(); }
  Nanos FirstOpenAt(Nanos start) const { return start + first_at; }
  Nanos CloseAt(Nanos opened) const { return opened + duration; }
  Nanos NextOpenAt(Nanos closed) const { return closed + interval; }
  // Whether another window may open after `opened` windows (the max_windows limit).
  bool MayOpenAnother(int opened) const { return max_windows <= 0 || opened < max_windows; }
  // Whether a window opening at `at`, after `opened` windows, fits in a run ending at
  // `run_end`: the first always does, a later one when it closes by the end.
  bool Fits(int opened, Nanos at, Nanos run_end) const {
    return opened == 0 || CloseAt(at) <= run_end;
  }
  // The windows of a run from `start` to `run_end` when each opens at its time (for an
  // armed schedule: when each point is reported the moment it is armed), the last cut at
  // `run_end`. The driver gets later windows when a tick or a report comes late.
  std::vector<Window> Windows(Nanos start, Nanos run_end) const;
  // The "plan" nemesis event's value, written at setup: the judge tells a fault that never
  // bit (an armed point never reached, no window before the end) from one that did.
  nlohmann::json Plan() const;
};

// Several schedules of one scenario side by side (each fault has its own; their windows may
// overlap): every window, tagged with the index of its schedule, by opening time (ties in
// schedule order).
struct ComposedWindow {
  size_t schedule = 0;
  Window window;
};
std::vector<ComposedWindow> Compose(const std::vector<Schedule>& schedules, Nanos start,
                                    Nanos run_end);

}  // namespace locklab::faults
