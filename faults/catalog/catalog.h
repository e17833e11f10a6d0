// The built-in faults, one descriptor each (faults/fault_descriptor.h), one file each in
// this folder; BuiltInFaultDescriptors lists them in the order `locklab list` shows them.
// A new built-in fault is its file here, its line in catalog.cc and its tests.
#pragma once

#include <vector>

#include "faults/fault_descriptor.h"

namespace locklab::faults {

FaultDescriptor NoneFault();
FaultDescriptor ClientPauseFault();
FaultDescriptor SlowCsFault();
FaultDescriptor ClientCrashFault();
FaultDescriptor ServerPauseFault();
FaultDescriptor MemoryFullFault();
FaultDescriptor RestartFault();
FaultDescriptor ClockJumpFault();
FaultDescriptor ClockDriftFault();
FaultDescriptor ClientClockFault();
FaultDescriptor PartitionFault();
FaultDescriptor ReplyLossFault();
FaultDescriptor FailoverFault();
FaultDescriptor DelayFault();

// The built-in faults in listing order.
std::vector<FaultDescriptor> BuiltInFaultDescriptors();

}  // namespace locklab::faults
