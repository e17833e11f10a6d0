// The lab's version and the git revision the binary was built from, for `locklab
// --version` and the "locklab_version" of results.json, matrix.json and hunt.json.
//
// The version is the project's (CMakeLists.txt project VERSION); the revision is taken on
// every build by base/version.cmake: the short commit hash, "-dirty" when tracked files
// differed from it, "unknown" outside a git checkout. Constant strings; thread-safe.
#pragma once

#include <string>

namespace locklab {

const char* LocklabVersion();   // "0.30.0"
const char* LocklabRevision();  // the short hash, "-dirty" after it, or "unknown"

// "locklab VERSION (git REVISION)"
inline std::string LocklabVersionLine() {
  return std::string("locklab ") + LocklabVersion() + " (git " + LocklabRevision() + ")";
}

}  // namespace locklab
