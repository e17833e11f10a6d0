// The precompiled header of every locklab target: the standard headers most files include and
// nlohmann/json, whose parse alone costs a translation unit about as much as its own code.
// Nothing of the project's own belongs here: a change to this file rebuilds everything.
// Included by the compiler (-include) through CMakeLists.txt's locklab_precompile, never by a
// source file; every file still includes what it uses, so the build without it
// (-DLOCKLAB_PRECOMPILED_HEADERS=OFF) compiles the same code.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
