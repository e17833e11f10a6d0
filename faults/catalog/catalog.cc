#include "faults/catalog/catalog.h"

namespace locklab::faults {

std::vector<FaultDescriptor> BuiltInFaultDescriptors() {
  // The order of `locklab list` (and of its --json, which scripts and the report read).
  std::vector<FaultDescriptor> all;
  all.push_back(NoneFault());
  all.push_back(ClientPauseFault());
  all.push_back(SlowCsFault());
  all.push_back(ClientCrashFault());
  all.push_back(ServerPauseFault());
  all.push_back(MemoryFullFault());
  all.push_back(RestartFault());
  all.push_back(ClockJumpFault());
  all.push_back(ClockDriftFault());
  all.push_back(ClientClockFault());
  all.push_back(PartitionFault());
  all.push_back(ReplyLossFault());
  all.push_back(FailoverFault());
  all.push_back(DelayFault());
  return all;
}

}  // namespace locklab::faults
