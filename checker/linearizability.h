// Linearizability: is there a total order of a history's operations, consistent with real
// time, that a sequential model accepts? (docs/design.md 3.3.)
//
// CheckLinearizability() takes a History (native jsonl, or what the EDN / Porcupine-etcd
// readers in history_formats.h produce), keeps only the events whose `f` belongs to the
// model (acquire/release/renew for the mutex models; read/write for `register`;
// read/write/cas for `cas-register`), pairs each invocation with its process's completion and
// checks every key separately (P-compositionality: locks and registers on different keys are
// independent objects). Jepsen's rules: `ok` happened, `fail` certainly did not happen
// (dropped), `info` or no completion at all = unknown, the operation may take effect at any
// time after its invocation or never. Nemesis events are ignored; the harness process is an
// ordinary process. Times are compared as given (ties count as concurrent).
// The search is a sweep over each key's calls and returns in time order that keeps every
// configuration a linearization of the prefix can be in (docs/checker.md), single-threaded,
// and bounded by a time and a memory budget: running out of either gives kUnknown, never a
// guess. Where to read it: lin_model.h (operations, sequential models), lin_builder.h (events
// to operations), lin_config_set.h (configurations, dominance), lin_sweep.h (the search and its
// rules for unknown outcomes); this file's .cc joins them and words the results. An invalid history comes with
// a counterexample: the shortest prefix that cannot be linearized, the operations concurrent
// at its end, and the model states the search reached there.
//
// Thread safety: every function is pure; concurrent calls on different (or the same const)
// histories are safe. Result objects are thread-compatible values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "checker/history.h"

