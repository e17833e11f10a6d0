// Knobs: typed reads of LockConfig::knobs (strings from the CLI, scenario files and
// `--knob NAME=VALUE`), each falling back to the documented default listed in LockInfo.
//
// Every error is a Status::Usage naming the lock, the knob and the bad text, so a typo in a
// scenario file becomes a one-line message rather than a silently different experiment.
// Thread-compatible; used only while a lock is being built.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace locklab::locks {

class KnobReader {
 public:
  KnobReader(std::string lock_id, const std::map<std::string, std::string>& knobs)
      : lock_id_(std::move(lock_id)), knobs_(knobs) {}

  // Each leaves *out unchanged (the caller's default) when the knob is absent, and returns
  // the first error seen (sticky): read every knob, then check status() once.
  void Int(const std::string& name, int64_t min, int64_t max, int64_t* out);
  void Duration(const std::string& name, Millis min, Millis max, Millis* out);
  void Double(const std::string& name, double min, double max, double* out);
  void Bool(const std::string& name, bool* out);
  // One of `choices`; *out is set to the chosen string.
  void Choice(const std::string& name, const std::vector<std::string>& choices, std::string* out);

  const Status& status() const { return status_; }

 private:
  const std::string* Find(const std::string& name) const;
  // Records the first refusal: "lock 'ID': knob 'NAME': WHAT".
  void Bad(const std::string& name, const std::string& what);
  std::string lock_id_;
  const std::map<std::string, std::string>& knobs_;
  Status status_ = Status::Ok();
};

}  // namespace locklab::locks
