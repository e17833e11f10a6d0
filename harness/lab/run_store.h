// The run store (docs/design.md 3.4): runs/<scenario>/<YYYYmmddTHHMMSS>-<seed>/ with
// scenario.toml, history.jsonl, results.json, junit.xml, lab.log, nodes/, clients/, and
// runs/latest pointing at the newest run. A run directory is created before anything can
// fail, and results.json is written on every exit path, so no run is ever lost.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace locklab::harness {

// Errors (a path through a file, a read-only or full file system) are Status::Io, exit 70,
// naming the directory.
Status MakeDirs(const std::string& path);
// Creates a fresh run directory for `scenario` and seed, and points <out>/latest at it.
Status CreateRunDir(const std::string& out_dir, const std::string& scenario, uint64_t seed,
                    std::string* run_dir);
// Writes `content` to `path` whole or not at all (PATH.tmp, renamed). A failed write, flush
// or close (ENOSPC, EIO, EROFS) is Status::Io "write PATH: <errno text>" (exit 70), and
// leaves no PATH.tmp behind.
Status WriteFile(const std::string& path, const std::string& content);
// The whole file, or "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);
// junit.xml with one testcase per check in results["checks"] ({name, ok, message}): a check
// not ok is a <failure> with its message, and "detail" (optional) as the failure's text; a
// check with "skipped": true is a <skipped> with its message instead. The suite counts both.
std::string JunitXml(const std::string& suite, const nlohmann::ordered_json& checks,
                     double seconds);
std::string XmlEscape(const std::string& s);

}  // namespace locklab::harness
