// The built-in faults, one descriptor each (faults/fault_descriptor.h), one file each in
// this folder. Each file registers its descriptor with a BuiltInFault at namespace scope,
// with the place it takes in the order `locklab list` shows (lower first), so a new built-in
// fault is its file here and its tests: the build picks up every file of this folder, and
// links the whole folder in (a registration nothing else refers to is still there).
//
// Registration runs during static initialization; BuiltInFaultDescriptors is read only once
// main runs (the catalog is built on first use), so every file has registered by then.
#pragma once

#include "faults/fault_descriptor.h"