namespace locklab::checker {

// kMutex: acquire needs a free lock, release/renew need a held one (anyone may release).
// kOwnerMutex: release/renew only by the holder's token (acquire ok value {"token":..}).
// kFencedMutex: kOwnerMutex, and every acquire's fence ({"fence":N}) exceeds all earlier ones.
// kRegister: read/write of one value, starting at nil (read value null = nil).
// kCasRegister: kRegister plus cas [expected new].
enum class Model { kMutex, kOwnerMutex, kFencedMutex, kRegister, kCasRegister };

// Names: "mutex", "owner-mutex", "fenced-mutex", "register", "cas-register".
bool ParseModel(const std::string& name, Model* out);
const char* ModelName(Model m);
// One line per model, for `locklab list`.
const char* ModelDescription(Model m);
inline constexpr Model kAllModels[] = {Model::kMutex, Model::kOwnerMutex, Model::kFencedMutex,
                                       Model::kRegister, Model::kCasRegister};

enum class LinVerdict { kValid, kInvalid, kUnknown };
const char* LinVerdictName(LinVerdict v);  // "valid" | "invalid" | "unknown"

struct LinearizabilityOptions {
  std::chrono::milliseconds time_budget{10000};
  size_t memory_budget_bytes = size_t(1) << 30;
  // Porcupine's reading of Jepsen etcd logs: a `fail` cas ran and observed a value other
  // than its expected one (instead of "did not happen"). Set by the porcupine-etcd reader.
  bool cas_fail_is_observation = false;
  // The depth-first probe (docs/checker.md, "Wide windows"): tried from the last quiescent
  // point once one return's closure passes this many configurations; 0 tries it first,
  // kNeverProbe never (the tests compare all three).
  size_t probe_after_configs = 1024;
};
inline constexpr size_t kNeverProbe = SIZE_MAX;

// One operation as the checker saw it (invocation + completion).
struct LinOperation {
  int64_t process = 0;
  std::string f;
  std::string key;
  nlohmann::json input;          // invocation value
  nlohmann::json output;         // completion value (null when unknown)
  std::string outcome;           // "ok" | "fail" (observed, cas only) | "unknown"
  int64_t invoke_index = -1;     // Event::index of the invocation
  int64_t complete_index = -1;   // Event::index of the completion, -1 when none/unknown
  int invoke_line = 0;
  int complete_line = 0;
  int64_t invoke_ns = 0;         // the invocation's time_ns (the history's clock)
  int64_t complete_ns = -1;      // the completion's, -1 when none/unknown
  std::string ToString() const;  // "p3 cas [4 0] -> fail (lines 12-15)"
  nlohmann::ordered_json ToJson() const;
  // {"process","f","key","invoke_ns","complete_ns","outcome","value"}: the shape the report
  // draws (value: the completion's when it has one, else the invocation's).
  nlohmann::ordered_json ToDrawJson() const;
};

struct LinCounterexample {
  std::string key;
  // The shortest prefix (events in time order, of all keys) that cannot be linearized ends
  // with the completion of `failed`: no order of the operations before it admits it.
  LinOperation failed;
  int64_t prefix_events = 0;                 // events of this key's partition in the prefix
  std::vector<LinOperation> concurrent;      // operations open at the end of the prefix
  std::vector<std::string> states_tried;     // distinct model states found there (capped)
  std::vector<LinOperation> longest_linearization_tail;  // last steps of one deepest attempt
  // Why `failed` cannot be placed, for readers: the operations of this key invoked before
  // its completion (the prefix), the operations whose effect stands in its way (the ones
  // that put the lock or register into each state the search reached there: the acquire
  // holding the lock, the release that freed it, the write of the value read instead), and
  // one sentence saying it with times from the history's first event ("client 1's release
  // at 2.23 s succeeded 0.54 s after its lease expired and deleted client 3's key").
  int64_t prefix_ops = 0;
  std::vector<LinOperation> conflicts;
  std::string sentence;
  // linearizability.unplaceable in results.json and `check --json`:
  // {"op":{..},"prefix_ops":N,"conflicts":[{..}],"sentence":".."} (LinOperation::ToDrawJson).
  nlohmann::ordered_json UnplaceableJson() const;
};

struct LinearizabilityResult {
  LinVerdict verdict = LinVerdict::kValid;
  Model model = Model::kRegister;
  size_t operations = 0;  // operations checked (after dropping `fail`s and unknown reads)
  // Invocations of the model's operations in the history, fails included: with none, the
  // history checked nothing; with some but no `operations`, none of them took effect and
  // the history is valid vacuously (VacuousReason).
  size_t invocations = 0;
  size_t keys = 0;
  std::string reason;     // why kUnknown (which budget, which key)
  std::optional<LinCounterexample> counterexample;  // when kInvalid
  uint64_t states_explored = 0;  // configurations the search created, all keys
  size_t dropped_unknown = 0;    // unknown-outcome ops shown not to matter (rules R1, R3)
  size_t peak_memory_bytes = 0;  // largest search working set of any key
  double elapsed_ms = 0;

  nlohmann::ordered_json ToJson() const;
  std::string ToText() const;  // several lines, ending with '\n'
};

// Never fails: a malformed operation (e.g. a read of a non-integer) makes the verdict
// kUnknown with `reason` naming the line, and sets *bad_input (when given) to the BadInput
// Status the overload below returns; otherwise *bad_input is left untouched.
LinearizabilityResult CheckLinearizability(const History& h, Model m,
                                           const LinearizabilityOptions& o = {},
                                           Status* bad_input = nullptr);
// Same, but malformed input gives a BadInput Status ("LINE: field 'value': ...", prefixed
// with `name` + ":" when `name` is not empty) and leaves *out untouched.
Status CheckLinearizability(const History& h, Model m, const LinearizabilityOptions& o,
                            const std::string& name, LinearizabilityResult* out);

// The reason a valid result with invocations but no operation carries: "vacuously: all N
// cas-register operations failed (none took effect)". Empty when it does not apply.
std::string VacuousReason(const LinearizabilityResult& r);

// True when `f` is an operation of model `m`.
bool ModelHasFunction(Model m, const std::string& f);

}  // namespace locklab::checker
