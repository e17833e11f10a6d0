#include "faults/schedule.h"

#include <algorithm>

#include "faults/fault_options.h"

namespace locklab::faults {

Schedule Schedule::FromOptions(const FaultOptions& options) {
  Schedule s;
  s.first_at = options.first_at;
  s.duration = options.duration;
  s.interval = options.interval;
  s.max_windows = options.windows;
  return s;
}

std::vector<Window> Schedule::Windows(Nanos start, Nanos run_end) const {
  std::vector<Window> out;
  if (duration <= Millis(0)) return out;
  Nanos at = FirstOpenAt(start);
  while (MayOpenAnother(static_cast<int>(out.size())) && at < run_end &&
         Fits(static_cast<int>(out.size()), at, run_end)) {
    out.push_back({at, std::min(CloseAt(at), run_end)});
    at = NextOpenAt(CloseAt(at));
  }
  return out;
}

nlohmann::json Schedule::Plan() const {
  return {{"first_at_ms", first_at.count()}, {"duration_ms", duration.count()},
          {"interval_ms", interval.count()}, {"windows", max_windows},
          {"point", armed_point}};
}

std::vector<ComposedWindow> Compose(const std::vector<Schedule>& schedules, Nanos start,
                                    Nanos run_end) {
  std::vector<ComposedWindow> out;
  for (size_t i = 0; i < schedules.size(); ++i) {
    for (const Window& w : schedules[i].Windows(start, run_end)) out.push_back({i, w});
  }
  std::stable_sort(out.begin(), out.end(), [](const ComposedWindow& a, const ComposedWindow& b) {
    return a.window.open < b.window.open;
  });
  return out;
}

}  // namespace locklab::faults
